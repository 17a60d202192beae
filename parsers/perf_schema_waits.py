"""performance_schema wait summaries: events by name, table I/O, index I/O and table locks.

Timers are picoseconds; the series are seconds.  Each COUNT_<OP>/SUM_TIMER_<OP>
column pair becomes the ``operation`` label, as mysqld_exporter names them.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import (
    NULL_LABEL,
    PICOSECONDS,
    Field,
    Series,
    folded_rows,
    per_operation,
    series_from_rows,
)

IO_OPERATIONS = ("fetch", "insert", "update", "delete")
TABLE = {"schema": "object_schema", "name": "object_name"}

EVENTS_WAITS_FIELDS = (
    Field("perf_schema_events_waits", "count_star"),
    Field("perf_schema_events_waits_seconds", "sum_timer_wait", PICOSECONDS),
)
TABLE_IO_FIELDS = (per_operation("perf_schema_table_io_waits", "COUNT_{}", IO_OPERATIONS)
                   + per_operation("perf_schema_table_io_waits_seconds", "SUM_TIMER_{}", IO_OPERATIONS, PICOSECONDS))

# SQL locks (the lock types of the server's lock manager) and external locks (the engine's).
SQL_LOCK_OPERATIONS = ("read_normal", "read_with_shared_locks", "read_high_priority", "read_no_insert",
                       "write_allow_write", "write_concurrent_insert", "write_low_priority", "write_normal")
LOCK_FIELDS = (
    per_operation("perf_schema_sql_lock_waits", "COUNT_{}", SQL_LOCK_OPERATIONS)
    + per_operation("perf_schema_sql_lock_waits_seconds", "SUM_TIMER_{}", SQL_LOCK_OPERATIONS, PICOSECONDS)
    + tuple(Field("perf_schema_external_lock_waits", f"COUNT_{op}_EXTERNAL", 1.0, (("operation", op),))
            for op in ("read", "write"))
    + tuple(Field("perf_schema_external_lock_waits_seconds", f"SUM_TIMER_{op}_EXTERNAL", PICOSECONDS,
                  (("operation", op),)) for op in ("read", "write"))
)


def events_waits_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"event_name": "event_name"}, EVENTS_WAITS_FIELDS)


def table_io_waits_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, TABLE, TABLE_IO_FIELDS)


def index_io_waits_series(rows: Iterable[Mapping]) -> Series:
    """Rows with INDEX_NAME (NULL, the table's rows read without an index, printed as NONE).

    Inserts touch no index, so only the NONE row carries insert counts (mysqld_exporter's rule).
    """
    labels = {**TABLE, "index": "index_name"}
    series: Series = {}
    rows = folded_rows(rows, null_as_none=("index_name",))
    without_inserts = tuple(op for op in IO_OPERATIONS if op != "insert")
    indexed = (per_operation("perf_schema_index_io_waits", "COUNT_{}", without_inserts)
               + per_operation("perf_schema_index_io_waits_seconds", "SUM_TIMER_{}", without_inserts, PICOSECONDS))
    inserts = (per_operation("perf_schema_index_io_waits", "COUNT_{}", ("insert",))
               + per_operation("perf_schema_index_io_waits_seconds", "SUM_TIMER_{}", ("insert",), PICOSECONDS))
    series_from_rows(rows, labels, indexed, series)
    no_index = [row for row in rows if row["index_name"] == NULL_LABEL]
    return series_from_rows(no_index, labels, inserts, series)


def table_lock_waits_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, TABLE, LOCK_FIELDS)
