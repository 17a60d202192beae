"""While ``leaking``: has the leak's growth stopped?

Under wandering noise every trend window's significance dips now and then while a leak goes on,
so "no window grows any more" is no sign that it ended (the rss-leak family left ``leaking`` in 16
of 50 seeds that way).  The question is put the other way round: over some window, does the series
rise significantly *less* than the leak that confirmed it?  Half the leak's rate (never less than
the series' minimum rate) is taken off the window's points, and Mann-Kendall, its variance
corrected for autocorrelation as for growth, must find what is left falling.  A leak that goes on
leaves it rising at half its rate or more; one that stopped leaves it falling at that rate.

Only windows over which that fall would reach the noise margin are judged: over shorter ones the
wander alone fakes it, however the ranks come out (with half the margin, a 2-hour window under a
40-minute wander ended a leak that went on in 15 of 50 rss-leak seeds).
"""

from __future__ import annotations

import math

from .assessment import prior_autocorrelation
from .config import LeakConfig, SeriesConfig
from .history import SeriesHistory
from .trend import autocorrelation_factor, estimate_trend

# The share of the leak's rate a window must fall short of, significantly, for the growth to be
# over: a continuing leak whose rate was overestimated up to twice still passes.
TESTED_SHARE = 0.5


def tested_rate(series: SeriesConfig, leak_rate_per_second: float | None, level: float | None = None) -> float:
    """Bytes per second the series must significantly fall short of (see the module docstring)."""
    floor = series.min_rate_at(level) / 3600.0
    return max(floor, TESTED_SHARE * (leak_rate_per_second or 0.0))


def growth_stopped(history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float,
                   leak_rate_per_second: float | None, margin: float, leaking_seconds: float) -> float | None:
    """The shortest window (seconds) over which the series rose significantly less than the
    tested share of the leak's rate; None while no window shows that.  Only windows inside the
    ``leaking_seconds`` since the leak was confirmed: a longer one holds the flat past before
    the onset, which falls short of any rate."""
    rate = tested_rate(series, leak_rate_per_second, history.level())
    # the trend windows, and all the bins kept: under the slowest wander only the longest span
    # can show a stop at a rate near the series' minimum
    for seconds in (*config.windows_seconds, 2 * config.longest_window):
        if rate * seconds < margin or seconds > leaking_seconds:
            continue
        points = history.window(now, seconds, config.window_points)
        if points.coverage < config.min_coverage or len(points.times) < 5:
            continue
        start = points.times[0]
        shortfall = [v - rate * (t - start) for t, v in zip(points.times, points.values)]
        trend = estimate_trend(points.times, shortfall, config.step_factor, series.resolution_bytes,
                               correct_above=float("inf"))
        if trend.z > -config.significance_z:
            continue
        # the larger of the window's own correlation and that of the window before it: a stop
        # inside the window inflates the first, a fresh wander may hide from the second
        own = autocorrelation_factor(points.times, shortfall, trend.slope_per_second)
        prior = prior_autocorrelation(history, series, config, now, seconds)
        if trend.z / math.sqrt(max(own, prior or 1.0)) <= -config.significance_z:
            return seconds
    return None
