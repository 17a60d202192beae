"""SHOW GLOBAL STATUS and SHOW GLOBAL VARIABLES rows to typed values."""

from __future__ import annotations

from typing import Iterable, Mapping

from parsers.types import Value
from parsers.columns import MISSING, fold_row, pick
from parsers.values import text_of, typed

_NAME_COLUMNS = ("Variable_name", "Name")
_VALUE_COLUMNS = ("Value",)


def parse_status_rows(rows: Iterable[object]) -> dict[str, Value]:
    """{variable name as printed: typed value}.

    Rows are (name, value) sequences (pymysql's default cursor) or mappings
    with Variable_name/Value (DictCursor, parsers.tabular).  A row without a
    name cannot be attributed and raises ValueError naming it.
    """
    result: dict[str, Value] = {}
    for index, row in enumerate(rows):
        # pymysql's rows are (str, value) tuples: take them as they are (~1,200 rows a scrape).
        if type(row) is tuple and len(row) == 2 and type(row[0]) is str and row[0]:
            name, value = row
        else:
            name, value = _name_and_value(row, index)
        result[name] = typed(value)
    return result


def _name_and_value(row: object, index: int) -> tuple[str, object]:
    if isinstance(row, (tuple, list)) and len(row) == 2:
        name, value = row
    elif isinstance(row, Mapping):
        folded = fold_row(row)
        name, value = pick(folded, _NAME_COLUMNS), pick(folded, _VALUE_COLUMNS)
        if name is MISSING or value is MISSING:
            columns = ", ".join(sorted(str(name) for name in row))
            raise ValueError(f"status row {index}: needs Variable_name and Value columns, has {columns!r:.100}")
    else:
        raise ValueError(f"status row {index}: expected (name, value), got {row!r:.80}")
    name_text = text_of(name)
    if not name_text:
        raise ValueError(f"status row {index}: empty variable name")
    return name_text, value
