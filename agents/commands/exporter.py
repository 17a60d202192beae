"""``mysql-snmp exporter``: serve Prometheus metrics, a drop-in for mysqld_exporter."""

from __future__ import annotations

import argparse
import logging
import math
import signal
import threading

log = logging.getLogger(__name__)

EPILOG = """\
examples:
  mysql-snmp exporter --config.my-cnf /etc/mysql-snmp/my.cnf --web.listen-address 127.0.0.1:9104
  curl -s http://127.0.0.1:9104/metrics | grep '^mysql_up'
  curl -s 'http://127.0.0.1:9104/metrics?collect[]=global_status&collect[]=slave_status'   # some collectors
  curl -s 'http://127.0.0.1:9104/probe?target=db2:3306&auth_module=client.replicas'      # another server
  mysql-snmp exporter --collect.info_schema.tables --no-collect.host --web.config.file /etc/mysql-snmp/web.yml

The password comes from the option file or MYSQLD_EXPORTER_PASSWORD, never from a flag; /probe
logs in only to the address its [client.NAME] section names (widen with
--exporter.probe-allowed-targets).  A collect[] name that selects no collector is logged once and
counted in mysql_exporter_collect_params_ignored_total.  A bad flag or value stops the start
with one line naming it.  Exit status: 0 after SIGTERM/SIGINT, 1 when the address cannot be
bound, 2 for a broken configuration.
"""


# Words that end the command at parsing: argparse prints and exits, nothing runs.
_PARSING_ONLY = frozenset({"-h", "--help", "--version"})


def before_parser(argv: list[str]) -> None:
    """Decode the catalog before the exporter's modules are imported: the decoded document's
    objects, freed once parsed, leave room the imports then fill instead of growing the heap
    (0.3-0.5 MB less RSS, at start and after 100 scrapes; decoded after them, at the start of
    run(), it costs 0.3-0.4 MB more).  Not when the command line only asks for help or the
    version: that needs no catalog.  A broken catalog is reported by run(), which loads it again."""
    from ..exporter.builtin_hashes import use_builtin_hashes

    use_builtin_hashes()  # before anything imports hashlib (the catalog's digest, pymysql)
    if not _PARSING_ONLY.isdisjoint(argv):
        return
    from ..catalog import CatalogError, load_exporter_catalog

    try:
        load_exporter_catalog()
    except CatalogError:
        pass


def register(subparsers) -> None:
    from ..mysql.tls_on_demand import without_openssl

    with without_openssl():  # the flags import pymysql: without OpenSSL, as run() imports the rest
        from ..exporter.flags import add_arguments

    parser = subparsers.add_parser(
        "exporter",
        help="serve Prometheus metrics (/metrics, /probe), compatible with mysqld_exporter",
        # argparse's own usage lists all sixty flags, and repeats them above every bad-value error.
        usage=("%(prog)s [--web.listen-address [HOST]:PORT] [--config.my-cnf FILE] "
               "[--collect.NAME[=BOOL] | --no-collect.NAME] [FLAG ...]"),
        description=(
            "Serve /metrics from the same collection code as the SNMP agent. Flags, metric names,\n"
            "types and labels follow prometheus/mysqld_exporter, so its dashboards and alerts keep\n"
            "working; mysql_innodb_*, mysql_host_*, mysql_process_* and mysql_leak_* come on top."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def _check_durations(config) -> None:
    """nan or 0 would end every scrape at once (empty), inf would let one hang for ever."""
    from ..config.settings import ConfigError

    for flag, seconds, zero_allowed in (("--exporter.scrape-timeout", config.scrape_timeout, False),
                                        ("--exporter.collector-timeout", config.collector_timeout, False),
                                        ("--timeout-offset", config.timeout_offset, True),
                                        ("--web.idle-timeout", config.limits.idle_timeout, False),
                                        ("--web.read-header-timeout", config.limits.header_timeout, False),
                                        ("--web.write-timeout", config.limits.write_timeout, False)):
        if not (0 <= seconds if zero_allowed else 0 < seconds) or not math.isfinite(seconds):
            kind = "zero or a positive" if zero_allowed else "a positive"
            raise ConfigError(f"{flag} must be {kind} number of seconds, not {seconds:g}")


def _configure_logging(args) -> None:
    """--log.level / --log.format; without --log.level, mysql-snmp's own --log-level."""
    from ..exporter.log_format import configure_logging

    general = getattr(args, "log_level", None) or "info"  # mysql-snmp --log-level
    level = args.exporter_log_level or {"warning": "warn"}.get(general, general)
    configure_logging(level, args.exporter_log_format)


def run(args) -> int:
    _configure_logging(args)
    from ..exporter.allocator import freeze_startup_objects, tune_malloc

    tune_malloc()  # before the first thread starts
    from ..mysql.tls_on_demand import without_openssl

    # pymysql and the HTTP server load without ssl or cryptography: what needs them loads them then.
    with without_openssl():
        from ..catalog import CatalogError, load_exporter_catalog
        from ..config.environment_secrets import forget_environment_variable
        from ..config.settings import PASSWORD_ENV, ConfigError
        from ..exporter.app import ExporterApp
        from ..exporter.flags import config_from_args, parse_listen_address
        from ..exporter.server import serve
        from ..exporter.settings import DSN_VARIABLE
        from ..exporter.systemd_socket import SystemdSocketError, systemd_listeners
        from ..exporter.web_config import WebConfigError, load_web_config

    config = config_from_args(args)
    listeners = None
    try:
        if config.systemd_socket:
            # First: the LISTEN_* variables are unset on reading, whatever fails after.
            listeners = systemd_listeners()
            if args.web_listen_address:
                log.warning("--web.listen-address is ignored with --web.systemd-socket: "
                            "the .socket unit's ListenStream= says where to listen")
        _check_durations(config)
        if not config.systemd_socket:
            for address in config.listen_addresses:
                parse_listen_address(address)  # a typo is a start-up error, not a traceback from serve()
        web = load_web_config(config.web_config_file)
        catalog = load_exporter_catalog()
        app = ExporterApp(config, catalog, web)
        # The app keeps its own copy of the environment: neither a child nor /proc/PID/environ
        # shows the password (or the DSN that carries one) from here on.
        for secret in (PASSWORD_ENV, DSN_VARIABLE):
            forget_environment_variable(secret)
        app.default_target()  # a broken option file is an error now, not at the first scrape
    except (SystemdSocketError, WebConfigError, CatalogError, ConfigError, ValueError) as exc:
        log.error("%s", exc)
        for passed in listeners or ():
            passed.socket.close()
        return 2
    enabled = ", ".join(c.name for c in app.enabled)
    log.info("collectors enabled: %s", enabled)
    freeze_startup_objects()

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    # SIGHUP's default action would end the exporter; its settings are read once, at start.
    signal.signal(signal.SIGHUP, lambda *_: log.warning(
        "SIGHUP: the configuration is read only at start; restart the exporter to apply changes "
        "(systemctl restart mysql-snmp-exporter)"))
    try:
        serve(app, stop, listeners)
    except OSError as exc:  # port in use, permission denied
        if exc.filename:
            log.error("cannot listen on %s: %s", exc.filename, exc.strerror)
        else:
            log.error("cannot listen: %s", exc)
        return 1
    return 0
