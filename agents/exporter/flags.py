"""Command-line flags of ``mysql-snmp exporter``, spelled as mysqld_exporter spells them.

A systemd unit or container written for mysqld_exporter keeps its arguments:
``--web.listen-address=:9104``, ``--config.my-cnf=...``, ``--collect.binlog_size``,
``--no-collect.slave_status``, ``--collect.heartbeat.utc``, ``--web.systemd-socket`` (kingpin's boolean
flags take a ``--no-`` prefix and an optional ``=true|false``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..config.settings import PASSWORD_RULE
from .collectors import COLLECTORS, CompatOptions
from .probe_access import ProbeAllowList
from .server_regexp import regexp_problem
from ..sources.options import SourceOptions
from .log_format import FORMATS, LEVELS
from .connection_limit import DEFAULTS as LIMITS, ConnectionLimits

DEFAULT_LISTEN = ":9104"


def parse_bool(text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (true/false)")


def add_bool_flag(parser: argparse.ArgumentParser, name: str, default: bool, help_text: str) -> None:
    """``--name``, ``--name=false`` and ``--no-name``, all into one destination."""
    dest = name.replace(".", "_").replace("-", "_")
    state = "on" if default else "off"
    help_text = f"{help_text} (default {state}" + (f"; --no-{name} turns it off)" if default else ")")
    parser.add_argument(f"--{name}", dest=dest, nargs="?", const=True, default=default, type=parse_bool,
                        metavar="BOOL", help=help_text)
    parser.add_argument(f"--no-{name}", dest=dest, action="store_false", help=argparse.SUPPRESS)


def probe_patterns(text: str) -> str:
    """argparse type: a bad pattern is a usage error at start-up, with the flag's own message."""
    try:
        ProbeAllowList.from_flags([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def server_regexp(text: str) -> str:
    """argparse type: a regular expression no server would accept stops the start, naming the flag."""
    problem = regexp_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression: {problem}")
    return text


def non_negative_int(text: str) -> int:
    """argparse type: a count or a number of seconds (a negative one would fail every scrape's SQL)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; give 0 or more")
    return number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    logs = parser.add_argument_group("logging")
    logs.add_argument("--log.level", dest="exporter_log_level", choices=tuple(LEVELS), default=None,
                      help="only log messages of this severity or above (default info; overrides mysql-snmp "
                           "--log-level)")
    logs.add_argument("--log.format", dest="exporter_log_format", choices=FORMATS, default="logfmt",
                      help="output format of log messages (default logfmt)")
    web = parser.add_argument_group("web")
    web.add_argument("--web.listen-address", dest="web_listen_address", action="append", metavar="[HOST]:PORT",
                     help=f"address to serve on; repeat for several (default {DEFAULT_LISTEN}, all interfaces)")
    add_bool_flag(web, "web.systemd-socket", False,
                  "serve on the listening sockets systemd passes (socket activation: a .socket unit with "
                  "ListenStream=, started through it) instead of binding --web.listen-address; TLS and basic "
                  "auth of --web.config.file apply to them alike")
    web.add_argument("--web.telemetry-path", dest="web_telemetry_path", default="/metrics", metavar="PATH",
                     help="path of the metrics of the configured server (default /metrics)")
    web.add_argument("--web.config.file", dest="web_config_file", metavar="FILE",
                     help="exporter-toolkit web config: TLS (tls_server_config) and basic auth (basic_auth_users) "
                          "(default: none, plain HTTP open to anyone who can reach the port)")
    web.add_argument("--web.max-connections", dest="web_max_connections", type=int,
                     default=LIMITS.max_connections, metavar="N",
                     help=f"HTTP connections served at once, one thread each (default {LIMITS.max_connections}); "
                          "over it the longest-idle keep-alive connection is closed, else a new one waits up "
                          "to a second and gets 503")
    web.add_argument("--web.idle-timeout", dest="web_idle_timeout", type=float, default=LIMITS.idle_timeout,
                     metavar="SECONDS", help="a connection that sends no request this long is closed "
                                             f"(default {LIMITS.idle_timeout:g})")
    web.add_argument("--web.read-header-timeout", dest="web_read_header_timeout", type=float,
                     default=LIMITS.header_timeout, metavar="SECONDS",
                     help="a request's line and headers must arrive within this time of its first byte "
                          f"(default {LIMITS.header_timeout:g})")
    web.add_argument("--web.write-timeout", dest="web_write_timeout", type=float, default=LIMITS.write_timeout,
                     metavar="SECONDS", help="a response not taken by the client within this time closes "
                                             f"the connection (default {LIMITS.write_timeout:g})")
    web.add_argument("--timeout-offset", dest="timeout_offset", type=float, default=0.25, metavar="SECONDS",
                     help="subtracted from Prometheus' X-Prometheus-Scrape-Timeout-Seconds to leave time "
                          "for the answer (default 0.25)")

    mysql = parser.add_argument_group("MySQL connection", PASSWORD_RULE)
    mysql.add_argument("--config.my-cnf", dest="config_my_cnf", default=None, metavar="FILE",
                       help="option file with [client] credentials, and [client.NAME] sections for "
                            "/probe?auth_module=client.NAME (default ~/.my.cnf; without this flag the "
                            "DATA_SOURCE_NAME environment variable, when set, names the /metrics server)")
    mysql.add_argument("--exporter.probe-allowed-targets", dest="probe_allowed_targets", action="append",
                       type=probe_patterns,
                       metavar="[client.NAME=]PATTERN",
                       help="/probe targets that may receive credentials besides the address each auth module's "
                            "own section names (the default, nothing else): shell patterns such as "
                            "'db-*.example.com:3306' or 'client.replicas=10.0.3.*:3306'; repeat or separate "
                            "with commas")
    mysql.add_argument("--mysqld.address", dest="mysqld_address", metavar="HOST:PORT|unix:///PATH",
                       help="server of /metrics when the option file names none (default localhost:3306)")
    mysql.add_argument("--mysqld.username", dest="mysqld_username", metavar="USER",
                       help="user when the option file names none (default: the login name running the "
                            "exporter, as for the mysql client); the password comes from the file "
                            "or MYSQLD_EXPORTER_PASSWORD")
    mysql.add_argument("--exporter.lock_wait_timeout", dest="lock_wait_timeout", type=non_negative_int, default=2,
                       metavar="SECONDS", help="session lock_wait_timeout, so a scrape never holds up DDL (default 2)")
    add_bool_flag(mysql, "exporter.log_slow_filter", False,
                  "keep the scrapes out of the slow query log (session log_slow_filter; MariaDB and "
                  "Percona Server only, no effect on Oracle MySQL)")
    mysql.add_argument("--exporter.max-open-conns", dest="max_open_conns", type=int, default=2, metavar="N",
                       help="connections per target (default 2: the persistent one that runs every statement, "
                            "and a short-lived one opened only to KILL QUERY a statement still running at the "
                            "scrape deadline; 1 disables that)")
    add_bool_flag(mysql, "tls.insecure-skip-verify", False, "do not verify the MySQL server certificate")

    cost = parser.add_argument_group("cost and safety")
    cost.add_argument("--exporter.min-interval", dest="min_interval", type=float, default=0.0, metavar="SECONDS",
                      help="serve the last collection to scrapes closer together than this instead of asking "
                           "MySQL again (default 0: every scrape collects; concurrent scrapes always share one)")
    cost.add_argument("--exporter.collection-workers", dest="collection_workers", type=int, default=0,
                      metavar="N", help="threads that run the /probe targets' collections, shared by all of them, "
                                        "one collection at a time per target (default: --web.max-connections; "
                                        "/metrics has a thread of its own)")
    cost.add_argument("--exporter.scrape-timeout", dest="scrape_timeout", type=float, default=10.0,
                      metavar="SECONDS", help="deadline of a collection when Prometheus sends no "
                                              "X-Prometheus-Scrape-Timeout-Seconds (default 10)")
    cost.add_argument("--exporter.collector-timeout", dest="collector_timeout", type=float, default=5.0,
                      metavar="SECONDS", help="longest one statement may run before the server aborts it "
                                              "(default 5)")

    cost.add_argument("--exporter.leak-config", dest="leak_config", metavar="FILE",
                      help="YAML file whose leak: section configures the memory leak detector "
                           "(mysql_leak_*; default settings without it)")
    cost.add_argument("--exporter.leak-state-file", dest="leak_state_file", metavar="FILE",
                      help="file keeping the leak detector's history across restarts (default: the leak: "
                           "section's state_file, else /var/lib/mysql-snmp/leak-state.exporter.<target>.json; "
                           "the AgentX agent keeps its own)")
    add_bool_flag(cost, "exporter.leak-detector", True, "run the memory leak detector on the /metrics target")

    collectors = parser.add_argument_group("collectors")
    for collector in COLLECTORS:
        add_bool_flag(collectors, f"collect.{collector.name}", collector.default, collector.help)
    collectors.add_argument("--collect.heartbeat.database", dest="heartbeat_database", default="heartbeat",
                            metavar="DB", help="database of the pt-heartbeat table (default heartbeat)")
    collectors.add_argument("--collect.heartbeat.table", dest="heartbeat_table", default="heartbeat",
                            metavar="TABLE", help="pt-heartbeat table (default heartbeat)")
    add_bool_flag(collectors, "collect.heartbeat.utc", False,
                  "compare heartbeat timestamps with UTC (pt-heartbeat --utc)")
    collectors.add_argument("--collect.info_schema.processlist.min_time", dest="processlist_min_time",
                            type=non_negative_int,
                            default=0, metavar="SECONDS",
                            help="count only threads in their state for at least this long (default 0)")
    add_bool_flag(collectors, "collect.info_schema.processlist.processes_by_user", True,
                  "number of processes by user")
    add_bool_flag(collectors, "collect.info_schema.processlist.processes_by_host", True,
                  "number of processes by client host")
    defaults = SourceOptions()
    collectors.add_argument("--collect.perf_schema.eventsstatements.limit", dest="events_statements_limit",
                            type=non_negative_int, default=defaults.events_statements_limit, metavar="N",
                            help="statement digests served, the ones with the most total time "
                                 f"(default {defaults.events_statements_limit})")
    collectors.add_argument("--collect.perf_schema.eventsstatements.timelimit", dest="events_statements_timelimit",
                            type=non_negative_int, default=defaults.events_statements_timelimit, metavar="SECONDS",
                            help="only digests seen in this many last seconds "
                                 f"(default {defaults.events_statements_timelimit})")
    collectors.add_argument("--collect.perf_schema.eventsstatements.digest_text_limit",
                            dest="events_statements_digest_text_limit", type=non_negative_int,
                            default=defaults.events_statements_digest_text_limit, metavar="CHARS",
                            help="digest_text label cut to this length "
                                 f"(default {defaults.events_statements_digest_text_limit})")
    collectors.add_argument("--collect.perf_schema.eventsstatements.exclude_schemas",
                            dest="events_statements_exclude_schemas", action="append", default=[], metavar="SCHEMA",
                            help="schema left out besides mysql, performance_schema, information_schema; repeatable")
    collectors.add_argument("--collect.info_schema.tables.databases", dest="tables_databases",
                            default=defaults.tables_databases, metavar="LIST",
                            help="comma-separated schemas, or * for all but the system ones (default *)")
    collectors.add_argument("--collect.perf_schema.file_instances.filter", dest="file_instances_filter",
                            default=defaults.file_instances_filter, metavar="REGEXP", type=server_regexp,
                            help="only files whose name matches this REGEXP, run by the server (default .*; "
                                 "one no server accepts stops the start)")
    collectors.add_argument("--collect.perf_schema.file_instances.remove_prefix",
                            dest="file_instances_remove_prefix", default=defaults.file_instances_remove_prefix,
                            metavar="PREFIX", help=f"cut from file_name labels (default {defaults.file_instances_remove_prefix})")
    add_bool_flag(collectors, "collect.mysql.user.privileges", defaults.user_privileges,
                  "also each account's global privileges (mysql_mysql_*_priv)")
    collectors.add_argument("--collect.perf_schema.memory_events.remove_prefix", dest="memory_events_remove_prefix",
                            default="memory/", metavar="PREFIX",
                            help="prefix removed from event_name labels (default memory/)")


@dataclass(frozen=True)
class ExporterConfig:
    listen_addresses: tuple[str, ...]
    systemd_socket: bool
    telemetry_path: str
    web_config_file: str | None
    timeout_offset: float
    limits: ConnectionLimits
    my_cnf: str
    my_cnf_given: bool  # --config.my-cnf on the command line (else DATA_SOURCE_NAME may name the server)
    mysqld_address: str | None
    mysqld_username: str | None
    lock_wait_timeout: int
    log_slow_filter: bool
    max_open_conns: int
    tls_insecure_skip_verify: bool
    min_interval: float
    leak_detector: bool
    leak_config: str | None
    leak_state_file: str | None
    probe_allowed: ProbeAllowList
    scrape_timeout: float
    collector_timeout: float
    enabled: dict[str, bool]
    heartbeat_database: str
    heartbeat_table: str
    heartbeat_utc: bool
    compat: CompatOptions
    source_options: SourceOptions = SourceOptions()
    collection_workers: int = 0  # /probe collection threads; 0: as many as limits.max_connections

    @property
    def probe_workers(self) -> int:
        return self.collection_workers if self.collection_workers > 0 else self.limits.max_connections


def connection_limits(args: argparse.Namespace) -> ConnectionLimits:
    return ConnectionLimits(max(1, args.web_max_connections), args.web_idle_timeout,
                            args.web_read_header_timeout, args.web_write_timeout)


def config_from_args(args: argparse.Namespace) -> ExporterConfig:
    enabled = {c.name: bool(getattr(args, f"collect_{c.name}".replace(".", "_"))) for c in COLLECTORS}
    return ExporterConfig(
        listen_addresses=tuple(args.web_listen_address or (DEFAULT_LISTEN,)),
        systemd_socket=args.web_systemd_socket,
        telemetry_path=args.web_telemetry_path,
        web_config_file=args.web_config_file or None,  # mysqld_exporter's default "" means none too
        timeout_offset=args.timeout_offset,
        limits=connection_limits(args),
        my_cnf=args.config_my_cnf or "~/.my.cnf",
        my_cnf_given=args.config_my_cnf is not None,
        mysqld_address=args.mysqld_address,
        mysqld_username=args.mysqld_username,
        lock_wait_timeout=args.lock_wait_timeout,
        log_slow_filter=args.exporter_log_slow_filter,
        max_open_conns=max(1, args.max_open_conns),
        tls_insecure_skip_verify=args.tls_insecure_skip_verify,
        min_interval=max(0.0, args.min_interval),
        collection_workers=max(0, args.collection_workers),
        leak_detector=args.exporter_leak_detector,
        leak_config=args.leak_config,
        leak_state_file=args.leak_state_file,
        probe_allowed=ProbeAllowList.from_flags(args.probe_allowed_targets),
        scrape_timeout=args.scrape_timeout,
        collector_timeout=args.collector_timeout,
        enabled=enabled,
        heartbeat_database=args.heartbeat_database,
        heartbeat_table=args.heartbeat_table,
        heartbeat_utc=args.collect_heartbeat_utc,
        compat=CompatOptions(
            processlist_min_time=args.processlist_min_time,
            processlist_by_user=args.collect_info_schema_processlist_processes_by_user,
            processlist_by_host=args.collect_info_schema_processlist_processes_by_host,
            memory_events_remove_prefix=args.memory_events_remove_prefix,
        ),
        source_options=SourceOptions(
            events_statements_limit=args.events_statements_limit,
            events_statements_timelimit=args.events_statements_timelimit,
            events_statements_digest_text_limit=args.events_statements_digest_text_limit,
            events_statements_exclude_schemas=tuple(args.events_statements_exclude_schemas),
            tables_databases=args.tables_databases,
            file_instances_filter=args.file_instances_filter,
            file_instances_remove_prefix=args.file_instances_remove_prefix,
            user_privileges=args.collect_mysql_user_privileges,
            processlist_min_time=args.processlist_min_time,
        ),
    )


def parse_listen_address(address: str) -> tuple[str, int]:
    """``:9104`` / ``127.0.0.1:9104`` / ``[::1]:9104`` -> (host, port); empty host = all interfaces."""
    host, sep, port = address.rpartition(":")
    if not sep:
        raise ValueError(f"listen address {address!r} needs a port (e.g. :9104)")
    host = host.strip("[]")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"listen address {address!r}: {port!r} is not a port") from None
    if not 0 <= number < 65536:
        raise ValueError(f"listen address {address!r}: port out of range")
    return host, number
