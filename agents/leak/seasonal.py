"""Growth judged against the series' own daily pattern: a leak riding on a cycle.

Most servers follow the working day.  Against the plain high-water mark a leak under such a
cycle shows only when a day's peak passes every earlier peak by the series' noise margin -- and
that margin, measured on a cycling history, is the cycle's own amplitude: a leak adding less than
a few amplitudes a day went unseen for days.  The cycle cancels in the mean over a whole day:
a busier day lifts its peak and (in the same proportion) deepens its trough, while a leak lifts
every hour of the day, the quiet night included.

So the series' daily mean -- the mean of the 15-minute buckets of the 24 hours up to a moment,
rolling -- is compared with its value at the same moment on each of up to seven earlier days.
Its excess over the highest of them is a leak when it clears a margin tied to how much that
daily mean moves from one day to the next on its own (``noise_margin_factor`` times the robust
spread of the day-over-day differences over the history, of the daily means or of the buckets,
whichever is larger: a rolling mean straddles two days, and a day busier than the one before
moves it; never less than the series' ``min_growth_bytes``), and the level keeps rising against
yesterday: the slope of the day-over-day difference over the last 12 hours, the leak's rate, is
above the series' minimum rate.  A leak of rate r lifts the daily mean by r x t^2 / 2 days in
its first t hours, and a full day's leak lifts it by r x 24 h.  A weekly cycle's busy days after a
quiet weekend lift the daily mean too, but not above the weekdays before the weekend: the
highest of seven days is the reference (in an agent's first week it cannot be).

Used only where the series cycles: the day-over-day differences of its buckets well under its
plain noise (a series without a cycle gains nothing from it).  Pure math on the history's buckets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .history import SeriesHistory
from .trend import Trend, estimate_trend, median, slope_standard_error

DAY = 86400.0
DAYS_BACK = 7
# The day-over-day noise must be under this share of the plain noise for the cycle to count.
CYCLE_SHARE = 0.5
# A daily mean needs this share of its day's buckets.
MIN_DAY_COVERAGE = 0.8
# The span the leak's rate is measured over, in days.
RATE_SPAN = 0.5
# The buckets (3 h) whose day-over-day differences give a day-old leak's rate.
RECENT_BUCKETS = 12


@dataclass(frozen=True)
class DailyPattern:
    bucket_seconds: float
    means: dict[int, float]  # bucket index (start // bucket_seconds) -> the bucket's mean
    daily: dict[int, float]  # bucket index -> the mean of the day of buckets up to it
    noise: float  # robust spread of the day-over-day differences of the bucket means
    daily_noise: float  # the same of the daily means

    @property
    def per_day(self) -> int:
        return round(DAY / self.bucket_seconds)

    def excess(self, index: int) -> float | None:
        """The daily mean up to bucket ``index`` over the highest at that time on earlier days."""
        earlier = [self.daily[i] for i in (index - k * self.per_day for k in range(1, DAYS_BACK + 1))
                   if i in self.daily]
        if index not in self.daily or not earlier:
            return None
        return self.daily[index] - max(earlier)

    def rate(self, last: int) -> Trend | None:
        """The trend of the day-over-day differences of the buckets over the last RATE_SPAN
        days up to ``last``: a leak's rate while it is younger than a day, after which it
        stays at the day's growth (and the day-over-day rate of the daily mean is the leak's)."""
        found = self._differences(last)
        return None if found is None else estimate_trend(*found, correct_above=float("inf"))

    def rate_error(self, last: int) -> float | None:
        """The standard error of that rate (bytes per second)."""
        found = self._differences(last)
        return None if found is None else slope_standard_error(*found)

    def _differences(self, last: int) -> tuple[list[float], list[float]] | None:
        """(mid-times, day-over-day differences) of the buckets of the last RATE_SPAN days."""
        span = round(RATE_SPAN * self.per_day)
        indices = [i for i in range(last - span + 1, last + 1) if i in self.means and i - self.per_day in self.means]
        if len(indices) < max(5, span // 2):
            return None
        times = [(i + 0.5) * self.bucket_seconds for i in indices]
        return times, [self.means[i] - self.means[i - self.per_day] for i in indices]

    def day_over_day_rate(self, last: int) -> float | None:
        """Bytes per second from how far the last RECENT_BUCKETS stand above the same time the day
        before (the median of their differences, over a day): the leak's rate once it is a day
        old, when the differences' slope has flattened at the day's growth."""
        found = self._differences(last)
        if found is None:
            return None
        return median(found[1][-RECENT_BUCKETS:]) / DAY


def _spread(values: list[float]) -> float:
    centre = median(values)
    return 1.4826 * median([abs(v - centre) for v in values])


def daily_pattern(history: SeriesHistory, now: float) -> DailyPattern | None:
    """The pattern of the completed buckets; None before two days of them (a daily mean to
    compare with another)."""
    size = history.bucket_seconds
    means = {math.floor(b.start / size): b.mean for b in history.buckets if b.start + size <= now}
    if not means:
        return None
    per_day = round(DAY / size)
    daily: dict[int, float] = {}
    first, last = min(means), max(means)
    total, count = 0.0, 0
    for i in range(first, last + 1):
        if i in means:
            total, count = total + means[i], count + 1
        leaving = i - per_day
        if leaving in means:
            total, count = total - means[leaving], count - 1
        if i - first + 1 >= per_day and count >= MIN_DAY_COVERAGE * per_day:
            daily[i] = total / count
    differences = [mean - means[i - per_day] for i, mean in means.items() if i - per_day in means]
    # the last half day is left out of the daily means' noise: a fresh leak must not raise its own bar
    recent = last - per_day // 2
    daily_differences = [m - daily[i - per_day] for i, m in daily.items() if i - per_day in daily and i <= recent]
    if len(differences) < per_day // 2 or len(daily_differences) < per_day // 4:
        return None
    return DailyPattern(size, means, daily, _spread(differences), _spread(daily_differences))


def cycles(pattern: DailyPattern, plain_noise: float) -> bool:
    """The series follows a daily cycle: the same time of day varies much less than the series."""
    return pattern.noise < CYCLE_SHARE * plain_noise


def seasonal_leak(history: SeriesHistory, now: float) -> tuple[float | None, float | None, float | None]:
    """While a leak confirmed against the daily pattern lasts: (the daily mean's excess over the
    earlier days', the leak's rate in bytes per second, that rate's standard error); None
    where the history cannot say."""
    pattern = daily_pattern(history, now)
    if pattern is None:
        return None, None, None
    last = math.floor(now / pattern.bucket_seconds) - 1
    trend = pattern.rate(last)
    rates = [r for r in (trend and trend.slope_per_second, pattern.day_over_day_rate(last)) if r is not None]
    return pattern.excess(last), max(rates) if rates else None, pattern.rate_error(last)
