"""Rows of a server table to labelled series keyed by catalog name.

Most mysqld_exporter collectors read one table (information_schema,
performance_schema, sys) and turn each row into samples: some columns become
labels, each numeric column becomes the value of one catalog series, sometimes
with a constant label saying which column it was (``operation="fetch"`` for
COUNT_FETCH).  A collector's parser declares that mapping as ``Field``s and calls
``series_from_rows``; only what differs (a histogram, a prefix to strip) is code.

Labels are sorted ``(name, value)`` tuples, the shape the snapshot keys series by.
A NULL or non-numeric value gives no sample: it is absent, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from .columns import FoldedRow, fold_row
from .values import text_of, typed

Labels = tuple[tuple[str, str], ...]
Series = dict[str, dict[Labels, float]]

# performance_schema timers count picoseconds.
PICOSECONDS = 1e-12


@dataclass(frozen=True)
class Field:
    """One numeric column read into the catalog series ``name``."""

    name: str  # catalog name
    column: str  # column name as the server prints it (matched case-insensitively)
    scale: float = 1.0  # to the catalog's unit (picoseconds -> seconds: PICOSECONDS)
    labels: tuple[tuple[str, str], ...] = ()  # constant labels this column adds


def number(value: object) -> int | float | None:
    """A column's value as a number; None for NULL or text that is not one."""
    kind = type(value)
    if kind is int or kind is float:  # what pymysql hands over for numeric columns
        return value
    parsed = typed(value)
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        return parsed
    return None


def label_text(value: object, default: str = "") -> str:
    text = text_of(value)
    return default if text is None else text


# mysqld_exporter's label for a NULL it names (a statement outside any schema, rows read without an index).
NULL_LABEL = "NONE"


def folded_rows(rows: Iterable[Mapping], null_as_none: tuple[str, ...] = ()) -> list[dict]:
    """The rows with lowercased column names, for a parser that adjusts values before mapping them:
    its own copies (plain dicts, folded again when mapped, whatever names it adds); a NULL in a
    column of ``null_as_none`` becomes ``NONE``, as mysqld_exporter labels it."""
    folded = [dict(row) if type(row) is FoldedRow else fold_row(row) for row in rows]
    for row in folded:
        for column in null_as_none:
            if row.get(column) is None:
                row[column] = NULL_LABEL
    return folded


def series_from_rows(rows: Iterable[Mapping], label_columns: Mapping[str, str], fields: Iterable[Field],
                     series: Series | None = None) -> Series:
    """``{catalog name: {labels: value}}`` from ``rows``.

    ``label_columns`` maps each label to the column holding its value (a NULL label
    is the empty string).  A later row with the same labels replaces an earlier one.
    """
    result: Series = {} if series is None else series
    label_plan = tuple((label, column.lower()) for label, column in label_columns.items())
    # Per field: the labels come out sorted as they are (no sort per row) when the names already are.
    field_plan = tuple((field.name, field.column.lower(), field.scale, field.labels,
                        _strictly_increasing([label for label, _ in label_plan] + [n for n, _ in field.labels]))
                       for field in fields)
    for row in rows:
        folded = fold_row(row)
        base = tuple((label, label_text(folded.get(column))) for label, column in label_plan)
        for name, column, scale, constant, in_order in field_plan:
            value = number(folded.get(column))
            if value is None:
                continue
            labels = base + constant if in_order else tuple(sorted(base + constant))
            result.setdefault(name, {})[labels] = value * scale if scale != 1.0 else value
    return result


def _strictly_increasing(names: list[str]) -> bool:
    return all(a < b for a, b in zip(names, names[1:]))


def per_operation(name: str, column_format: str, operations: Iterable[str], scale: float = 1.0,
                  label: str = "operation") -> tuple[Field, ...]:
    """One series ``name`` fed by a column per operation (COUNT_FETCH, COUNT_INSERT ... as operation=...)."""
    return tuple(Field(name, column_format.format(op.upper()), scale, ((label, op),)) for op in operations)
