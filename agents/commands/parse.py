"""``mysql-snmp parse``: run the parsers on saved server output, no server needed."""

from __future__ import annotations

import argparse
import json
import sys

EPILOG = """\
examples:
  mysql -e 'SHOW ENGINE INNODB STATUS\\G' > innodb.txt
  mysql-snmp parse innodb-status innodb.txt                 # JSON keyed by catalog names
  mysql-snmp parse innodb-status --legacy-names innodb.txt  # keys of the original mysql-snmp
  mysql -e 'SHOW GLOBAL STATUS' | mysql-snmp parse global-status -
  mysql-snmp parse replica-status --json replica.txt        # box table, batch (TAB) or \\G output

Files may be tab-separated batch output (mysql -e / -B), box tables of the interactive
client, or vertical \\G output.  Exit status 2 when the file cannot be read or holds
nothing the parser recognises.
"""

KINDS = ("innodb-status", "global-status", "replica-status")
INNODB_HEADERS = ("INNODB MONITOR OUTPUT", "BUFFER POOL AND MEMORY", "ROW OPERATIONS", "TRANSACTIONS\n")


class BadInput(Exception):
    """The file is unreadable or holds nothing the parser recognises."""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="parse saved SHOW ENGINE INNODB STATUS / SHOW GLOBAL STATUS / SHOW REPLICA STATUS output",
        description="Parse server output saved to a file and print the values under their catalog names, "
        "exactly as the agents would export them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=KINDS, help="what the file holds")
    parser.add_argument("file", metavar="FILE", help="the saved output; - reads standard input")
    parser.add_argument("--legacy-names", action="store_true",
                        help="innodb-status only: the original mysql-snmp's keys, with its 0 for a value the text lacks "
                        "(catalog names leave such values out)")
    parser.add_argument("--json", action="store_true",
                        help="print JSON (innodb-status always prints JSON); default: name value lines")
    parser.set_defaults(handler=run)


def read_input(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        raise BadInput(f"{path}: {exc.strerror}") from None


def parsed_values(kind: str, text: str, legacy_names: bool, path: str) -> dict[str, object]:
    from ..catalog import load_catalog
    from ..collection import map_to_catalog
    from .collect import flat_values
    from ..snapshot import Snapshot

    if kind == "innodb-status":
        from ..sources.innodb_status import innodb_result
        from mysql_snmp.parsers.innodb import parse_innodb_status
        from mysql_snmp.parsers.innodb_legacy import legacy_innodb_values

        # A saved \G row or Type/Name/Status table is fine: the parser looks for the
        # monitor's section headers and ignores the client's framing around them.  One
        # section saved alone by a tool (pt-deadlock-logger keeps the LATEST DETECTED
        # DEADLOCK block) is parsed for what it holds.
        if not any(header in text for header in INNODB_HEADERS) and not parse_innodb_status(text).sections:
            raise BadInput(f"{path}: not SHOW ENGINE INNODB STATUS output (no InnoDB monitor section headers)")
        if legacy_names:
            return dict(legacy_innodb_values(text))
        catalog_kind, result = "innodb", innodb_result(text)
    else:
        catalog_kind, result = _table_result(kind, text, path)
    snapshot = Snapshot(target=path)
    map_to_catalog(load_catalog(), {catalog_kind: [result]}, snapshot)
    return flat_values(snapshot)


def _table_result(kind: str, text: str, path: str):
    """(catalog source kind, SourceResult) of a saved global-status or replica-status table."""
    from ..sources import SourceResult
    from ..sources.replication import replication_result
    from mysql_snmp.parsers.replication import parse_replica_status
    from mysql_snmp.parsers.status import parse_status_rows
    from mysql_snmp.parsers.tabular import parse_table_text

    rows = parse_table_text(text)
    if not rows:
        expected = "Variable_name/Value" if kind == "global-status" else "replica status"
        raise BadInput(f"{path}: no {expected} rows found")
    try:
        if kind == "global-status":
            return "global_status", SourceResult(values=parse_status_rows(rows))
        if not any(channel.present for channel in parse_replica_status(rows)):
            # Any text reads as a TAB table: rows with no replica column are not replica status.
            raise BadInput(f"{path}: no replica status columns (Slave_IO_Running, Seconds_Behind_Master, ...)")
        return "replication", replication_result(rows)
    except ValueError as exc:  # a row the parser cannot attribute; the message names it
        raise BadInput(f"{path}: {exc}") from None


def run(args) -> int:
    if args.legacy_names and args.kind != "innodb-status":
        print("mysql-snmp parse: --legacy-names applies to innodb-status only", file=sys.stderr)
        return 2
    try:
        values = parsed_values(args.kind, read_input(args.file), args.legacy_names, args.file)
    except BadInput as exc:
        print(f"mysql-snmp parse: {exc}", file=sys.stderr)
        return 2
    if args.json or args.kind == "innodb-status":
        print(json.dumps(values, indent=2, default=str))
    else:
        width = max((len(name) for name in values), default=0)
        for name, value in values.items():
            print(f"{name:{width}} {'NULL' if value is None else value}")
    return 0
