"""Reading an OpenNMS snmp-graph.properties file the way OpenNMS does (for the tests).

java.util.Properties: a line ending in an odd number of backslashes continues on the next
(whose leading blanks are dropped); in keys and values ``\\`` is one backslash, ``\\:`` a colon,
``\\n`` a newline.  OpenNMS then splits the command into arguments at blanks outside double
quotes and drops the quotes, and substitutes ``{rrdN}``, ``{startTime}`` and ``{endTime}``.
"""

from __future__ import annotations

import re

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f"}


def _logical_lines(text: str):
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""
    if pending:
        yield pending


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), text)


def parse_properties(text: str) -> dict[str, str]:
    out = {}
    for line in _logical_lines(text):
        match = re.match(r"((?:[^\\=:\s]|\\.)+)\s*[=:\s]\s*(.*)$", line, re.S)
        key, value = (match.group(1), match.group(2)) if match else (line, "")
        out[_unescape(key)] = _unescape(value)
    return out


def command_arguments(command: str, rrd_files: list[str], start: int, end: int) -> list[str]:
    """The rrdtool arguments OpenNMS builds from a report's command."""
    for i, path in enumerate(rrd_files, start=1):
        command = command.replace(f"{{rrd{i}}}", path)
    command = command.replace("{startTime}", str(start)).replace("{endTime}", str(end))
    return [part.replace('"', "") for part in re.findall(r'(?:[^\s"]|"[^"]*")+', command)]


def reports(properties: dict[str, str]) -> dict[str, dict[str, str]]:
    """report id -> {name, columns, type, command}."""
    ids = [r.strip() for r in properties["reports"].split(",")]
    return {rid: {field: properties.get(f"report.{rid}.{field}", "") for field in ("name", "columns", "type", "command")}
            for rid in ids}
