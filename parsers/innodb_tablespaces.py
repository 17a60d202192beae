"""information_schema.INNODB_(SYS_)TABLESPACES: InnoDB tablespaces with their file sizes."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

INFO_LABELS = {"tablespace_name": "name", "file_format": "file_format", "row_format": "row_format",
               "space_type": "space_type"}
SIZE_FIELDS = (
    Field("innodb_tablespace_file_size_bytes", "file_size"),
    Field("innodb_tablespace_allocated_size_bytes", "allocated_size"),
)


def innodb_tablespaces_series(rows: Iterable[Mapping]) -> Series:
    rows = list(rows)
    # The info series carries the tablespace id as its value, as mysqld_exporter does.
    series = series_from_rows(rows, INFO_LABELS, (Field("innodb_tablespace_space_info", "space"),))
    return series_from_rows(rows, {"tablespace_name": "name"}, SIZE_FIELDS, series)
