"""``mysql-snmp collect``: one collection from a server, printed as a table or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ..config.settings import ConfigError, add_connection_arguments, settings_from_args
from ..snapshot import Labels, Snapshot

EPILOG = """\
examples:
  mysql-snmp collect                              # ~/.my.cnf [client], readable table
  mysql-snmp collect --my-cnf /etc/mysql-snmp/my.cnf --json
  mysql-snmp collect --host 127.0.0.1 --port 3307 --user monitor --sources global_status,replication
  MYSQLD_EXPORTER_PASSWORD=... mysql-snmp collect --host db1 --user monitor
  mysql-snmp collect --heartbeat percona.heartbeat --json | jq .values.heartbeat_lag_seconds

The exit status is 1 when the server cannot be reached (one line on stderr says why),
2 for a broken configuration, 0 otherwise (failed sources are listed, not fatal).
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "collect",
        help="collect once from a MySQL/MariaDB server and print the values",
        description="Connect once, run every source (global status, InnoDB status, replication, ...) "
        "and print the values under their catalog names, with each source's status.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_connection_arguments(parser)
    add_collection_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    parser.add_argument("--raw", action="store_true", help="with --json, include every row as the server printed it")
    parser.set_defaults(handler=run)


def add_collection_arguments(parser) -> None:
    group = parser.add_argument_group("sources")
    group.add_argument("--sources", metavar="NAME,...",
                       help="comma-separated sources to run (default: those marked 'default' by --list-sources; "
                       "--heartbeat adds heartbeat)")
    group.add_argument("--list-sources", action="store_true", help="list the sources, whether each runs by default, and what it reads; then exit")
    group.add_argument("--heartbeat", metavar="DATABASE.TABLE",
                       help="read pt-heartbeat lag from this table, which then also gives the legacy slave lag "
                       "as the original's --heartbeat did (off by default)")
    group.add_argument("--heartbeat-utc", action="store_true",
                       help="the heartbeat table holds UTC timestamps (pt-heartbeat --utc)")
    group.add_argument("--host-metrics", choices=("auto", "on", "off"), default="auto",
                       help="psutil host and mysqld process metrics. auto (default): only when the target is a socket "
                       "or an address of this host; on: host metrics even for a remote server (its process "
                       "is never looked for); off: neither")


def collector_from_args(args):
    """A Collector built from the connection and source flags (raises ConfigError/ValueError)."""
    from ..collection import Collector
    from ..sources.heartbeat import HeartbeatOptions

    heartbeat = None
    if args.heartbeat:
        database, dot, table = args.heartbeat.partition(".")
        if not dot or not database or not table:
            raise ConfigError(f"--heartbeat: {args.heartbeat!r} is not DATABASE.TABLE")
        heartbeat = HeartbeatOptions(database=database, table=table, utc=args.heartbeat_utc)
    sources = {s.strip() for s in args.sources.split(",") if s.strip()} if args.sources else None
    return Collector(
        settings_from_args(args),
        sources=sources,
        statement_timeout=args.statement_timeout,
        lock_wait_timeout=args.lock_wait_timeout,
        heartbeat=heartbeat,
        host_metrics=args.host_metrics,
    )


def list_sources() -> str:
    from ..sources import scraper_classes

    classes = scraper_classes()
    width = max(map(len, classes))  # the table collectors' names run past 30 characters
    lines = []
    for name, cls in classes.items():
        default = "default" if cls.enabled_by_default else "opt-in "
        lines.append(f"{name:{width}} {default}  {cls.description}")
    return "\n".join(lines)


def listed_sources(args) -> bool:
    """--list-sources, for every command taking the collection flags: print the list, then stop."""
    if args.list_sources:
        print(list_sources())
        return True
    return False


NO_OPTION_FILE_HINT = " (no option file was read: give --my-cnf FILE, or create ~/.my.cnf with a [client] section)"


def run(args) -> int:
    if listed_sources(args):
        return 0
    try:
        collector = collector_from_args(args)
    except (ConfigError, ValueError) as exc:
        print(f"mysql-snmp collect: {exc}", file=sys.stderr)
        return 2
    with collector:
        snapshot = collector.collect()
    if not snapshot.up:
        # The error names the target; without an option file the user may not know where it came from.
        hint = NO_OPTION_FILE_HINT if collector.settings.origin == "defaults" else ""
        print(f"mysql-snmp collect: {snapshot.error}{hint}", file=sys.stderr)
        return 1
    print(json.dumps(snapshot_document(snapshot, include_raw=args.raw), indent=2, default=str)
          if args.json else format_snapshot(snapshot))
    return 0


# --------------------------------------------------------------------------- rendering


def flat_values(snapshot: Snapshot) -> dict[str, object]:
    """Scalars, then series points keyed ``name{label="value",...}``, each sorted by name."""
    flat: dict[str, object] = dict(sorted(snapshot.values.items()))
    for name, points in sorted(snapshot.series.items()):
        for labels, value in sorted(points.items()):
            flat[name + _labels_text(labels)] = value
    return flat


def _labels_text(labels: Labels) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}"


def snapshot_document(snapshot: Snapshot, include_raw: bool = False) -> dict:
    """A JSON-ready view of a snapshot.  It holds no connection settings, hence no password."""
    document = {
        "target": snapshot.target,
        "timestamp": snapshot.timestamp,
        "up": snapshot.up,
        "error": snapshot.error,
        "server": None if snapshot.server is None else {
            "flavour": snapshot.server.flavour,
            "version": ".".join(str(n) for n in snapshot.server.version),
            "version_string": snapshot.server.version_string,
            "version_comment": snapshot.server.version_comment,
        },
        "sources": {
            name: {
                "ok": status.ok,
                "duration_seconds": round(status.duration_seconds, 6),
                "statements": status.statements,
                "reason": status.reason,
                "error": status.error,
            }
            for name, status in snapshot.sources.items()
        },
        "values": dict(sorted(snapshot.values.items())),
        "series": {
            name: [{"labels": dict(labels), "value": value} for labels, value in sorted(points.items())]
            for name, points in sorted(snapshot.series.items())
        },
    }
    if include_raw:
        document["raw"] = snapshot.raw
    return document


def format_snapshot(snapshot: Snapshot) -> str:
    lines = []
    server = snapshot.server
    identity = f"{server.flavour} {server.version_string}" if server else "unknown server"
    lines.append(f"{snapshot.target}: {identity}, up={int(snapshot.up)}")
    lines.append("")
    width = max(map(len, ["source", *snapshot.sources]))
    lines.append(f"{'source':{width}} {'ok':3} {'ms':>8} {'stmts':>5}  note")
    for name, status in snapshot.sources.items():
        note = "" if status.ok else f"{status.reason}: {status.error}"
        lines.append(f"{name:{width}} {'yes' if status.ok else 'NO':3} {status.duration_seconds * 1000:8.1f} "
                     f"{status.statements:5}  {note}")
    rows = sorted(flat_values(snapshot).items())
    if rows:
        width = min(60, max(len(name) for name, _ in rows))
        lines.append("")
        lines.append(f"{len(snapshot.values)} values, {sum(len(p) for p in snapshot.series.values())} series points")
        for name, value in rows:
            lines.append(f"{name:{width}} {'NULL' if value is None else value}")
    return "\n".join(lines)
