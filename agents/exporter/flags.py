"""Command-line flags of ``mysql-snmp exporter``, spelled as mysqld_exporter spells them.

A systemd unit or container written for mysqld_exporter keeps its arguments:
``--web.listen-address=:9104``, ``--config.my-cnf=...``, ``--collect.binlog_size``,
``--no-collect.slave_status``, ``--collect.heartbeat.utc``, ``--web.systemd-socket`` (kingpin's boolean
flags take a ``--no-`` prefix and an optional ``=true|false``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from agents.connection import PASSWORD_RULE
from agents.exporter.collectors import COLLECTORS, UNSUPPORTED_COLLECTORS, UNSUPPORTED_OPTIONS, CompatOptions

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
    if help_text != argparse.SUPPRESS:
        help_text = f"{help_text} (default {state}; --no-{name} turns it off)"
    parser.add_argument(f"--{name}", dest=dest, nargs="?", const=True, default=default, type=parse_bool,
                        metavar="BOOL", help=help_text)
    parser.add_argument(f"--no-{name}", dest=dest, action="store_false", help=argparse.SUPPRESS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
                     help="exporter-toolkit web config: TLS (tls_server_config) and basic auth (basic_auth_users)")
    web.add_argument("--timeout-offset", dest="timeout_offset", type=float, default=0.25, metavar="SECONDS",
                     help="subtracted from Prometheus' X-Prometheus-Scrape-Timeout-Seconds to leave time "
                          "for the answer (default 0.25)")

    mysql = parser.add_argument_group("MySQL connection", PASSWORD_RULE)
    mysql.add_argument("--config.my-cnf", dest="config_my_cnf", default="~/.my.cnf", metavar="FILE",
                       help="option file with [client] credentials, and [client.NAME] sections for "
                            "/probe?auth_module=client.NAME (default ~/.my.cnf)")
    mysql.add_argument("--mysqld.address", dest="mysqld_address", metavar="HOST:PORT|unix:///PATH",
                       help="server of /metrics when the option file names none (default localhost:3306)")
    mysql.add_argument("--mysqld.username", dest="mysqld_username", metavar="USER",
                       help="user when the option file names none; the password comes from the file "
                            "or MYSQLD_EXPORTER_PASSWORD")
    mysql.add_argument("--exporter.lock_wait_timeout", dest="lock_wait_timeout", type=int, default=2,
                       metavar="SECONDS", help="session lock_wait_timeout, so a scrape never holds up DDL (default 2)")
    mysql.add_argument("--exporter.log_slow_filter", dest="log_slow_filter", nargs="?", const=True, default=False,
                       type=parse_bool, metavar="BOOL", help="accepted for compatibility; has no effect here")
    mysql.add_argument("--exporter.max-open-conns", dest="max_open_conns", type=int, default=2, metavar="N",
                       help="connections per target (default 2: the persistent one that runs every statement, "
                            "and a short-lived one opened only to KILL QUERY a statement still running at the "
                            "scrape deadline; 1 disables that)")
    mysql.add_argument("--tls.insecure-skip-verify", dest="tls_insecure_skip_verify", nargs="?", const=True,
                       default=False, type=parse_bool, metavar="BOOL",
                       help="do not verify the MySQL server certificate")

    cost = parser.add_argument_group("cost and safety")
    cost.add_argument("--exporter.min-interval", dest="min_interval", type=float, default=0.0, metavar="SECONDS",
                      help="serve the last collection to scrapes closer together than this instead of asking "
                           "MySQL again (default 0: every scrape collects; concurrent scrapes always share one)")
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
    for name in UNSUPPORTED_COLLECTORS:
        add_bool_flag(collectors, f"collect.{name}", False, argparse.SUPPRESS)
    for name in UNSUPPORTED_OPTIONS:
        collectors.add_argument(f"--collect.{name}", dest=f"ignored_{name}", help=argparse.SUPPRESS)
    collectors.add_argument("--collect.heartbeat.database", dest="heartbeat_database", default="heartbeat",
                            metavar="DB", help="database of the pt-heartbeat table (default heartbeat)")
    collectors.add_argument("--collect.heartbeat.table", dest="heartbeat_table", default="heartbeat",
                            metavar="TABLE", help="pt-heartbeat table (default heartbeat)")
    add_bool_flag(collectors, "collect.heartbeat.utc", False,
                  "compare heartbeat timestamps with UTC (pt-heartbeat --utc)")
    collectors.add_argument("--collect.info_schema.processlist.min_time", dest="processlist_min_time", type=int,
                            default=0, metavar="SECONDS",
                            help="count only threads in their state for at least this long (default 0)")
    add_bool_flag(collectors, "collect.info_schema.processlist.processes_by_user", True,
                  "number of processes by user")
    add_bool_flag(collectors, "collect.info_schema.processlist.processes_by_host", True,
                  "number of processes by client host")
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
    my_cnf: str
    mysqld_address: str | None
    mysqld_username: str | None
    lock_wait_timeout: int
    max_open_conns: int
    tls_insecure_skip_verify: bool
    min_interval: float
    leak_detector: bool
    leak_config: str | None
    leak_state_file: str | None
    scrape_timeout: float
    collector_timeout: float
    enabled: dict[str, bool]
    heartbeat_database: str
    heartbeat_table: str
    heartbeat_utc: bool
    compat: CompatOptions


def ignored_flags(args: argparse.Namespace) -> list[str]:
    """mysqld_exporter flags given on the command line that this exporter does not implement."""
    flags = [f"--collect.{name}" for name in UNSUPPORTED_COLLECTORS
             if getattr(args, f"collect_{name}".replace(".", "_"), False)]
    flags += [f"--collect.{name}" for name in UNSUPPORTED_OPTIONS if getattr(args, f"ignored_{name}", None)]
    if args.log_slow_filter:
        flags.append("--exporter.log_slow_filter")
    return flags


def config_from_args(args: argparse.Namespace) -> ExporterConfig:
    enabled = {c.name: bool(getattr(args, f"collect_{c.name}".replace(".", "_"))) for c in COLLECTORS}
    return ExporterConfig(
        listen_addresses=tuple(args.web_listen_address or (DEFAULT_LISTEN,)),
        systemd_socket=args.web_systemd_socket,
        telemetry_path=args.web_telemetry_path,
        web_config_file=args.web_config_file,
        timeout_offset=args.timeout_offset,
        my_cnf=args.config_my_cnf,
        mysqld_address=args.mysqld_address,
        mysqld_username=args.mysqld_username,
        lock_wait_timeout=args.lock_wait_timeout,
        max_open_conns=max(1, args.max_open_conns),
        tls_insecure_skip_verify=args.tls_insecure_skip_verify,
        min_interval=max(0.0, args.min_interval),
        leak_detector=args.exporter_leak_detector,
        leak_config=args.leak_config,
        leak_state_file=args.leak_state_file,
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
