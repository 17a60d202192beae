"""The ``mysql-snmp`` console script: one subcommand per module in agents/commands/."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import sys

from .bounds.log_lines import install_log_guards
from .commands.perl_agent_options import perl_command_line, with_perl_spellings
from .config.names import did_you_mean
from .config.version import installed_version

# Command name -> its module.  Each module defines register(subparsers) and sets a handler
# with parser.set_defaults(handler=function(args) -> int).
COMMAND_MODULES = {
    "demo": "mysql_snmp.agents.commands.demo",
    "collect": "mysql_snmp.agents.commands.collect",
    "parse": "mysql_snmp.agents.commands.parse",
    "exporter": "mysql_snmp.agents.commands.exporter",
    "agentx": "mysql_snmp.agents.commands.agentx",
    "leak": "mysql_snmp.agents.commands.leak",
    "generate": "mysql_snmp.agents.commands.generate",
    "rules": "mysql_snmp.agents.commands.rules",
}


LOG_LEVELS = ("debug", "info", "warning", "error")


def add_common_options(parser: argparse.ArgumentParser, *, default_level: str | None) -> None:
    """--version and --log-level, on the top parser and again on every subcommand.

    A subcommand's copy defaults to SUPPRESS, so ``mysql-snmp agentx --log-level debug`` (the
    way unit files and old init scripts put options after the command) sets the level and an
    absent flag keeps the one given before the command."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}",
                        help="print the version and exit")
    parser.add_argument("--log-level", choices=LOG_LEVELS,
                        default=argparse.SUPPRESS if default_level is None else default_level,
                        help="logging verbosity (default: info); debug adds tracebacks")


class CommandParser(argparse.ArgumentParser):
    """argparse, with the nearest valid value named when a choice is mistyped (the subcommands'
    parsers are of the same class)."""

    INVALID_CHOICE = re.compile(r"invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)$")

    def error(self, message: str):
        found = self.INVALID_CHOICE.search(message)
        if found:
            choices = re.findall(r"'([^']*)'", found["choices"])
            message += did_you_mean(found["value"], choices)
        super().error(message)


def build_parser(only: str | None = None, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or with ``only`` that one command's.

    A long-running service imports only its own command's modules: the agentx command alone
    would bring asyncio into the exporter, the leak and generate commands their tooling.
    Given the command line about to be parsed, the ``only`` command's module may first prepare
    for it (``before_parser(argv)``, before its parser's imports)."""
    parser = CommandParser(
        prog="mysql-snmp",
        description=(
            "Monitor MySQL, MariaDB and Percona Server: an AgentX subagent for Net-SNMP's snmpd "
            "and a Prometheus exporter, sharing one metric catalog."
        ),
        epilog="Run 'mysql-snmp COMMAND --help' for the options of one command.",
    )
    add_common_options(parser, default_level="info")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMAND_MODULES.items():
        if only in (None, name):
            module = importlib.import_module(module_name)
            if name == only and argv is not None and hasattr(module, "before_parser"):
                module.before_parser(argv)
            module.register(subparsers)
    for subparser in commands_of(parser):
        add_common_options(subparser, default_level=None)
    return parser


def commands_of(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones too (``mysql-snmp leak replay``)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                found += [subparser, *commands_of(subparser)]
    return found


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` chose, nested ones too (``leak replay``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return command_parser(chosen, args)
    return parser


def unrecognized_message(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """One line naming what the command does not take, with the nearest flag it does take.

    argparse would report it against the top-level usage, which says nothing about the
    command's flags (the exporter has sixty: a typo'd --collect.X is easy)."""
    known = [option for action in parser._actions for option in action.option_strings]
    words = []
    for extra in extras:
        flag = extra.split("=", 1)[0]
        words.append(extra + (did_you_mean(flag, known, cutoff=0.75) if flag.startswith("-") else ""))
    return (f"{parser.prog}: unrecognized argument(s): {', '.join(words)}; "
            f"'{parser.prog} --help' lists the options")


def chosen_command(argv: list[str]) -> str | None:
    """The command named on the command line, if it is one; None for --help, a typo, none at all."""
    words = iter(argv)
    for word in words:
        if word == "--log-level":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMAND_MODULES else None
    return None


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    # The Perl mysql-snmp's command lines (/usr/sbin/mysql-snmp -c FILE ...) had no command word.
    words = perl_command_line(words, COMMAND_MODULES) or words
    command = chosen_command(words)
    if command == "agentx":
        words = with_perl_spellings(words)
    parser = build_parser(only=command, argv=words)
    args, extras = parser.parse_known_args(words)
    if extras:
        print(unrecognized_message(command_parser(parser, args), extras), file=sys.stderr)
        return 2
    install_log_guards()
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
