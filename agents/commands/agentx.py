"""``mysql-snmp agentx``: serve the catalog to Net-SNMP's snmpd as an AgentX subagent."""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import signal
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .collect import add_collection_arguments, collector_from_args, listed_sources
from .perl_agent_options import PidFile, add_perl_agent_options, apply_perl_agent_options
from ..config.environment_secrets import forget_environment_variable
from ..config.settings import PASSWORD_ENV, ConfigError, add_connection_arguments
from ..bounds.log_lines import install_log_guards

if TYPE_CHECKING:
    from ..agentx.refresher import ViewRefresher
    from ..agentx.session import AgentXSession
    from ..collection import Collector
    from ..leak.detector import LeakDetector

log = logging.getLogger(__name__)

# How long past --refresh the values on show may wait for the next collection: longer than a
# healthy collection takes (well under a second on a local server), short enough that a manager
# never reads "up" about a server that stopped answering.
DEFAULT_STALE_GRACE = 5.0

EPILOG = """\
snmpd needs 'master agentx' in snmpd.conf (and agentXSocket if not /var/agentx/master).
examples:
  mysql-snmp agentx --my-cnf /etc/mysql-snmp/my.cnf
  mysql-snmp agentx --agentx-socket tcp:127.0.0.1:705 --refresh 60
  mysql-snmp agentx --oid 1.3.6.1.4.1.20267.200.1      # where the original's 160 objects live
  snmpbulkwalk -v2c -c public localhost 1.3.6.1.4.1.20267.200

Requests are answered from the last collection (every --refresh seconds); when MySQL cannot
be reached its objects answer noSuchInstance while myAgentMysqlUp and myAgentLastError say why.
The memory leak detector fills myLeakTable and sends leakDetected / leakCleared through snmpd
(trap2sink / trapsess in snmpd.conf) on each state change; its history survives restarts in
--leak-state (default /var/lib/mysql-snmp/leak-state.agentx.<target>.json: the exporter keeps
its own, leak-state.exporter.<target>.json, so both can watch one server).
Exit status: 0 after SIGTERM/SIGINT, 2 for a broken configuration.
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "agentx",
        help="serve the metrics to snmpd as an AgentX subagent (RFC 2741)",
        description="Attach to Net-SNMP's snmpd as an AgentX subagent and serve the original "
        "mysql-snmp tree and the new MYSQL-SERVER-MIB objects from a background collection.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,  # -h is the MySQL host for the Perl mysql-snmp's command lines
    )
    add_connection_arguments(parser)
    add_collection_arguments(parser)
    group = parser.add_argument_group("AgentX")
    group.add_argument("--agentx-socket", default="/var/agentx/master", metavar="ADDRESS",
                       help="snmpd's AgentX socket: a Unix socket path or tcp:HOST:PORT (default: /var/agentx/master)")
    group.add_argument("--oid", metavar="OID",
                       help="root of the original mysql-snmp tree (default: the catalog's legacy root, "
                       "1.3.6.1.4.1.20267.200.1)")
    group.add_argument("--refresh", type=float, default=30.0, metavar="SECONDS",
                       help="seconds between two collections (default: 30)")
    group.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="a collection starts no new source after this many seconds (default: --refresh)")
    group.add_argument("--stale-grace", type=float, default=DEFAULT_STALE_GRACE, metavar="SECONDS",
                       help="values older than --refresh plus this, while the next collection has not answered, "
                       "are withdrawn and myAgentMysqlUp is 0 (default: %(default)g; keep it above "
                       "myAgentCollectionDurationSeconds)")
    group.add_argument("--ping-interval", type=float, default=15.0, metavar="SECONDS",
                       help="seconds between two AgentX Pings to snmpd (default: 15)")
    leak = parser.add_argument_group("memory leak detector")
    leak.add_argument("--leak-config", metavar="FILE",
                      help="YAML file whose leak: section configures the detector (default settings without it)")
    leak.add_argument("--leak-state", metavar="FILE",
                      help="file keeping the detector's history across restarts (default: the leak: section's "
                      "state_file, else /var/lib/mysql-snmp/leak-state.agentx.<target>.json)")
    leak.add_argument("--no-leak", dest="leak", action="store_false",
                      help="do not run the leak detector (myLeakTable stays empty, no leak notifications)")
    add_perl_agent_options(parser)
    parser.set_defaults(handler=run)


@dataclass
class Agent:
    """What ``run`` serves and then closes: the collector's connection and the leak history."""

    collector: Collector
    refresher: ViewRefresher
    session: AgentXSession
    leak_detector: LeakDetector | None = None

    def close(self) -> None:
        # After the refresher has stopped, so the last observation is in the saved history.
        try:
            if self.leak_detector is not None:
                self.leak_detector.close()
        finally:
            self.collector.close()


def build_agent(args, hooks=()) -> Agent:
    """The agent the flags describe; raises ConfigError/ValueError on bad flags.

    ``hooks`` run on each snapshot in the collection thread, after the leak detector's (so
    they see its values); a hook can notify through ``session.submit_notify``."""
    from ..agentx.refresher import ViewRefresher
    from ..agentx.session import AgentXSession, MasterAddress
    from ..agentx.view import TreeLayout
    from ..catalog import CatalogError, load_catalog, parse_oid

    catalog = load_catalog()
    for flag, seconds in (("--refresh", args.refresh), ("--timeout", args.timeout),
                          ("--stale-grace", args.stale_grace), ("--ping-interval", args.ping_interval)):
        # inf would freeze the values (or the keep-alive), 0 or nan spin the loop, <0 skip every source.
        if seconds is not None and not 0 < seconds < math.inf:
            raise ConfigError(f"{flag} must be a positive number of seconds, not {seconds:g}")
    try:
        legacy_root = parse_oid(args.oid) if args.oid else catalog.legacy_root
    except CatalogError as exc:
        raise ConfigError(f"--oid: {exc}") from None
    new_root = catalog.new_root
    if legacy_root[: len(new_root)] == new_root or new_root[: len(legacy_root)] == legacy_root:
        raise ConfigError(f"--oid {args.oid} overlaps the new tree at {'.'.join(map(str, new_root))}")
    address = MasterAddress.parse(args.agentx_socket)
    collector = collector_from_args(args)
    # The agent connects at most once per collection (twice when a connection is lost midway):
    # the refresh interval is its backoff, and any other would only delay the first collection
    # after the server is back.
    collector.connection.backoff_max = 0.0
    # A denied source is first retried at the next collection, then less and less often.
    collector.disabled_retry_seconds = min(collector.disabled_retry_seconds, args.refresh)
    timeout = args.timeout if args.timeout is not None else args.refresh

    def collect():
        return collector.collect(deadline=time.monotonic() + timeout)

    refresher = ViewRefresher(collect, TreeLayout.from_catalog(catalog, legacy_root), args.refresh,
                              collector.settings.target, stale_grace=args.stale_grace,
                              abort_collection=collector.abort)
    session = AgentXSession(address, refresher.current_view, [legacy_root, new_root],
                            agent_id=legacy_root[:-1], ping_interval=args.ping_interval)
    from ..agentx.state_notifications import state_notification_hook

    refresher.published.append(state_notification_hook(session, catalog))
    detector = None
    if args.leak:
        from ..leak.notifications import leak_notification_hooks
        from ..leak.setup import build_leak_detector, describe_watched

        try:
            detector = build_leak_detector(collector.settings.target, args.leak_config, args.leak_state, agent="agentx",
                                           live=True)
        except ValueError:
            collector.close()
            raise
        log.info("leak detector watching %s", describe_watched(detector))
        observe, notify = leak_notification_hooks(detector, session, catalog)
        refresher.hooks.append(observe)
        refresher.published.append(notify)
    refresher.hooks.extend(hooks)
    return Agent(collector, refresher, session, detector)


async def serve(refresher, session) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def stop_now() -> None:
        stop.set()
        refresher.abort_collection()  # a collection reading a never-ending answer ends now, not at its deadline

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop_now)
    loop.add_signal_handler(signal.SIGHUP, log_restart_needed)
    log.info("serving %s to the AgentX master at %s", refresher.target, session.address)
    await asyncio.gather(refresher.run(stop), session.run(stop))


def log_restart_needed() -> None:
    # SIGHUP's default action would end the agent; its settings are read once, at start.
    log.warning("SIGHUP: the configuration is read only at start; restart the agent to apply changes "
                "(systemctl restart mysql-snmp-agentx)")


def run(args) -> int:
    if listed_sources(args):
        return 0
    try:
        from ..sources import default_source_names

        apply_perl_agent_options(args, default_source_names())
        agent = build_agent(args)
    except (ConfigError, ValueError) as exc:
        print(f"mysql-snmp agentx: {exc}", file=sys.stderr)
        return 2
    # Read into the connection settings: neither a child nor /proc/PID/environ shows the password now.
    forget_environment_variable(PASSWORD_ENV)
    try:
        with PidFile(args.perl_pid_file):
            asyncio.run(serve(agent.refresher, agent.session))
    finally:
        agent.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m mysql_snmp.agents.commands.agentx``: this command alone, without the other subcommands."""
    parser = argparse.ArgumentParser(prog="mysql-snmp")
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["agentx", *(sys.argv[1:] if argv is None else argv)])
    install_log_guards()
    logging.basicConfig(level=getattr(logging, args.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
