"""``mysql-snmp rules``: the server alert rules with thresholds of your own."""

from __future__ import annotations

import argparse
import dataclasses
import sys

EPILOG = """\
grafana/rules/mysql.rules.yml holds the rules with the default thresholds.  To change
some, write your own copy and load it instead (rule_files in prometheus.yml):

  mysql-snmp rules --set replication_lag_seconds=600 --set history_list_length=5000000 \\
      > /etc/prometheus/rules/mysql.rules.yml

Thresholds (default):
"""


def register(subparsers) -> None:
    from ..generate.server_rules import Thresholds

    defaults = "\n".join(f"  {f.name} ({getattr(Thresholds(), f.name)})" for f in dataclasses.fields(Thresholds))
    parser = subparsers.add_parser(
        "rules",
        help="print the Prometheus alert and recording rules, with thresholds changed by --set",
        description="Print grafana/rules/mysql.rules.yml with the given thresholds.",
        epilog=EPILOG + defaults + "\n\nExit status: 0, or 2 for a bad --set.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="overrides",
                        help="change one threshold (repeatable)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from ..catalog import load_catalog
    from ..generate.server_rules import parse_overrides, render, rules_document

    try:
        thresholds = parse_overrides(args.overrides)
    except ValueError as exc:
        print(f"mysql-snmp rules: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(rules_document(load_catalog(), thresholds)))
    return 0
