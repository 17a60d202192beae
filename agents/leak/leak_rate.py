"""While ``leaking``: the growth rate to serve, from the leak's whole span.

A trend window's rate is that of at most its own span (6 h by default).  Under a wander
correlated over hours that is no better hours later than at detection: on the rss-leak family
the forecast from it was still outside +-25 % in 19 of 50 seeds 8 h after detection (worst
+176 %).  The leak's rate is the slope of the flat-then-line fit over everything since a
little before it was confirmed (the confirming window's span before that moment): the bins
kept, in points of a few minutes, and beyond them the 15-minute buckets of the week kept.
So it keeps improving while the leak lasts (1 seed of 50 outside +-25 % at 8 h).  A restart
inside that span starts it after the restart: a warm-up's climb is no leak.

A leak that accelerates is the exception: the whole leak's rate averages its early, slow part,
and a forecast from it is too late -- the dangerous direction.  So when the recent window (the
longest trend window of 2 h at most: its rate is that of an hour ago) rises significantly faster
than the whole leak's line, the whole leak's rate plus that excess is served instead
(``recent_rate``), and with it the earlier time to the limit.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .assessment import prior_autocorrelation
from .config import LeakConfig, SeriesConfig
from .history import SeriesHistory
from .trend import autocorrelation_factor, estimate_trend, fit_hinge, slope_standard_error
from .warmup import find_restart

# The longest window whose rate may replace the whole leak's: a longer one's rate is that of
# hours ago (the 6-hour window's, of a rate doubling every 6 h, is 0.7 of the rate now).
RECENT_SECONDS = 7200.0

# Points from the knee on (itself included) the slope needs before it is served: fewer and one
# wander decides it.
MIN_POINTS_AFTER_ONSET = 5


@dataclass(frozen=True)
class LeakRate:
    rate_per_second: float
    seconds: float  # since the fitted onset
    growth: float  # bytes since the fitted onset
    recent: bool = False  # the rate is a recent window's, rising faster than the whole leak
    # the rate's standard error (bytes per second; agents/leak/forecast.py makes the band of it)
    error: float | None = None


def rate_over_leak(history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float,
                   span_seconds: float) -> LeakRate | None:
    """The hinge slope over the last ``span_seconds``, or None when it does not rise or too
    few points follow its knee."""
    if span_seconds > history.bins_kept_seconds:
        # a leak older than the bins kept: the 15-minute buckets' means keep the fit growing with it
        times, values = history.bucket_means(now, span_seconds)
    else:
        # the warm-up's overview points (a few minutes each over the bins kept): a width of our
        # own per span would add a cached grouping of the bins at every evaluation
        points = history.window(now, 2 * config.longest_window, 4 * config.window_points)
        first = next((i for i, t in enumerate(points.times) if t >= now - span_seconds), len(points.times))
        times, values = points.times[first:], points.values[first:]
    restart = find_restart(values, config.restart_drop_share, 10 * series.min_growth_bytes)
    if restart is not None:
        times, values = times[restart:], values[restart:]
    hinge = fit_hinge(times, values)
    # the best knee itself must leave enough points: one forced back from a younger onset
    # would spread its growth over a longer time and understate the rate
    if hinge is None or hinge.slope_per_second <= 0 or len(times) - hinge.knee < MIN_POINTS_AFTER_ONSET:
        return None
    seconds = now - times[hinge.knee]
    error = slope_standard_error(times[hinge.knee:], values[hinge.knee:])
    return LeakRate(hinge.slope_per_second, seconds, hinge.slope_per_second * seconds, error=error)


def recent_rate(history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float,
                whole: LeakRate) -> LeakRate:
    """``whole``, or the rate of the longest trend window of at most RECENT_SECONDS when it rises
    significantly faster than the whole leak's rate.  Significantly: Mann-Kendall on the window's
    points less the whole leak's line, its variance inflated by the larger of the window's own
    autocorrelation and that of the window before it (a 15-minute window under an hours-long
    wander swung to 9x the leak's rate with the first alone)."""
    windows = [s for s in config.windows_seconds if s <= RECENT_SECONDS]
    if not windows:
        return whole
    seconds = max(windows)
    points = history.window(now, seconds, config.window_points)
    if points.coverage < config.min_coverage or len(points.times) < 5:
        return whole
    start = points.times[0]
    beyond = [v - whole.rate_per_second * (t - start) for t, v in zip(points.times, points.values)]
    faster = estimate_trend(points.times, beyond, config.step_factor, series.resolution_bytes,
                            correct_above=float("inf"))
    if faster.z < config.significance_z or faster.slope_per_second <= 0:
        return whole
    own = autocorrelation_factor(points.times, beyond, faster.slope_per_second)
    prior = prior_autocorrelation(history, series, config, now, seconds)
    if faster.z / math.sqrt(max(own, prior or 1.0)) < config.significance_z:
        return whole
    rate = whole.rate_per_second + faster.slope_per_second
    # the band spans the whole leak's rate too: the recent one may be the wander's
    errors = [e for e in (slope_standard_error(points.times, points.values), whole.error) if e is not None]
    error = max([*errors, (rate - whole.rate_per_second) / 2]) if errors else None
    return dataclasses.replace(whole, rate_per_second=rate, recent=True, error=error)
