"""Robust trend statistics on short series: pure math, no I/O, no numpy.

- Theil-Sen slope: the median of all pairwise slopes.  Half the points can be
  outliers before it moves, so noise spikes and single odd samples do not fake a trend.
- Mann-Kendall test: does the series rise more often than chance allows?  A rank
  test, so it needs no assumption about the noise distribution.  Ties (a dictionary
  cache that does not move for minutes) are corrected for, as in Kendall (1975).
- Steps: a one-off jump (schema deployment, restart) between two samples is an outlier
  among the increments; the statistics then use only pairs of points on the same side
  of it, so the jump counts for nothing and the trends before and after it still count.
  A gap in the times (no samples for a while) splits the series the same way.
- Autocorrelation: Mann-Kendall's variance assumes independent points.  Memory counters
  wander (a mean-reverting walk), and positively correlated points make any wander look
  significant; the variance is inflated by the Hamed-Rao factor, estimated from the
  autocorrelation of the ranks of the detrended series.

Windows here are kept to a few dozen points (the detector bins samples first), so
the O(n^2) pair loops stay cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of an empty sequence")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _pair_slopes(times: Sequence[float], values: Sequence[float], lo: int, hi: int, out: list[float]) -> None:
    for i in range(lo, hi - 1):
        ti, vi = times[i], values[i]
        for j in range(i + 1, hi):
            dt = times[j] - ti
            if dt != 0:
                out.append((values[j] - vi) / dt)


def theil_sen_slope(times: Sequence[float], values: Sequence[float], segments: Sequence[tuple[int, int]] | None = None) -> float:
    """Median of the slopes of all pairs with distinct times (value per unit of time).

    With ``segments`` (half-open index ranges), only pairs inside one segment count: a
    step between segments then contributes nothing, instead of a guess of its size.
    """
    slopes: list[float] = []
    for lo, hi in segments or ((0, len(times)),):
        _pair_slopes(times, values, lo, hi, slopes)
    if not slopes:
        raise ValueError("Theil-Sen slope needs two points at distinct times")
    return median(slopes)


def _kendall_s_and_variance(values: Sequence[float]) -> tuple[int, float]:
    n = len(values)
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
    return s, (n * (n - 1) * (2 * n + 5) - tie_term) / 18.0


def mann_kendall_z(values: Sequence[float], segments: Sequence[tuple[int, int]] | None = None) -> float:
    """Mann-Kendall Z score (normal approximation with tie correction and continuity correction).

    Positive Z: the series rises; Z above 3.09 is significant at p < 0.001 (one-sided).
    Values must be in time order.  With ``segments``, S and its variance are summed over
    the segments (each a Kendall test of its own), so a step between them counts for nothing.
    Returns 0.0 when the series has no variance.
    """
    s, variance = 0, 0.0
    for lo, hi in segments or ((0, len(values)),):
        if hi - lo >= 2:
            part_s, part_variance = _kendall_s_and_variance(values[lo:hi])
            s += part_s
            variance += part_variance
    if variance <= 0:
        return 0.0
    if s > 0:
        return (s - 1) / math.sqrt(variance)
    if s < 0:
        return (s + 1) / math.sqrt(variance)
    return 0.0


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, tied values sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def autocorrelation_factor(times: Sequence[float], values: Sequence[float], slope: float) -> float:
    """Hamed-Rao (1998) variance inflation n/n* of the Mann-Kendall statistic, at least 1.

    The lag-k autocorrelations of the ranks of the detrended series, those significant at
    5 %, weighted as in the variance of S.  Only inflation is applied: a negative
    correlation would make a trend look more significant, and caution is the point.
    """
    n = len(values)
    if n < 5:
        return 1.0
    ranks = _ranks([v - slope * t for t, v in zip(times, values)])
    mean = sum(ranks) / n
    centred = [r - mean for r in ranks]
    denominator = sum(c * c for c in centred)
    if denominator == 0:
        return 1.0
    bound = 1.96 / math.sqrt(n)
    total = 0.0
    # lags up to a third of the series: beyond, too few pairs to estimate a correlation
    for k in range(1, max(2, n // 3 + 1)):
        rho = sum(centred[i] * centred[i + k] for i in range(n - k)) / denominator
        if abs(rho) > bound:
            total += (n - k) * (n - k - 1) * (n - k - 2) * rho
    return max(1.0, 1.0 + 2.0 * total / (n * (n - 1) * (n - 2)))


def find_gaps(times: Sequence[float], factor: float = 3.0) -> list[int]:
    """Indices after a gap: a time step over ``factor`` times the median step."""
    if len(times) < 3:
        return []
    steps = [b - a for a, b in zip(times, times[1:])]
    typical = median(steps)
    return [i + 1 for i, d in enumerate(steps) if d > factor * typical]


def find_steps(values: Sequence[float], step_factor: float, resolution: float) -> list[int]:
    """Indices where a one-off jump lands (the jump is between index-1 and index).

    An increment is a step when it exceeds ``step_factor`` times the median absolute
    increment, floored at ``resolution``: the smallest meaningful change of the series.
    The floor matters twice: a series flat except for one jump still sees the jump as a
    step, and a slow leak that grows in 8 KiB heap blocks (mostly zero increments, a block
    now and then) does not see its blocks as steps.  The median, not a higher quantile,
    so that several deployments in one window are all recognised.
    """
    if len(values) < 3:
        return []
    increments = [b - a for a, b in zip(values, values[1:])]
    scale = max(median([abs(d) for d in increments]), resolution)
    threshold = step_factor * scale
    return [i + 1 for i, d in enumerate(increments) if abs(d) > threshold]


def segments_between(steps: Sequence[int], length: int) -> list[tuple[int, int]]:
    bounds = [0, *steps, length]
    return [(lo, hi) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]


@dataclass(frozen=True)
class Trend:
    """Trend of one window: slope per second, its significance and the growth it implies."""

    slope_per_second: float
    z: float
    points: int
    span_seconds: float
    # where the window was split: the index after each one-off jump, gap or given step, whose
    # crossing pairs the estimate leaves out (a caller comparing the window with another series
    # splits it at the same places)
    split: tuple[int, ...]
    autocorrelation: float = 1.0  # the Hamed-Rao factor the variance was inflated by
    # How far the level rose across those jumps, the falls not counted: a deployment's step up
    # lifts the level above every earlier high without being growth.
    rise_across_steps: float = 0.0

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
    correct_above: float = 0.0,
    autocorrelation: Callable[[], float | None] | None = None,
    steps: Sequence[int] = (),
) -> Trend:
    """Theil-Sen slope and Mann-Kendall Z of time-ordered points, one-off steps and gaps left
    out, Z corrected for autocorrelation.  The correction only ever lowers Z, so it is
    skipped (to save its cost) when Z is at most ``correct_above`` already.

    ``autocorrelation`` gives the factor measured elsewhere (the same series' noise before
    the window): the window's own residuals around one straight line are correlated
    whenever growth starts inside it, which would hide every leak's onset.  When it gives
    None, the factor comes from the window itself.  ``steps`` are split at too (where a
    related series jumped)."""
    if len(times) != len(values):
        raise ValueError("times and values differ in length")
    if len(times) < 3:
        raise ValueError("a trend needs at least three points")
    split = sorted(set(find_steps(values, step_factor, resolution)) | set(find_gaps(times)) | set(steps))
    segments = segments_between(split, len(values))
    try:
        slope = theil_sen_slope(times, values, segments)
    except ValueError:  # every segment a single point: nothing but steps
        slope = 0.0
    z = mann_kendall_z(values, segments)
    factor = 1.0
    if z > correct_above:
        measured = autocorrelation() if autocorrelation is not None else None
        factor = measured if measured is not None else autocorrelation_factor(times, values, slope)
    return Trend(
        slope_per_second=slope,
        z=z / math.sqrt(factor),
        points=len(times),
        span_seconds=times[-1] - times[0],
        split=tuple(split),
        autocorrelation=factor,
        rise_across_steps=sum(max(0.0, values[i] - values[i - 1]) for i in split),
    )


@dataclass(frozen=True)
class Hinge:
    """The least-squares fit ``level + slope * max(0, t - times[knee])``: flat, then a line."""

    knee: int
    level: float
    slope_per_second: float


def fit_hinge(times: Sequence[float], values: Sequence[float]) -> Hinge | None:
    """The best hinge over every knee with a point after it.

    Suffix sums make each knee cost O(1): the detector refits it at every sample while leaking."""
    n = len(times)
    if n < 2 or len(values) != n:
        return None
    origin, mean_v = times[-1], sum(values) / n
    ts = [t - origin for t in times]  # small magnitudes: the sums below subtract large terms
    ys = [v - mean_v for v in values]
    total = sum(y * y for y in ys)
    count = s_t = s_tt = s_y = s_ty = 0.0  # sums over the points from the knee on
    suffix = [(0.0, 0.0, 0.0, 0.0, 0.0)] * n
    for i in range(n - 1, -1, -1):
        count, s_t, s_tt, s_y, s_ty = count + 1, s_t + ts[i], s_tt + ts[i] * ts[i], s_y + ys[i], s_ty + ts[i] * ys[i]
        suffix[i] = (count, s_t, s_tt, s_y, s_ty)
    best: tuple[float, int, float, float] | None = None
    for k in range(n - 1):
        m, s_t, s_tt, s_y, s_ty = suffix[k]
        knee = ts[k]
        sum_x = s_t - m * knee
        sxx = s_tt - 2 * knee * s_t + m * knee * knee - sum_x * sum_x / n
        if sxx <= 1e-9 * (1.0 + s_tt):
            continue
        sxy = s_ty - knee * s_y  # the values are centred: no mean term
        sse = total - sxy * sxy / sxx
        if best is None or sse < best[0]:
            slope = sxy / sxx
            best = (sse, k, mean_v - slope * sum_x / n, slope)
    return None if best is None else Hinge(best[1], best[2], best[3])


def slope_standard_error(times: Sequence[float], values: Sequence[float]) -> float | None:
    """Standard error of the least-squares slope of the points, widened for their residuals'
    lag-1 autocorrelation (the effective number of points of an AR(1) series: a wander
    correlated over hours tells less than its count of points); None under five points."""
    n = len(times)
    if n < 5 or len(values) != n:
        return None
    mean_t, mean_v = sum(times) / n, sum(values) / n
    sxx = sum((t - mean_t) ** 2 for t in times)
    if sxx <= 0:
        return None
    slope = sum((t - mean_t) * (v - mean_v) for t, v in zip(times, values)) / sxx
    residuals = [v - mean_v - slope * (t - mean_t) for t, v in zip(times, values)]
    sse = sum(r * r for r in residuals)
    lagged = sum(a * b for a, b in zip(residuals, residuals[1:]))
    rho = min(0.95, max(0.0, lagged / sse)) if sse > 0 else 0.0
    return math.sqrt(sse / (n - 2) / sxx * (1 + rho) / (1 - rho))
