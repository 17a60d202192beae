"""A climb the agent has watched from its own first sample: a warm-up unless it is a straight line.

An agent started together with (or soon after) mysqld sees its memory start low and climb: a
buffer pool warming over a day or three follows a logistic curve, slow, then fast, then levelling
off towards a plateau.  Nothing in the history says where that plateau is (no level before a
restart to return to: agents/leak/warmup.py needs one), and after the first day every new high
clears the baseline, so the climb would pass for a leak.  What tells them apart is the shape: a
leak running since the install climbs at a steady rate; a warm-up's rate changes all the way --
faster while the cache fills, slower as it fills up.  So while the series has climbed without
a pause since the history began, its growth is confirmed only when the climb is straight: the
rate of its later half within a factor of ``CURVED_RATIO`` of its earlier half's.  An accelerating
leak since the install is missed that way (it cannot be told from the first half of a warm-up);
a leak that starts after the series paused (any stretch without significant growth) is judged as
before, whatever its shape.

Pure: reads the 15-minute buckets of the history.
"""

from __future__ import annotations

from .history import SeriesHistory
from .trend import mann_kendall_z, theil_sen_slope

# A pause: this many buckets (6 h of 15-minute means) without significant growth.
PAUSE_BUCKETS = 24
# The later half of a climb rising this many times faster or slower than the earlier half is
# no straight line.
CURVED_RATIO = 2.0
MAX_POINTS_PER_HALF = 96


def warming_up(history: SeriesHistory, now: float, span_seconds: float, significance_z: float) -> bool:
    """True while the series has climbed, with no pause, since the first bucket of the history
    and that climb is curved (see the module docstring)."""
    times, means = history.bucket_means(now, span_seconds)
    if len(means) < PAUSE_BUCKETS:
        return False
    if history.buckets and history.buckets[0].start < now - span_seconds:
        return False  # the history reaches further back than the climb judged: not the agent's start
    # a pause anywhere (a stretch of buckets without significant growth) ends the question
    for end in range(len(means), PAUSE_BUCKETS - 1, -PAUSE_BUCKETS // 4):
        if mann_kendall_z(means[end - PAUSE_BUCKETS:end]) < significance_z:
            return False
    half = len(means) // 2
    # every few buckets of a long climb: the pairwise slopes grow with the square of the points
    every = max(1, half // MAX_POINTS_PER_HALF)
    earlier = theil_sen_slope(times[:half:every], means[:half:every])
    later = theil_sen_slope(times[half::every], means[half::every])
    if earlier <= 0 or later <= 0:
        return True
    return not 1 / CURVED_RATIO <= later / earlier <= CURVED_RATIO
