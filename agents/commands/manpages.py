"""Manual pages generated from the argument parsers: ``mysql-snmp.1`` and one
``mysql-snmp-COMMAND.1`` per command, so ``man`` says exactly what ``--help`` says.

The packages run ``python3 -m mysql_snmp.agents.commands.manpages DIRECTORY`` at build time
(packaging/install-data).  No date goes into a page, so two builds of one source agree.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..config.version import installed_version

SEE_ALSO = "snmpd.conf(5), snmpd(8), systemd.exec(5)"


def roff_text(text: str) -> str:
    """Plain text as roff: backslashes and dashes escaped, no line read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.splitlines())


def paragraphs(text: str | None) -> list[str]:
    """A description or epilog as roff paragraphs; indented lines (examples) stay as they are."""
    if not text:
        return []
    lines = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        if any(line.startswith(" ") for line in block.splitlines()):
            lines += [".PP", ".nf", roff_text(block), ".fi"]
        else:
            lines += [".PP", roff_text(" ".join(block.split()))]
    return lines


def option_line(action: argparse.Action) -> str:
    metavar = "" if action.nargs == 0 else f" \\fI{roff_text(str(action.metavar or action.dest.upper()))}\\fR"
    names = ", ".join(f"\\fB{roff_text(name)}\\fR" for name in action.option_strings)
    if not action.option_strings:
        names = f"\\fI{roff_text(str(action.metavar or action.dest))}\\fR"
        metavar = ""
    return names + metavar


def help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._expand_help(action) if action.help else ""


def page(name: str, summary: str, parser: argparse.ArgumentParser, commands: dict[str, str]) -> str:
    title = name.upper()
    lines = [f'.TH "{title}" 1 "" "mysql-snmp {installed_version()}" "mysql-snmp"',
             ".SH NAME", f"{roff_text(name)} \\- {roff_text(summary)}",
             ".SH SYNOPSIS", ".nf", roff_text(parser.format_usage().removeprefix("usage: ").strip().replace("\n" + " " * 7, "\n")), ".fi",
             ".SH DESCRIPTION", *paragraphs(parser.description)]
    if commands:
        lines += [".SH COMMANDS"]
        for command, command_help in commands.items():
            lines += [".TP", f"\\fB{roff_text(command)}\\fR",
                      roff_text(command_help) + f" (\\fBmysql\\-snmp\\-{roff_text(command)}\\fR(1))"]
    lines.append(".SH OPTIONS")
    for group in parser._action_groups:
        actions = [action for action in group._group_actions
                   if action.help != argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)]
        if not actions:
            continue
        if group.title not in ("options", "optional arguments", "positional arguments"):
            lines.append(f".SS {roff_text(group.title.capitalize())}")
            lines += paragraphs(group.description)
        for action in actions:
            lines += [".TP", option_line(action), roff_text(" ".join(help_text(parser, action).split()))]
    if parser.epilog:
        lines += [".SH NOTES", *paragraphs(parser.epilog)]
    related = ["mysql\\-snmp(1)"] if commands == {} else [f"mysql\\-snmp\\-{roff_text(c)}(1)" for c in commands]
    lines += [".SH SEE ALSO", ", ".join(related + [SEE_ALSO])]
    return "\n".join(lines) + "\n"


def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found.update({name: (sub, helps.get(name, "")) for name, sub in action.choices.items()})
    return found


def manual_pages() -> dict[str, str]:
    """File name -> page, for the program and each of its commands (a nested command, such as
    ``leak replay``, is described in its parent's page)."""
    from ..cli import build_parser

    parser = build_parser()
    commands = subcommands(parser)
    pages = {"mysql-snmp.1": page("mysql-snmp", parser.description.split(":")[0], parser,
                                  {name: summary for name, (_, summary) in commands.items()})}
    for name, (command, summary) in commands.items():
        text = page(f"mysql-snmp-{name}", summary, command, {})
        for nested, (nested_parser, nested_summary) in subcommands(command).items():
            text += "\n".join([f".SH {roff_text(name.upper() + ' ' + nested.upper())}",
                               roff_text(nested_summary), ".PP", ".nf",
                               roff_text(nested_parser.format_help()), ".fi"]) + "\n"
        pages[f"mysql-snmp-{name}.1"] = text
    return pages


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python3 -m mysql_snmp.agents.commands.manpages DIRECTORY", file=sys.stderr)
        return 2
    directory = Path(args[0])
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in manual_pages().items():
        (directory / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
