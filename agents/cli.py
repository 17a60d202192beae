"""The ``mysql-snmp`` console script: one subcommand per module in agents/commands/."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

# Each module defines register(subparsers) and sets a handler with
# parser.set_defaults(handler=function(args) -> int).
COMMAND_MODULES = (
    "agents.commands.demo",
    "agents.commands.collect",
    "agents.commands.parse",
    "agents.commands.exporter",
    "agents.commands.agentx",
    "agents.commands.leak",
    "agents.commands.generate",
    "agents.commands.rules",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mysql-snmp",
        description=(
            "Monitor MySQL, MariaDB and Percona Server: an AgentX subagent for Net-SNMP's snmpd "
            "and a Prometheus exporter, sharing one metric catalog."
        ),
        epilog="Run 'mysql-snmp COMMAND --help' for the options of one command.",
    )
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"),
                        help="logging verbosity (default: info); debug adds tracebacks")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours.  Point stdout at
        # /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
