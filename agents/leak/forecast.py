"""How long until a growing series hits its limit, at the rate the detector measured."""

from __future__ import annotations

import math
from typing import Any, Mapping

from mysql_snmp.agents.leak.config import PROCESS_LIMIT_SERIES, PROCESS_RSS_SERIES, SeriesConfig
from mysql_snmp.agents.leak.series_detector import Reading


def number(value: Any) -> float | None:
    """A finite number from a snapshot value; None for strings, NULL, NaN, booleans."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def forecast(
    reading: Reading, series: SeriesConfig, values: Mapping[str, Any]
) -> tuple[float | None, float | None]:
    """(seconds until the limit, the limit) at the current rate; None where unknown.

    A series with its own limit_bytes counts towards it.  mysqld's RSS counts towards
    the smallest of physical memory and the cgroup limit.  Any other series (dictionary,
    AHI, instruments) lives inside mysqld, so its growth eats the process's headroom:
    the forecast is that headroom divided by the series' rate.
    """
    process_limit = _smallest(values, series.limit_series or PROCESS_LIMIT_SERIES)
    if series.limit_bytes is not None:
        limit, room = series.limit_bytes, (series.limit_bytes - reading.level if reading.level is not None else None)
    elif series.is_process_memory:
        limit = process_limit
        room = limit - reading.level if limit is not None and reading.level is not None else None
    else:
        limit = process_limit
        rss = number(values.get(PROCESS_RSS_SERIES))
        room = limit - rss if limit is not None and rss is not None else None
    rate = reading.rate_bytes_per_hour
    if room is None or not reading.growing or not rate or rate <= 0:
        return None, limit
    return max(0.0, room) / (rate / 3600.0), limit


def _smallest(values: Mapping[str, Any], names: tuple[str, ...]) -> float | None:
    present = [v for v in (number(values.get(n)) for n in names) if v is not None and v > 0]
    return min(present) if present else None
