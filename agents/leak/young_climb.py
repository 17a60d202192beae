"""A climb the agent has watched from its own first sample: a warm-up or a leak, by its shape.

An agent started together with (or soon after) mysqld sees its memory start low and climb: a
buffer pool warming over a day or three follows a logistic curve, slow, then fast, then levelling
off towards a plateau.  Nothing in the history says where that plateau is (no level before a
restart to return to: agents/leak/warmup.py needs one), and after the first day every new high
clears the baseline, so the climb would pass for a leak.  What tells them apart is the shape, so
while the series has climbed without a pause since the history began:

- a straight climb (the rate of its later half within a factor of ``CURVED_RATIO`` of its earlier
  half's) is a leak running since the install: judged as any growth;
- a climb whose growth rate falls (the later half slower: the second derivative negative) is a
  warm-up past its midpoint, levelling off: never a leak;
- a climb whose growth rate rises is either a warm-up's first half or an accelerating leak.  Both
  are, at first, a level plus an exponential.  They part in how the acceleration goes on: an
  accelerating leak's rate grows by the same factor in equal times (the logarithm of its rate is
  a straight line), while a warm-up's acceleration fades as the cache fills -- on a logistic
  curve the log-rate's slope is k (1 - 2 s) at share s of the climb, falling from the start and
  zero at the midpoint, where the rate itself starts falling.  So the climb is cut in thirds and
  the growth factor of the rate from the middle third to the last compared with that from the
  first to the middle: an accelerating leak keeps it (``STEADY_ACCELERATION``), a warm-up's
  falls below it.  Over its first third a warm-up of three days cannot be told from a leak whose
  rate doubles every 6 hours (the log-rate's slope has fallen by under a tenth; measured: the
  ratio is 0.71-1.00 at 24-26 h on 12 seeds of 3-day warm-ups, one of them 0.99-1.00 from 24 to
  26 h, and 0.96-1.08 on the leaks).  So the ratio must clear ``STEADY_ACCELERATION`` by
  ``significance_z`` standard errors of the rates it comes from, each measured on the noise left
  around a cubic through its third (the curvature is no noise), widened for that noise's
  autocorrelation: the dictionary leaks clear it by 3.3-150 standard errors from 24 h (the
  least: seed 8, doubling every 39 h), the RSS warm-ups, whose wander is a hundred times theirs,
  by 2.0 at most.  An accelerating leak from the first sample is confirmed only once its own
  shape says so, and a warm-up is held as long as its acceleration fades.

Where the climb is shaped like a leak, its noise is measured around a cubic through the history
(``climb_noise``), not around the baseline's straight line: the accelerating leak is then
confirmed when day one ends, as a constant one is.

A leak that starts after the series paused (any stretch without significant growth) is judged
as before, whatever its shape.

Pure: reads the 15-minute buckets of the history.
"""

from __future__ import annotations

import math

from .history import Bucket, SeriesHistory
from .trend import mann_kendall_z, median, theil_sen_slope
from .warmup import least_squares

# A pause: this many buckets (6 h of 15-minute means) without significant growth.
PAUSE_BUCKETS = 24
# The later half of a climb rising this many times faster or slower than the earlier half is
# no straight line.
CURVED_RATIO = 2.0
MAX_POINTS_PER_HALF = 96
# An accelerating climb is a leak when the rate's growth factor over its last third is at least
# this power of the factor over its middle third (1: the same, as an exponential's; a warm-up's
# falls below it as its acceleration fades).
STEADY_ACCELERATION = 0.93


def warming_up(history: SeriesHistory, now: float, span_seconds: float, significance_z: float) -> bool:
    """True while the series has climbed, with no pause, since the first bucket of the history
    and that climb has a warm-up's shape: curved, and not steadily accelerating (see the module
    docstring)."""
    return _shape(history, now, span_seconds, significance_z) == WARMING


def climb_noise(history: SeriesHistory, now: float, exclude_seconds: float, span_seconds: float,
                significance_z: float) -> float | None:
    """The noise scale of the buckets before the last ``exclude_seconds`` around a smooth (cubic)
    fit, where the history is one unbroken climb shaped like a leak (straight or steadily
    accelerating); None otherwise.  Around the baseline's straight line a convex climb's
    curvature counts as noise (1.5 MB on an accelerating leak whose wander is 0.02 MB), and the
    margin it sets holds the leak back for hours."""
    if _shape(history, now, span_seconds, significance_z) != LEAK:
        return None
    ended = history.ended_buckets(now - exclude_seconds)
    return history.memo(("climb_noise", ended), lambda: _noise(list(history.buckets)[:ended]))


def _noise(buckets: list[Bucket]) -> float | None:
    """climb_noise's scale of the buckets (None for fewer than a pause's worth)."""
    if len(buckets) < PAUSE_BUCKETS:
        return None
    means = [b.mean for b in buckets]
    residuals = _cubic_residuals([b.start for b in buckets], means)
    centre = median(residuals)
    spread = 1.4826 * median([abs(r - centre) for r in residuals])
    # a bucket's own climb (from its neighbours' means) is not noise either
    inside = median([max(0.0, b.high - b.low - abs(after - before) / 2) / 2
                     for b, before, after in zip(buckets[1:], means, means[2:])])
    return max(spread, inside)


# What _shape finds.
NO_CLIMB, WARMING, LEAK = "no climb", "warming", "leak"


def _shape(history: SeriesHistory, now: float, span_seconds: float, significance_z: float) -> str:
    """NO_CLIMB unless the series has climbed, with no pause, since the first bucket of the
    history; else WARMING or LEAK by the climb's shape.  Worked out once per ended bucket."""
    if history.buckets and history.buckets[0].start < now - span_seconds:
        return NO_CLIMB  # the history reaches further back than the climb judged: not the agent's start
    return history.memo(("young_climb", history.ended_buckets(now), span_seconds, significance_z),
                        lambda: _judge_shape(*history.bucket_means(now, span_seconds), significance_z))


def _judge_shape(times: list[float], means: list[float], significance_z: float) -> str:
    if len(means) < PAUSE_BUCKETS:
        return NO_CLIMB
    # a pause anywhere (a stretch of buckets without significant growth) ends the question
    for end in range(len(means), PAUSE_BUCKETS - 1, -PAUSE_BUCKETS // 4):
        if mann_kendall_z(means[end - PAUSE_BUCKETS:end]) < significance_z:
            return NO_CLIMB
    earlier, later = _rates(times, means, 2)
    if earlier <= 0 or later <= 0:
        return WARMING
    if 1 / CURVED_RATIO <= later / earlier <= CURVED_RATIO:
        return LEAK  # straight: a steady leak
    if later < earlier:
        return WARMING  # the growth rate falls: a warm-up levelling off
    return LEAK if _steadily_accelerating(times, means, significance_z) else WARMING


def _parts(length: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` equal consecutive index ranges of ``length`` (the last takes what is left over)."""
    size = length // parts
    bounds = [i * size for i in range(parts)] + [length]
    return list(zip(bounds, bounds[1:]))


def _rates(times: list[float], means: list[float], parts: int) -> list[float]:
    """Theil-Sen rates of ``parts`` equal consecutive parts of the climb."""
    # every few buckets of a long climb: the pairwise slopes grow with the square of the points
    every = max(1, len(means) // parts // MAX_POINTS_PER_HALF)
    return [theil_sen_slope(times[lo:hi:every], means[lo:hi:every]) for lo, hi in _parts(len(means), parts)]


def _steadily_accelerating(times: list[float], means: list[float], significance_z: float) -> bool:
    """The rate rises third by third, and by as large a factor into the last third as into the
    middle one -- an exponential's acceleration, not a warm-up's fading one (module docstring)
    -- by more than the series' wander could make of the rates."""
    first, middle, last = rates = _rates(times, means, 3)
    if not 0 < first < middle < last:
        return False
    errors = [_rate_error(times[lo:hi], means[lo:hi]) for lo, hi in _parts(len(means), 3)]
    if None in errors:
        return False
    relative = [error / rate for error, rate in zip(errors, rates)]
    into_middle, into_last = math.log(middle / first), math.log(last / middle)
    error = math.hypot(math.hypot(relative[1], relative[2]),
                       STEADY_ACCELERATION * math.hypot(relative[0], relative[1]))
    return into_last - STEADY_ACCELERATION * into_middle >= significance_z * error


def _rate_error(times: list[float], means: list[float]) -> float | None:
    """Standard error of a straight line's slope over the points under the noise left around a
    cubic fit of them (the climb's curvature is no noise), widened for that noise's lag-1
    autocorrelation (an AR(1) series' effective number of points)."""
    n = len(times)
    if n < 8:
        return None
    residuals = _cubic_residuals(times, means)
    sse = sum(r * r for r in residuals)
    mean_t = sum(times) / n
    sxx = sum((t - mean_t) ** 2 for t in times)
    if sxx <= 0:
        return None
    lagged = sum(a * b for a, b in zip(residuals, residuals[1:]))
    rho = min(0.95, max(0.0, lagged / sse)) if sse > 0 else 0.0
    return math.sqrt(sse / (n - 4) / sxx * (1 + rho) / (1 - rho))


def _cubic_residuals(times: list[float], values: list[float]) -> list[float]:
    """The values less the least-squares cubic in time through them."""
    mean_t = sum(times) / len(times)
    hours = [(t - mean_t) / 3600.0 for t in times]
    columns = [[1.0] * len(hours), hours, [h * h for h in hours], [h ** 3 for h in hours]]
    solved = least_squares(columns, values)
    if solved is None:
        return [v - median(values) for v in values]
    coefficients, _ = solved
    return [v - sum(c * column[i] for c, column in zip(coefficients, columns)) for i, v in enumerate(values)]
