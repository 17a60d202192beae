"""information_schema.TABLES: version, estimated rows and sizes of each table."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, per_operation, series_from_rows

TABLE = {"schema": "table_schema", "table": "table_name"}
VERSION_LABELS = {**TABLE, "type": "table_type", "engine": "engine", "row_format": "row_format",
                  "create_options": "create_options"}
SIZE_FIELDS = per_operation("info_schema_table_size_bytes", "{}", ("data_length", "index_length", "data_free"),
                            label="component")


def info_schema_tables_series(rows: Iterable[Mapping]) -> Series:
    rows = list(rows)
    series = series_from_rows(rows, VERSION_LABELS, (Field("info_schema_table_version", "version"),))
    series_from_rows(rows, TABLE, (Field("info_schema_table_rows", "table_rows"),), series)
    return series_from_rows(rows, TABLE, SIZE_FIELDS, series)
