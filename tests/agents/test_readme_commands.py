"""The README's ``mysql-snmp`` command lines are ones the CLI accepts: a renamed or removed flag
cannot leave a stale example in the documentation a new user copies from."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from mysql_snmp.agents.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_command_lines() -> list[str]:
    """Each ``mysql-snmp ...`` command of the README's code blocks, continuation lines joined."""
    code, inside = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            code.append(line)
    commands = []
    for line in "\n".join(code).replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if "mysql-snmp" not in words:
            continue
        start = words.index("mysql-snmp")
        before = words[:start]
        # Run as a command: first on the line, after VAR=value settings, or at the end of a pipe
        # (not `apt-get purge mysql-snmp`).
        if all("=" in word for word in before) or "|" in before:
            words = words[start + 1:]
            ends = [i for i, word in enumerate(words) if word in ("|", ">", ">>", "&&", ";")]
            commands.append(shlex.join(words[:ends[0]] if ends else words))
    return commands


COMMANDS = readme_command_lines()


def test_the_readme_shows_each_agent_command():
    assert {command.split()[0] for command in COMMANDS} >= {"collect", "parse", "exporter", "agentx", "rules",
                                                            "leak"}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_readme_command_line_parses(command):
    args, extras = build_parser().parse_known_args(shlex.split(command))
    assert extras == [], f"mysql-snmp {command}: the CLI does not take {extras}"
    assert args.command == shlex.split(command)[0]
