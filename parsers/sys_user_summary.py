"""sys.x$user_summary: statements, I/O, connections and memory per user (raw numbers, picosecond timers)."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import PICOSECONDS, Field, Series, series_from_rows

FIELDS = (
    Field("sys_user_statements", "statements"),
    Field("sys_user_statement_latency_seconds", "statement_latency", PICOSECONDS),
    Field("sys_user_table_scans", "table_scans"),
    Field("sys_user_file_ios", "file_ios"),
    Field("sys_user_file_io_seconds", "file_io_latency", PICOSECONDS),
    Field("sys_user_current_connections", "current_connections"),
    Field("sys_user_connections", "total_connections"),
    Field("sys_user_unique_hosts", "unique_hosts"),
    Field("sys_user_current_memory_bytes", "current_memory"),
    Field("sys_user_memory_allocated_bytes", "total_memory_allocated"),
)


def sys_user_summary_series(rows: Iterable[Mapping]) -> Series:
    # The background threads have no user: sys prints "background" for them.
    return series_from_rows(rows, {"user": "user"}, FIELDS)
