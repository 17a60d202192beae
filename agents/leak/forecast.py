"""How long until a growing series hits its limit, at the rate the detector measured."""

from __future__ import annotations

import math
from typing import Any, Mapping

from .config import PROCESS_LIMIT_SERIES, PROCESS_RSS_SERIES, SeriesConfig
from .series_detector import Reading

# The band is the forecast at the rate this many standard errors either side of the one served
# (its error from the leak's points, widened for their autocorrelation); never narrower than
# MIN_BAND_SHARE of the rate either side.  Chosen so that the true time fell inside the band in
# at least 80 % of the seeds of every leak family at +1 h, +6 h and +24 h (tests/bench/bench_leak.py).
BAND_Z = 3.0
MIN_BAND_SHARE = 0.15


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
    room, limit = _room(reading, series, values)
    rate = reading.rate_bytes_per_hour
    if room is None or not reading.growing or not rate or rate <= 0:
        return None, limit
    return max(0.0, room) / (rate / 3600.0), limit


def forecast_band(
    reading: Reading, series: SeriesConfig, values: Mapping[str, Any]
) -> tuple[float | None, float | None]:
    """(earliest, latest) seconds until the limit: the forecast at the rate BAND_Z standard
    errors above and below the one served.  Served while leaking, when the rate's error is
    known; the latest is None when the rate's lower end is not growth (no limit in sight)."""
    seconds, _ = forecast(reading, series, values)
    error = reading.rate_error_bytes_per_hour
    if seconds is None or error is None:
        return None, None
    rate = reading.rate_bytes_per_hour
    spread = max(BAND_Z * error, MIN_BAND_SHARE * rate)
    lower = seconds * rate / (rate + spread)
    upper = seconds * rate / (rate - spread) if rate > spread else None
    return lower, upper


def _room(reading: Reading, series: SeriesConfig, values: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(bytes left until the limit, the limit) for the series; None where unknown."""
    process_limit = _smallest(values, series.limit_series or PROCESS_LIMIT_SERIES)
    if series.limit_bytes is not None:
        return (series.limit_bytes - reading.level if reading.level is not None else None), series.limit_bytes
    if series.is_process_memory:
        limit = process_limit
        return (limit - reading.level if limit is not None and reading.level is not None else None), limit
    limit = process_limit
    rss = number(values.get(PROCESS_RSS_SERIES))
    return (limit - rss if limit is not None and rss is not None else None), limit


def _smallest(values: Mapping[str, Any], names: tuple[str, ...]) -> float | None:
    present = [v for v in (number(values.get(n)) for n in names) if v is not None and v > 0]
    return min(present) if present else None
