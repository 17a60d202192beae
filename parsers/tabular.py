"""Reading result sets that a user saved from the mysql/mariadb client.

Four layouts are recognised:

- box tables of the interactive client::

    +---------------+-------+
    | Variable_name | Value |
    +---------------+-------+
    | Uptime        | 42    |
    +---------------+-------+

- batch output (``mysql -e`` / ``-B``): a header row, then TAB-separated rows.
  Batch mode escapes TAB, newline, backslash and NUL as ``\\t``, ``\\n``,
  ``\\\\`` and ``\\0``; those are unescaped (a file saved with ``-r``/raw that
  holds such sequences literally would be altered; status values never do);
- header-less two-column ``name<TAB>value`` dumps (``mysql -N``, pt-mysql-summary's
  ``mysql-status``): returned with the keys ``Variable_name``/``Value``;
- vertical output (``\\G``): ``*** 1. row ***`` then right-aligned ``Key: value``.

The client prints SQL NULL as ``NULL``: it becomes None (a string that really
is ``NULL`` cannot be told apart in a saved file).  Reading never raises: lines
that fit no layout are counted in ``ParsedTable.skipped_lines`` so a caller can
say how much of the file it did not understand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Row = dict[str, "str | None"]

_BORDER = re.compile(r"\+(?:-+\+)+")
_VERTICAL_HEADER = re.compile(r"\*+ (\d+)\. row \*+")
_BATCH_ESCAPES = {"t": "\t", "n": "\n", "\\": "\\", "0": "\0"}
_BATCH_ESCAPE = re.compile(r"\\([tn\\0])")
# Second column of a header-less name/value dump: numbers, booleans, paths...
# A header's second cell is a column name instead, e.g. "Value" or "File_size".
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)", re.ASCII)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_KNOWN_HEADERS = {("variable_name", "value"), ("log_name", "file_size"), ("name", "value")}


@dataclass
class ParsedTable:
    rows: list[Row] = field(default_factory=list)
    layout: str = "empty"  # "box", "batch", "name-value", "vertical" or "empty"
    columns: list[str] = field(default_factory=list)
    skipped_lines: int = 0


def parse_table_text(text: str | bytes) -> list[Row]:
    """The rows of a saved result set, as {column: text or None}."""
    return read_table(text).rows


def read_table(text: str | bytes) -> ParsedTable:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    lines = text.splitlines()
    if any(_BORDER.fullmatch(line.strip()) for line in lines):
        return _read_box(lines)
    if any(_VERTICAL_HEADER.fullmatch(line.strip()) for line in lines):
        return _read_vertical(lines)
    return _read_batch(lines)


def _null(value: str) -> str | None:
    return None if value == "NULL" else value


# --- box tables -------------------------------------------------------------


def _read_box(lines: list[str]) -> ParsedTable:
    table = ParsedTable(layout="box")
    border = ""
    state = "outside"  # outside -> header -> header-border -> rows -> outside
    pending: list[str] = []  # physical lines of a row whose value spans lines
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        if _BORDER.fullmatch(stripped):
            if pending:
                table.skipped_lines += len(pending)
                pending = []
            if state in ("outside", "rows"):
                state = "header" if state == "outside" else "outside"
                border = stripped
            elif state == "header-border":
                state = "rows"
            else:
                table.skipped_lines += 1
            continue
        if state == "header" and stripped.startswith("|"):
            cells = _box_cells(stripped, border, None)
            if cells is None:
                table.skipped_lines += 1
                state = "outside"
            else:
                table.columns = cells
                state = "header-border"
            continue
        if state == "rows" and (pending or stripped.startswith("|")):
            pending.append(line if pending else stripped)
            if not stripped.endswith("|"):
                continue  # a value holding newlines continues on the next line
            cells = _box_cells("\n".join(pending), border, len(table.columns))
            if cells is None:
                table.skipped_lines += len(pending)
            else:
                table.rows.append({name: _null(value) for name, value in zip(table.columns, cells)})
            pending = []
            continue
        if stripped:
            table.skipped_lines += 1
    table.skipped_lines += len(pending)
    return table


def _box_cells(line: str, border: str, expected: int | None) -> list[str] | None:
    """Cells of one ``| a | b |`` line; None when it cannot be read."""
    # Cut at the border's '+' positions so a value holding '|' survives.
    # Only possible when the line is as wide as the border (no multi-line value,
    # no double-width characters, which the client pads by display width).
    cuts = [i for i, char in enumerate(border) if char == "+"]
    if len(line) == len(border) and all(line[i] == "|" for i in cuts):
        cells = [line[a + 1 : b].strip() for a, b in zip(cuts, cuts[1:])]
    else:
        inner = line.strip()
        if not (inner.startswith("|") and inner.endswith("|")) or len(inner) < 2:
            return None
        cells = [cell.strip() for cell in inner[1:-1].split("|")]
    if expected is not None and len(cells) != expected:
        return None
    if expected is None and len(cells) != len(cuts) - 1:
        return None
    return cells


# --- vertical (\G) output ----------------------------------------------------


def _read_vertical(lines: list[str]) -> ParsedTable:
    table = ParsedTable(layout="vertical")
    row: Row | None = None
    colon_at = -1  # the client right-aligns keys: every "Key:" colon sits in one column
    last_key: str | None = None
    for line in lines:
        if _VERTICAL_HEADER.fullmatch(line.strip()):
            row, colon_at, last_key = {}, -1, None
            table.rows.append(row)
            continue
        if row is None:
            if line.strip():
                table.skipped_lines += 1
            continue
        if colon_at < 0:
            colon_at = _first_key_colon(line)
        if _is_key_line(line, colon_at):
            key = line[:colon_at].strip()
            row[key] = _null(line[colon_at + 2 :] if len(line) > colon_at + 1 else "")
            if key not in table.columns:
                table.columns.append(key)
            last_key = key
        elif last_key is not None:
            previous = row[last_key] or ""
            row[last_key] = previous + "\n" + line
        elif line.strip():
            table.skipped_lines += 1
    return table


def _first_key_colon(line: str) -> int:
    index = line.find(": ")
    if index < 0 and line.endswith(":"):
        index = len(line) - 1
    return index if index > 0 and line[:index].strip() else -1


def _is_key_line(line: str, colon_at: int) -> bool:
    if colon_at <= 0 or len(line) <= colon_at or line[colon_at] != ":":
        return False
    if len(line) > colon_at + 1 and line[colon_at + 1] != " ":
        return False
    key_part = line[:colon_at]
    return bool(key_part.strip()) and not key_part.endswith(" ")


# --- batch (TAB-separated) output ---------------------------------------------


def unescape_batch(value: str) -> str:
    """Undo the batch-mode escapes (\\t \\n \\\\ \\0); any other backslash stays as printed."""
    return _BATCH_ESCAPE.sub(lambda match: _BATCH_ESCAPES[match.group(1)], value)


def _read_batch(lines: list[str]) -> ParsedTable:
    # A row of empty cells still has its TABs; only a line with nothing at all is blank.
    records = [line.split("\t") for line in lines if line]
    if not records:
        return ParsedTable()
    if _is_headerless_name_value(records):
        table = ParsedTable(layout="name-value", columns=["Variable_name", "Value"])
        records_with_header = [table.columns] + records
    else:
        table = ParsedTable(layout="batch")
        records_with_header = records
    header = [unescape_batch(cell) for cell in records_with_header[0]]
    table.columns = header
    for record in records_with_header[1:]:
        if len(record) != len(header):
            table.skipped_lines += 1
            continue
        table.rows.append({name: _null(unescape_batch(cell)) for name, cell in zip(header, record)})
    return table


def _is_headerless_name_value(records: list[list[str]]) -> bool:
    """True for ``name<TAB>value`` dumps printed without a header row.

    Batch output with a header can also have two columns (SHOW BINARY LOGS,
    SHOW GLOBAL STATUS), so the first row is a header when it is a known one,
    when a later row's first cell is not a variable name (dumps hold only
    identifiers there), or when it is the only row whose second cell is not a
    number while all the others are.
    """
    if any(len(record) != 2 for record in records):
        return False
    first = (records[0][0].strip().lower(), records[0][1].strip().lower())
    if first in _KNOWN_HEADERS:
        return False
    if not all(_IDENTIFIER.fullmatch(record[0].strip()) for record in records[1:]):
        return False
    if _NUMBER.fullmatch(records[0][1].strip()) or records[0][1].strip() == "":
        return True
    rest = records[1:]
    return not (rest and all(_NUMBER.fullmatch(record[1].strip()) for record in rest))
