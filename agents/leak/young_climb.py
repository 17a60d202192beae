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
  ratio is 0.83-0.98 at 24 h, 0.75-0.86 at 30 h on held-out seeds, 0.98-1.02 on the leaks), so an
  accelerating leak from the first sample is confirmed only once its own shape says so, and a
  warm-up is held as long as its acceleration fades.

A leak that starts after the series paused (any stretch without significant growth) is judged
as before, whatever its shape.

Pure: reads the 15-minute buckets of the history.
"""

from __future__ import annotations

import math

from .history import SeriesHistory
from .trend import mann_kendall_z, theil_sen_slope

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
    times, means = history.bucket_means(now, span_seconds)
    if len(means) < PAUSE_BUCKETS:
        return False
    if history.buckets and history.buckets[0].start < now - span_seconds:
        return False  # the history reaches further back than the climb judged: not the agent's start
    # a pause anywhere (a stretch of buckets without significant growth) ends the question
    for end in range(len(means), PAUSE_BUCKETS - 1, -PAUSE_BUCKETS // 4):
        if mann_kendall_z(means[end - PAUSE_BUCKETS:end]) < significance_z:
            return False
    earlier, later = _rates(times, means, 2)
    if earlier <= 0 or later <= 0:
        return True
    if 1 / CURVED_RATIO <= later / earlier <= CURVED_RATIO:
        return False  # straight: a steady leak
    if later < earlier:
        return True  # the growth rate falls: a warm-up levelling off
    return not _steadily_accelerating(times, means)


def _rates(times: list[float], means: list[float], parts: int) -> list[float]:
    """Theil-Sen rates of ``parts`` equal consecutive parts of the climb (the last one takes
    the buckets left over)."""
    size = len(means) // parts
    # every few buckets of a long climb: the pairwise slopes grow with the square of the points
    every = max(1, size // MAX_POINTS_PER_HALF)
    bounds = [i * size for i in range(parts)] + [len(means)]
    return [theil_sen_slope(times[lo:hi:every], means[lo:hi:every]) for lo, hi in zip(bounds, bounds[1:])]


def _steadily_accelerating(times: list[float], means: list[float]) -> bool:
    """The rate rises third by third, and by as large a factor into the last third as into the
    middle one: an exponential's acceleration, not a warm-up's fading one (module docstring)."""
    first, middle, last = _rates(times, means, 3)
    if not 0 < first < middle < last:
        return False
    return math.log(last / middle) >= STEADY_ACCELERATION * math.log(middle / first)
