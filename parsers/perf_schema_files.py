"""performance_schema file I/O: per instrument (file_summary_by_event_name) and per file
(file_summary_by_instance)."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import PICOSECONDS, Field, Series, folded_rows, label_text, per_operation, series_from_rows

FILE_EVENTS_FIELDS = (
    per_operation("perf_schema_file_events", "COUNT_{}", ("read", "write", "misc"), label="mode")
    + per_operation("perf_schema_file_events_seconds", "SUM_TIMER_{}", ("read", "write", "misc"), PICOSECONDS,
                    label="mode")
    + per_operation("perf_schema_file_events_bytes", "SUM_NUMBER_OF_BYTES_{}", ("read", "write"), label="mode")
)
FILE_INSTANCES_FIELDS = (
    per_operation("perf_schema_file_instances", "COUNT_{}", ("read", "write"), label="mode")
    + per_operation("perf_schema_file_instances_bytes", "SUM_NUMBER_OF_BYTES_{}", ("read", "write"), label="mode")
)


def file_events_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"event_name": "event_name"}, FILE_EVENTS_FIELDS)


def file_instances_series(rows: Iterable[Mapping], remove_prefix: str = "") -> Series:
    """Rows with FILE_NAME, EVENT_NAME, COUNT_READ/WRITE, SUM_NUMBER_OF_BYTES_READ/WRITE.

    ``remove_prefix`` (the datadir, usually) is cut from the front of each file name.
    """
    rows = folded_rows(rows)
    for row in rows:
        name = label_text(row.get("file_name"))
        if remove_prefix and name.startswith(remove_prefix):
            row["file_name"] = name[len(remove_prefix):]
    return series_from_rows(rows, {"file_name": "file_name", "event_name": "event_name"}, FILE_INSTANCES_FIELDS)
