"""While ``leaking``: the growth rate to serve, from the leak's whole span.

A trend window's rate is that of at most its own span (6 h by default).  Under a wander
correlated over hours that is no better hours later than at detection: on the rss-leak family
the forecast from it was still outside +-25 % in 19 of 50 seeds 8 h after detection (worst
+176 %).  The leak's rate is the slope of the flat-then-line fit over everything since a
little before it was confirmed (the confirming window's span before that moment): the bins
kept, in points of a few minutes, and beyond them the 15-minute buckets of the week kept.
So it keeps improving while the leak lasts (1 seed of 50 outside +-25 % at 8 h).  A restart
inside that span starts it after the restart: a warm-up's climb is no leak.
"""

from __future__ import annotations

from dataclasses import dataclass

from mysql_snmp.agents.leak.config import LeakConfig, SeriesConfig
from mysql_snmp.agents.leak.history import SeriesHistory
from mysql_snmp.agents.leak.trend import fit_hinge
from mysql_snmp.agents.leak.warmup import find_restart

# Points from the knee on (itself included) the slope needs before it is served: fewer and one
# wander decides it.
MIN_POINTS_AFTER_ONSET = 5


@dataclass(frozen=True)
class LeakRate:
    rate_per_second: float
    seconds: float  # since the fitted onset
    growth: float  # bytes since the fitted onset


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
    return LeakRate(hinge.slope_per_second, seconds, hinge.slope_per_second * seconds)
