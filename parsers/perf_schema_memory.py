"""performance_schema.memory_summary_global_by_event_name rows to per-instrument series."""

from __future__ import annotations

from typing import Iterable, Mapping

from .types import Labels, labels_of
from .values import typed_int

SERIES_COLUMNS = (
    "current_number_of_bytes_used",
    "high_number_of_bytes_used",
    "current_count_used",
    "count_alloc",
    "count_free",
    "sum_number_of_bytes_alloc",
    "sum_number_of_bytes_free",
)


def memory_series(rows: Iterable[Mapping[str, object]]) -> dict[str, dict[Labels, int | str]]:
    """{column: {event_name labels: value}} for rows keyed by lower-case column names.

    An instrument that never allocated carries no information (MySQL 8 lists ~500 idle
    ones): left out, as mysqld_exporter leaves it out.
    """
    series: dict[str, dict[Labels, int | str]] = {}
    for row in rows:
        allocations = typed_int(row.get("count_alloc"))
        if allocations is not None and allocations <= 0:
            continue
        labels = labels_of(event_name=row["event_name"])
        # the index as a column too: managers (OpenNMS) name the row after it
        series.setdefault("event_name", {})[labels] = row["event_name"]
        for column in SERIES_COLUMNS:
            value = typed_int(row.get(column))
            if value is not None:
                series.setdefault(column, {})[labels] = value
    return series
