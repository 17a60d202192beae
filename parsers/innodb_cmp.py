"""information_schema.INNODB_CMP: compression of B-tree pages, per compressed page size."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

FIELDS = (
    Field("innodb_cmp_compress_ops", "compress_ops"),
    Field("innodb_cmp_compress_ops_ok", "compress_ops_ok"),
    Field("innodb_cmp_compress_time_seconds", "compress_time"),  # the server counts whole seconds
    Field("innodb_cmp_uncompress_ops", "uncompress_ops"),
    Field("innodb_cmp_uncompress_time_seconds", "uncompress_time"),
)


def innodb_cmp_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"page_size": "page_size"}, FIELDS)
