"""information_schema.QUERY_RESPONSE_TIME(_READ|_WRITE) (Percona's / MariaDB's plugin) as histograms.

Each row is one bucket: TIME (its upper bound in seconds, printed as padded text;
the last row is ``TOO LONG``), COUNT (queries in this bucket only) and TOTAL (their
summed time).  Prometheus buckets are cumulative; the ``TOO LONG`` row counts
towards +Inf (the total) but is no bucket of its own.
"""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple

from .table_rows import folded_rows, number


class Histogram(NamedTuple):
    count: int
    sum: float
    buckets: tuple[tuple[float, int], ...]  # (upper bound, cumulative count), ascending


def response_time_histogram(rows: Iterable[Mapping]) -> Histogram:
    count = 0
    total = 0.0
    buckets: list[tuple[float, int]] = []
    for row in folded_rows(rows):
        in_bucket = number(row.get("count")) or 0
        count += int(in_bucket)
        total += float(number(_stripped(row.get("total"))) or 0.0)
        bound = number(_stripped(row.get("time")))
        if bound is None or bound <= 0:  # "TOO LONG"
            continue
        buckets.append((float(bound), count))
    buckets.sort()
    return Histogram(count, total, tuple(buckets))


def _stripped(value: object) -> object:
    return value.strip() if isinstance(value, str) else value
