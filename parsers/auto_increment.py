"""information_schema.COLUMNS joined with TABLES: each auto_increment column's next value and its type's maximum."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

FIELDS = (
    Field("auto_increment_column", "auto_increment"),
    Field("auto_increment_column_max", "max_int"),
)
LABELS = {"schema": "table_schema", "table": "table_name", "column": "column_name"}


def auto_increment_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, LABELS, FIELDS)
