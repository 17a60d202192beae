"""information_schema.TABLE_STATISTICS (userstat=1, MariaDB and Percona): rows read and changed per table,
and the same summed per schema."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

COLUMNS = ("rows_read", "rows_changed", "rows_changed_x_indexes")


def table_statistics_series(rows: Iterable[Mapping]) -> Series:
    fields = tuple(Field(f"table_statistics_{column}", column) for column in COLUMNS)
    return series_from_rows(rows, {"schema": "table_schema", "table": "table_name"}, fields)


def schema_statistics_series(rows: Iterable[Mapping]) -> Series:
    """Rows of ``SELECT TABLE_SCHEMA, SUM(ROWS_READ) AS ROWS_READ, ... GROUP BY TABLE_SCHEMA``."""
    fields = tuple(Field(f"schema_statistics_{column}", column) for column in COLUMNS)
    return series_from_rows(rows, {"schema": "table_schema"}, fields)
