"""Robust trend statistics on short series: pure math, no I/O, no numpy.

- Theil-Sen slope: the median of all pairwise slopes.  Half the points can be
  outliers before it moves, so noise spikes and single odd samples do not fake a trend.
- Mann-Kendall test: does the series rise more often than chance allows?  A rank
  test, so it needs no assumption about the noise distribution.  Ties (a dictionary
  cache that does not move for minutes) are corrected for, as in Kendall (1975).
- Step removal: a one-off jump (schema deployment, restart) between two samples is an
  outlier among the increments; replacing it by a typical increment keeps the
  trend of what happened before and after the jump.

Windows here are kept to a few dozen points (the detector bins samples first), so
the O(n^2) pair loops stay cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def quantile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile, q in [0, 1]."""
    if not values:
        raise ValueError("quantile of an empty sequence")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def theil_sen_slope(times: Sequence[float], values: Sequence[float]) -> float:
    """Median of the slopes of all pairs with distinct times (units of value per unit of time)."""
    slopes = []
    n = len(times)
    for i in range(n - 1):
        ti, vi = times[i], values[i]
        for j in range(i + 1, n):
            dt = times[j] - ti
            if dt != 0:
                slopes.append((values[j] - vi) / dt)
    if not slopes:
        raise ValueError("Theil-Sen slope needs two points at distinct times")
    return median(slopes)


def theil_sen_intercept(times: Sequence[float], values: Sequence[float], slope: float) -> float:
    return median([v - slope * t for t, v in zip(times, values)])


def mann_kendall_z(values: Sequence[float]) -> float:
    """Mann-Kendall Z score (normal approximation with tie correction and continuity correction).

    Positive Z: the series rises; Z above 3.09 is significant at p < 0.001 (one-sided).
    Values must be in time order.  Returns 0.0 when the series has no variance.
    """
    n = len(values)
    if n < 3:
        return 0.0
    s = 0
    for i in range(n - 1):
        vi = values[i]
        for j in range(i + 1, n):
            vj = values[j]
            if vj > vi:
                s += 1
            elif vj < vi:
                s -= 1
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    tie_term = sum(c * (c - 1) * (2 * c + 5) for c in counts.values() if c > 1)
    variance = (n * (n - 1) * (2 * n + 5) - tie_term) / 18.0
    if variance <= 0:
        return 0.0
    if s > 0:
        return (s - 1) / math.sqrt(variance)
    if s < 0:
        return (s + 1) / math.sqrt(variance)
    return 0.0


def remove_steps(values: Sequence[float], step_factor: float, resolution: float) -> tuple[list[float], float]:
    """Replace one-off jumps between consecutive points by a typical increment.

    An increment is a step when it exceeds ``step_factor`` times the 90th percentile of
    the absolute increments (floored at ``resolution``, the smallest meaningful change of
    the series, so a series that is flat except for one jump still sees the jump as a step).
    The 90th percentile rather than the median: a slow leak that grows in 8 KiB blocks shows
    mostly zero increments, and its blocks must not be mistaken for steps.

    Returns the adjusted series (same first value) and the sum of the removed steps.
    """
    if len(values) < 3:
        return list(values), 0.0
    increments = [b - a for a, b in zip(values, values[1:])]
    scale = max(quantile([abs(d) for d in increments], 0.9), resolution)
    threshold = step_factor * scale
    ordinary = [d for d in increments if abs(d) <= threshold]
    typical = median(ordinary) if ordinary else 0.0
    adjusted = [float(values[0])]
    removed = 0.0
    for d in increments:
        if abs(d) > threshold:
            removed += d - typical
            d = typical
        adjusted.append(adjusted[-1] + d)
    return adjusted, removed


@dataclass(frozen=True)
class Trend:
    """Trend of one window: slope per second, its significance and the growth it implies."""

    slope_per_second: float
    z: float
    points: int
    span_seconds: float
    steps_removed: float

    @property
    def rate_per_hour(self) -> float:
        return self.slope_per_second * 3600.0

    @property
    def growth(self) -> float:
        return self.slope_per_second * self.span_seconds


def estimate_trend(
    times: Sequence[float],
    values: Sequence[float],
    step_factor: float = 8.0,
    resolution: float = 1.0,
) -> Trend:
    """Step-adjusted Theil-Sen slope and Mann-Kendall Z of time-ordered points."""
    if len(times) != len(values):
        raise ValueError("times and values differ in length")
    if len(times) < 3:
        raise ValueError("a trend needs at least three points")
    adjusted, removed = remove_steps(values, step_factor, resolution)
    return Trend(
        slope_per_second=theil_sen_slope(times, adjusted),
        z=mann_kendall_z(adjusted),
        points=len(times),
        span_seconds=times[-1] - times[0],
        steps_removed=removed,
    )
