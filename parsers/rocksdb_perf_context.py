"""information_schema.ROCKSDB_PERF_CONTEXT (MyRocks): per-table RocksDB counters, one row per counter.

Rows are (TABLE_SCHEMA, TABLE_NAME, PARTITION_NAME, STAT_TYPE, VALUE); each known
STAT_TYPE is one catalog series ``rocksdb_perf_context_<stat>`` labelled by schema,
table and partition ("" when the table is not partitioned).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Series, folded_rows, label_text, number

# The counters mysqld_exporter serves (the table also has timers, in nanoseconds, that it leaves out).
STAT_TYPES = (
    "USER_KEY_COMPARISON_COUNT", "BLOCK_CACHE_HIT_COUNT", "BLOCK_READ_COUNT", "BLOCK_READ_BYTE", "GET_READ_BYTES",
    "MULTIGET_READ_BYTES", "ITER_READ_BYTES", "INTERNAL_KEY_SKIPPED_COUNT", "INTERNAL_DELETE_SKIPPED_COUNT",
    "INTERNAL_RECENT_SKIPPED_COUNT", "INTERNAL_MERGE_COUNT", "GET_FROM_MEMTABLE_COUNT", "SEEK_ON_MEMTABLE_COUNT",
    "NEXT_ON_MEMTABLE_COUNT", "PREV_ON_MEMTABLE_COUNT", "SEEK_CHILD_SEEK_COUNT", "BLOOM_MEMTABLE_HIT_COUNT",
    "BLOOM_MEMTABLE_MISS_COUNT", "BLOOM_SST_HIT_COUNT", "BLOOM_SST_MISS_COUNT", "KEY_LOCK_WAIT_COUNT",
    "IO_BYTES_WRITTEN", "IO_BYTES_READ",
)
_NAMES = {stat: f"rocksdb_perf_context_{stat.lower()}" for stat in STAT_TYPES}


def rocksdb_perf_context_series(rows: Iterable[Mapping]) -> Series:
    series: Series = {}
    for row in folded_rows(rows):
        name = _NAMES.get(label_text(row.get("stat_type")).upper())
        value = number(row.get("value"))
        if name is None or value is None:
            continue
        labels = (("part", label_text(row.get("partition_name"))), ("schema", label_text(row.get("table_schema"))),
                  ("table", label_text(row.get("table_name"))))
        series.setdefault(name, {})[labels] = value
    return series
