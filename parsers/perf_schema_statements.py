"""performance_schema.events_statements_summary_by_digest: per digest, and summed over all digests."""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple

from .table_rows import PICOSECONDS, Field, Series, folded_rows, label_text, number, series_from_rows

DIGEST_LABELS = {"schema": "schema_name", "digest": "digest", "digest_text": "digest_text"}
DIGEST_FIELDS = (
    Field("perf_schema_events_statements", "count_star"),
    Field("perf_schema_events_statements_seconds", "sum_timer_wait", PICOSECONDS),
    Field("perf_schema_events_statements_lock_time_seconds", "sum_lock_time", PICOSECONDS),
    Field("perf_schema_events_statements_cpu_time_seconds", "sum_cpu_time", PICOSECONDS),  # MySQL 8.0.28+
    Field("perf_schema_events_statements_errors", "sum_errors"),
    Field("perf_schema_events_statements_warnings", "sum_warnings"),
    Field("perf_schema_events_statements_rows_affected", "sum_rows_affected"),
    Field("perf_schema_events_statements_rows_sent", "sum_rows_sent"),
    Field("perf_schema_events_statements_rows_examined", "sum_rows_examined"),
    Field("perf_schema_events_statements_tmp_tables", "sum_created_tmp_tables"),
    Field("perf_schema_events_statements_tmp_disk_tables", "sum_created_tmp_disk_tables"),
    Field("perf_schema_events_statements_sort_merge_passes", "sum_sort_merge_passes"),
    Field("perf_schema_events_statements_sort_rows", "sum_sort_rows"),
    Field("perf_schema_events_statements_no_index_used", "sum_no_index_used"),
)

# Columns summed over every digest, each a scalar ``perf_schema_events_statements_sum_<column>``.
SUM_COLUMNS = (
    "count_star", "sum_created_tmp_disk_tables", "sum_created_tmp_tables", "sum_errors", "sum_lock_time",
    "sum_no_good_index_used", "sum_no_index_used", "sum_rows_affected", "sum_rows_examined", "sum_rows_sent",
    "sum_select_full_join", "sum_select_full_range_join", "sum_select_range", "sum_select_range_check",
    "sum_select_scan", "sum_sort_merge_passes", "sum_sort_range", "sum_sort_rows", "sum_sort_scan",
    "sum_timer_wait", "sum_warnings",
)


class Summary(NamedTuple):
    count: int
    sum: float
    quantiles: tuple[tuple[str, float], ...]  # (quantile label, value)


# MySQL 8.0.28+ QUANTILE_<n> columns (picoseconds).  mysqld_exporter labels them quantile="95",
# "99", "999" (not 0.95 ...): kept, so existing queries find them.
QUANTILES = (("95", "quantile_95"), ("99", "quantile_99"), ("999", "quantile_999"))


def events_statements_series(rows: Iterable[Mapping]) -> Series:
    """Rows of the digest table; SCHEMA_NAME NULL (statements outside any schema) is ``NONE``.

    With QUANTILE_95/99/999 (MySQL 8.0.28+) each digest also gets a latency summary.
    """
    rows = folded_rows(rows, null_as_none=("schema_name",))
    series = series_from_rows(rows, DIGEST_LABELS, DIGEST_FIELDS)
    for row in rows:
        summary = _latency(row)
        if summary is not None:
            labels = tuple(sorted((label, label_text(row.get(column))) for label, column in DIGEST_LABELS.items()))
            series.setdefault("perf_schema_events_statements_latency_seconds", {})[labels] = summary
    return series


def _latency(row: Mapping) -> Summary | None:
    count, total = number(row.get("count_star")), number(row.get("sum_timer_wait"))
    quantiles = tuple((label, number(row.get(column))) for label, column in QUANTILES)
    if count is None or total is None or any(value is None for _, value in quantiles):
        return None
    return Summary(int(count), total * PICOSECONDS, tuple((label, value * PICOSECONDS) for label, value in quantiles))


def events_statements_sum_values(rows: Iterable[Mapping]) -> dict[str, float]:
    """The one row of ``SELECT SUM(COUNT_STAR) AS COUNT_STAR, SUM(SUM_ERRORS) AS SUM_ERRORS, ...``.

    Timer sums stay in picoseconds except SUM_TIMER_WAIT, which is seconds (as mysqld_exporter serves them).
    """
    values: dict[str, float] = {}
    for folded in folded_rows(rows):
        for column in SUM_COLUMNS:
            value = number(folded.get(column))
            if value is None:  # SUM() over an empty table is NULL
                continue
            if column == "count_star":
                values["perf_schema_events_statements_sum_count"] = value
            elif column == "sum_timer_wait":
                values["perf_schema_events_statements_sum_timer_wait_seconds"] = value * PICOSECONDS
            elif column == "sum_lock_time":
                values["perf_schema_events_statements_sum_lock_time_picoseconds"] = value
            else:
                values[f"perf_schema_events_statements_sum_{column.removeprefix('sum_')}"] = value
    return values
