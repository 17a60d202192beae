"""information_schema.INNODB_CMPMEM: the buddy allocator of compressed pages, per page size and pool."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

FIELDS = (
    Field("innodb_cmpmem_pages_used", "pages_used"),
    Field("innodb_cmpmem_pages_free", "pages_free"),
    Field("innodb_cmpmem_relocation_ops", "relocation_ops"),
    # mysqld_exporter divides RELOCATION_TIME by 1000 and calls it seconds; kept, so graphs agree.
    Field("innodb_cmpmem_relocation_time_seconds", "relocation_time", 0.001),
)


def innodb_cmpmem_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"page_size": "page_size", "buffer_pool": "buffer_pool_instance"}, FIELDS)
