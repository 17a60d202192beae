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
spread of the day-over-day differences over the history up to half a day back, of the daily
means or of the buckets, whichever is larger: a rolling mean straddles two days, and a day busier
than the one before moves it; a fresh leak must not widen its own bar; never less than the
series' ``min_growth_bytes``), and the level keeps rising against yesterday: the leak's rate
(``ramp_rate``: a ramp fitted to the day-over-day differences of the last day's buckets, zero
before an onset searched over two days, then rising, flat once the leak is a day old) is above
the series' minimum rate, or under it by less than its standard error (a leak at exactly the
minimum rate is measured below it half the time).  A leak of rate r lifts
the daily mean by r x t^2 / 2 days in its first t hours, and a full day's leak lifts it by
r x 24 h.  A weekly cycle's busy days after a quiet weekend lift the daily mean too, but not
above the weekdays before the weekend: the highest of seven days is the reference (in an agent's
first week it cannot be).

Used only where the series cycles: the day-over-day differences of its buckets well under its
plain noise (a series without a cycle gains nothing from it).  Pure math on the history's buckets.

Weekly cycles.  A quiet weekend's daily mean is below the weekdays' before it, so a leak that
starts on a Friday evening has to climb out of the weekend's dip before it passes the highest
earlier day: days late.  Once the history holds the same time of day a week before, the daily
mean is also compared with that one day, the same weekday: a weekly cycle cancels there as a
daily one cancels in the daily mean, and a leak lifts it by its growth since the onset.  Its
margin is ``noise_margin_factor`` times how much the week-over-week differences move on their
own (of the daily means and of the buckets, up to half a day back), not the day-over-day ones,
which hold every weekend's fall and rise (measured: 2-4x larger).  The history keeps three days
of buckets beyond the baseline's week for this (EXTRA_DAYS): the same weekday a week before, and
two days of week-over-week differences.  Those few days may hold no weekend, and a weekend
busier than the one before moves its daily mean by a share of the cycle's amplitude (in the
model, up to 13 %); so that noise is never taken as less than WEEKEND_SHARE of the amplitude
(half a day's range), nor than half the day-over-day spread of the daily means (a weekly cycle
at most doubles that; the few days may hold no day busier than the rest).  Its rate is the ramp (or, for a leak older than the two days, the line)
fitted to the week-over-week differences of the last two days, and must reach the minimum rate.
And the last day's week-over-week differences must rise inside each day (``rises_within_days``):
a day busier than the same weekday before -- an AHI whose days run 0.9-1.1x, a weekend busier
than the last -- lifts that whole day from its start, more in its busy hours than in its quiet
ones, and its daily mean then stands above the week before's by as much as a day's leak would.
The few days of week-over-week differences kept cannot show how far such days go (measured: 225
false leaks in 30 days of three AHI seeds out of five); how the difference is shaped can.

An agent's first week.  Before a week is known a weekly cycle cannot be: a busy Monday after the
quiet weekend the agent started in lifts the daily mean and sets new highs exactly like a leak
does, and no earlier day of the same kind exists to compare with.  What still tells them apart
is where in the day the growth shows.  A busier day is more of the load's own cycle: it lifts
the busy hours and leaves the quiet ones (the night) where they were on the quiet days.  A leak
holds on to its memory when the load goes, so it lifts the quiet hours too.  So while the
history is shorter than a week, growth on a cycling series is confirmed only once the latest
quiet hours (the tenth of the day's range where the earlier days were lowest) also stand
above every earlier day at the same time by the seasonal margin (``quiet_lift``), or once the
earlier days are alike (``earlier_days_alike``): three or more of them whose daily means lie within the
margin of each other.  Any three days in a row hold a weekday, and a weekend among them
that moved its daily mean by less than the margin moves the next weekday's by less too, so a day
above all of them by the margin is not the weekly cycle's busier day.  Without that, a leak that
started just after the quiet hours waited for the next ones, a day later (measured: 27.3 h on
a cycle whose amplitude drifts through the day, seed 3).  And a
series with a day of history but not two (no day-over-day comparison yet) whose first day swung
like a daily cycle (``swings_daily``) is not confirmed at all until the comparison exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .history import SeriesHistory
from .trend import Trend, estimate_trend, find_steps, median, slope_standard_error

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
WEEK_DAYS = 7
# Days of buckets kept beyond the baseline's week: one for the daily mean of the same weekday a
# week before, two more for the spread of the week-over-week differences (the margin of that comparison).
EXTRA_DAYS = 3
# The share of the cycle's amplitude a weekend busier or quieter than the one before moves its
# daily mean by: the floor of the week-over-week noise, which a few days of differences may not show.
WEEKEND_SHARE = 0.05
# Days of week-over-week differences the leak's rate is fitted to (ramp_rate).
RAMP_WEEK_DAYS = 2
# The share of the leak's rate the week-over-week differences must rise by inside each day
# (rises_within_days): leaks under a weekly cycle read 0.75-0.99x of theirs.
WITHIN_DAY_SHARE = 0.5
# A day of the last one gets its own share of the daily profile where it holds this share of a day.
MIN_DAY_SHARE_FITTED = 0.125
# The quiet hours: where the earlier days' level is in this lowest share of its daily range.
QUIET_SHARE = 0.1
# The latest quiet buckets judged (an hour).
QUIET_BUCKETS = 4
# Earlier days alike enough to rule out a weekend among them ("An agent's first week"): any three
# days in a row hold a weekday.
ALIKE_DAYS = 3
# A first day swings like a daily cycle when one period of a day explains this share of its
# variance (after its straight-line trend is taken out).
SWING_SHARE = 0.7
# A daily profile cycles when it falls from some hour to a later one by this share of its range.
FALL_SHARE = 0.25


@dataclass(frozen=True)
class DailyPattern:
    bucket_seconds: float
    means: dict[int, float]  # bucket index (start // bucket_seconds) -> the bucket's mean
    daily: dict[int, float]  # bucket index -> the mean of the day of buckets up to it
    noise: float  # robust spread of the day-over-day differences of the bucket means
    daily_noise: float  # the same of the daily means
    # the same two of the week-over-week differences, once the history holds enough of them
    # (None before): a weekly cycle cancels there, so they are what the week's comparison is against
    week_noise: float | None = None
    week_daily_noise: float | None = None
    amplitude: float = 0.0  # half the range of a day's buckets (the median over the whole days)
    within_day: float = 0.0  # how much the hours of a day differ in a way that repeats (_day_shape)
    # ``noise`` of the buckets up to half a day back, as daily_noise is: what growth is judged
    # against, so a fresh leak does not raise its own bar (``noise`` where there are too few)
    settled_noise: float = 0.0
    # time of day -> how far that bucket stands from its day's median, over the days (_profile)
    profile: dict[int, float] = field(default_factory=dict, compare=False, repr=False)
    # ramp_rate's answers by the last bucket: a pattern serves the evaluations of a whole bucket
    ramps: dict[tuple[int, int], tuple[float, float, float] | None] = field(default_factory=dict, compare=False, repr=False)
    # lag in days -> the means and daily means with the deployments' steps taken out (stepless)
    _stepless: dict[int, tuple[dict[int, float], dict[int, float]]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def per_day(self) -> int:
        return round(DAY / self.bucket_seconds)

    def stepless(self, lag_days: int = 1) -> tuple[dict[int, float], dict[int, float]]:
        """(bucket means, daily means) with every step up of the level since the history began
        taken out (``level_steps``): what the comparisons with the day (``lag_days``) before read."""
        if lag_days not in self._stepless:
            steps = sorted(level_steps(self, lag_days))
            means, lifted, k = {}, 0.0, 0
            for i in sorted(self.means):
                while k < len(steps) and steps[k][0] <= i:
                    lifted, k = lifted + steps[k][1], k + 1
                means[i] = self.means[i] - lifted
            self._stepless[lag_days] = (means, _daily_means(means, self.per_day) if steps else self.daily)
        return self._stepless[lag_days]

    def excess(self, index: int) -> float | None:
        """The daily mean up to bucket ``index`` over the highest at that time on earlier days
        (steps taken out)."""
        daily = self.stepless(1)[1]
        earlier = self._earlier_daily_means(index)
        if index not in daily or not earlier:
            return None
        return daily[index] - max(earlier)

    def week_excess(self, index: int) -> float | None:
        """The daily mean up to bucket ``index`` over the one at that time a week before (steps taken out)."""
        daily = self.stepless(WEEK_DAYS)[1]
        before = index - WEEK_DAYS * self.per_day
        if index not in daily or before not in daily:
            return None
        return daily[index] - daily[before]

    def rate(self, last: int, lag_days: int = 1) -> Trend | None:
        """The trend of the day-over-day (``lag_days`` = 7: week-over-week) differences of the
        buckets over the last RATE_SPAN days up to ``last``: a leak's rate while it is younger
        than the lag, after which it stays at the lag's growth (and the lagged rate below is the leak's)."""
        found = self._differences(last, lag_days)
        return None if found is None else estimate_trend(*found, correct_above=float("inf"))

    def rate_error(self, last: int, lag_days: int = 1) -> float | None:
        """The standard error of that rate (bytes per second)."""
        found = self._differences(last, lag_days)
        return None if found is None else slope_standard_error(*found)

    def _differences(self, last: int, lag_days: int = 1) -> tuple[list[float], list[float]] | None:
        """(mid-times, differences ``lag_days`` days apart) of the stepless buckets of the last RATE_SPAN days."""
        span = round(RATE_SPAN * self.per_day)
        return self.lagged_differences(last, lag_days, span, max(5, span // 2))

    def lagged_differences(self, last: int, lag_days: int, span: int,
                           enough: float) -> tuple[list[float], list[float]] | None:
        """(mid-times, differences ``lag_days`` days apart) of the stepless buckets of the ``span``
        buckets up to ``last``; None where fewer than ``enough`` of them are known."""
        means, lag = self.stepless(lag_days)[0], lag_days * self.per_day
        indices = [i for i in range(last - span + 1, last + 1) if i in means and i - lag in means]
        if len(indices) < enough:
            return None
        times = [(i + 0.5) * self.bucket_seconds for i in indices]
        return times, [means[i] - means[i - lag] for i in indices]

    def day_over_day_rate(self, last: int, lag_days: int = 1) -> float | None:
        """Bytes per second from how far the last RECENT_BUCKETS stand above the same time the day
        (``lag_days``) before (the median of their differences, over the lag): the leak's rate once
        it is older than the lag, when the differences' slope has flattened at the lag's growth."""
        found = self._differences(last, lag_days)
        if found is None:
            return None
        return median(found[1][-RECENT_BUCKETS:]) / (lag_days * DAY)

    def earlier_days_alike(self, index: int, spread: float) -> bool:
        """Whether at least ALIKE_DAYS earlier days are known at the time of bucket ``index`` and
        their daily means (steps taken out) lie within ``spread`` of each other."""
        earlier = self._earlier_daily_means(index)
        return len(earlier) >= ALIKE_DAYS and max(earlier) - min(earlier) < spread

    def _earlier_daily_means(self, index: int) -> list[float]:
        """The stepless daily means at the time of bucket ``index`` on up to DAYS_BACK earlier days."""
        daily = self.stepless(1)[1]
        return [daily[i] for i in (index - k * self.per_day for k in range(1, DAYS_BACK + 1)) if i in daily]

    def quiet_lift(self, last: int) -> float | None:
        """How far the latest quiet buckets of the last day stand above the highest of the
        earlier days at the same time (the median over QUIET_BUCKETS of them); None when
        the earlier days do not cover most of the day.

        The quiet buckets are those where that highest earlier level is in the lowest
        QUIET_SHARE of its range over the day: the hours a busier day leaves alone."""
        highest: dict[int, float] = {}
        for i in range(last - self.per_day + 1, last + 1):
            earlier = [self.means[j] for j in (i - k * self.per_day for k in range(1, WEEK_DAYS + 1))
                       if j in self.means]
            if earlier and i in self.means:
                highest[i] = max(earlier)
        if len(highest) < MIN_DAY_COVERAGE * self.per_day:
            return None
        low, high = min(highest.values()), max(highest.values())
        quiet = [i for i in sorted(highest) if highest[i] <= low + QUIET_SHARE * (high - low)]
        if len(quiet) < QUIET_BUCKETS:
            return None
        return median([self.means[i] - highest[i] for i in quiet[-QUIET_BUCKETS:]])


def _daily_means(means: dict[int, float], per_day: int) -> dict[int, float]:
    """Bucket index -> the mean of the day of buckets up to it (where most of them are known)."""
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
    return daily


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
    daily = _daily_means(means, per_day)
    recent = max(means) - per_day // 2
    differences, daily_differences = _lag_differences(means, daily, per_day, recent)
    if len(differences) < per_day // 2 or len(daily_differences) < per_day // 4:
        return None
    settled = _bucket_differences(means, per_day, recent)
    noise = _spread(differences)
    settled_noise = _spread(settled) if len(settled) >= per_day // 2 else noise
    # the week's buckets too end half a day back: there are few of them, and a leak would
    # otherwise be much of them
    week, week_daily = _lag_differences(means, daily, WEEK_DAYS * per_day, recent, recent)
    if len(week) < per_day // 2 or len(week_daily) < per_day // 4:
        week_noise = week_daily_noise = None
    else:
        week_noise, week_daily_noise = _spread(week), _spread(week_daily)
    whole = _whole_days(means, per_day)
    profile = _profile(whole)
    return DailyPattern(size, means, daily, noise, _spread(daily_differences),
                        week_noise, week_daily_noise, *_day_shape(whole, profile, per_day),
                        settled_noise=settled_noise, profile=profile)


def _day_shape(whole: list[dict[int, float]], profile: dict[int, float], per_day: int) -> tuple[float, float]:
    """(half the range of the buckets of a day, the median over the days mostly covered; how much
    the hours of a day differ in a way that repeats: the standard deviation over the hours of the
    day's profile, or 0 where that profile never falls back).  The profile is, for each time of
    day, the median over those days of how far the bucket stands from its day's median: a cycle
    repeats there, while a wander, and a step at some hour of one day, are of one day and cancel.
    Two deployment steps a day apart at the same hour repeat too (measured: a false leak on day
    2.9), but a step only rises, while a cycle's busy hours end: its profile falls back by at
    least half its range within the day, and by most of it with a leak of up to twice its
    amplitude a day on top (_falls_back).  ``whole`` are the days mostly covered (_whole_days),
    ``profile`` theirs (_profile)."""
    if not whole:
        return 0.0, 0.0
    amplitude = median([(max(d.values()) - min(d.values())) / 2 for d in whole])
    profile = list(profile.values())
    if len(profile) < 2 or not _falls_back(profile, max(1, per_day // 24)):
        return amplitude, 0.0
    centre = sum(profile) / len(profile)
    return amplitude, math.sqrt(sum((p - centre) ** 2 for p in profile) / len(profile))


def _whole_days(means: dict[int, float], per_day: int) -> list[dict[int, float]]:
    """The days (time of day -> bucket mean) that hold most of their buckets."""
    days: dict[int, dict[int, float]] = {}
    for i, m in means.items():
        days.setdefault(i // per_day, {})[i % per_day] = m
    return [d for d in days.values() if len(d) >= MIN_DAY_COVERAGE * per_day]


def _profile(whole: list[dict[int, float]]) -> dict[int, float]:
    """Time of day -> the median over the days of how far the bucket stands from its day's
    median (times of day that more than half the days hold)."""
    by_time: dict[int, list[float]] = {}
    for day in whole:
        centre = median(list(day.values()))
        for time, m in day.items():
            by_time.setdefault(time, []).append(m - centre)
    return {t: median(by_time[t]) for t in sorted(by_time) if len(by_time[t]) * 2 > len(whole)}


def rises_within_days(pattern: DailyPattern, last: int, lag_days: int, rate: float) -> bool:
    """Whether the last day's differences ``lag_days`` apart rise inside each day by at least
    WITHIN_DAY_SHARE of ``rate`` (bytes per second): a leak adds its rate to every bucket, while
    a day busier than the same weekday before lifts that whole day, and more in its busy hours
    than in its quiet ones.  So each day of the last one (as the pattern counts days) gets its own
    level and its own share of the daily profile, and what rises beyond them is the slope.
    Measured on an AHI whose days differ by up to a fifth: 2.3-2.6 MB/h without the days' own
    terms, -0.06 with them; leaks under a weekly cycle read 0.75-0.99x their rate.  True where
    the fit cannot be made (too few buckets, no profile)."""
    per_day, size, profile = pattern.per_day, pattern.bucket_seconds, pattern.profile
    found = pattern.lagged_differences(last, lag_days, per_day, per_day // 2)
    if found is None:
        return True
    kept = [(math.floor(t / size), d) for t, d in zip(*found) if math.floor(t / size) % per_day in profile]
    if len(kept) < per_day // 2:
        return True
    span, differences = [i for i, _ in kept], [d for _, d in kept]
    columns = []
    for day in sorted({i // per_day for i in span}):
        columns.append([1.0 if i // per_day == day else 0.0 for i in span])
        if sum(columns[-1]) >= MIN_DAY_SHARE_FITTED * per_day:
            columns.append([profile[i % per_day] if i // per_day == day else 0.0 for i in span])
    # from the last bucket: each day has its own level, so where time starts moves no slope, and
    # seconds since 1970 would cost the normal equations most of their precision
    times = [(i - last) * size for i in span]
    slope = _least_squares_slope(columns, times, differences)
    return slope is None or slope >= WITHIN_DAY_SHARE * rate


def _falls_back(profile: list[float], per_hour: int) -> bool:
    """Whether the profile's hourly means, in the order of the day, fall from some hour to a
    later one by FALL_SHARE of their range (the wrap from the last hour to the first is not a
    fall: a step up has exactly that one)."""
    hourly = [sum(profile[k:k + per_hour]) / len(profile[k:k + per_hour]) for k in range(0, len(profile), per_hour)]
    peak, fall = hourly[0], 0.0
    for value in hourly:
        peak = max(peak, value)
        fall = max(fall, peak - value)
    return fall >= FALL_SHARE * (max(hourly) - min(hourly))


def _lag_differences(means: dict[int, float], daily: dict[int, float], lag: int, daily_until: int,
                     until: float = math.inf) -> tuple[list[float], list[float]]:
    """The differences ``lag`` buckets apart of the bucket means up to bucket ``until``, and of
    the daily means up to ``daily_until`` (half a day back: a fresh leak must not raise its own bar)."""
    days = [m - daily[i - lag] for i, m in daily.items() if i - lag in daily and i <= daily_until]
    return _bucket_differences(means, lag, until), days


def _bucket_differences(means: dict[int, float], lag: int, until: float) -> list[float]:
    """The differences ``lag`` buckets apart of the bucket means up to bucket ``until``."""
    return [m - means[i - lag] for i, m in means.items() if i - lag in means and i <= until]


def cycles(pattern: DailyPattern, plain_noise: float) -> bool:
    """The series follows a daily cycle: the same time of day varies much less than the series,
    and much less than a day's hours differ among themselves.  The second is what a cycle is;
    the first alone was passed by a series that steps up now and then (schema deployments): the
    steps widen its plain noise, the hours of a day between them are the same wander as the
    same hour a day apart, and a step then lifted the daily mean as a leak does (measured:
    10 false leaks in 5 seeds x 30 days)."""
    return pattern.noise < CYCLE_SHARE * min(plain_noise, pattern.within_day)


def lagged_rate(pattern: DailyPattern, last: int, lag_days: int) -> tuple[float | None, float | None]:
    """The leak's rate from the differences ``lag_days`` apart, and its standard error (bytes
    per second): the ramp fitted to them (``ramp_rate``); where it cannot be, their slope over
    the last half day or their level over the lag (the larger)."""
    found = ramp_rate(pattern, last, lag_days)
    if found is not None:
        return found[0], found[1]
    trend = pattern.rate(last, lag_days)
    rates = [r for r in (trend and trend.slope_per_second, pattern.day_over_day_rate(last, lag_days)) if r is not None]
    return (max(rates), pattern.rate_error(last, lag_days)) if rates else (None, None)


# A jump in the day-over-day differences from one bucket to the next is a step (a deployment) when
# it is this many times their typical change (trend.find_steps), and at least JUMP_FLOOR_SHARE of
# their noise (taking out less changes no verdict).
STEP_FACTOR = 8.0
JUMP_FLOOR_SHARE = 0.25
# A step is in one of the two levels compared: its increment there is this many times the other's.
EDGE_DOMINANCE = 3.0


def level_steps(pattern: DailyPattern, lag_days: int) -> list[tuple[int, float]]:
    """(bucket, size) of each step up of the level over the history, found in its differences
    ``lag_days`` apart: a weekly cycle's rise out of the weekend is a step a day apart, and part
    of the cycle a week apart (taken out there, it lowered every week-over-week difference:
    3 of 5 leaks under a weekly cycle missed their day).

    A step up (a schema deployment, a cache resized) on a cycling server lifts the daily mean
    above every earlier day's as a leak does, for a day against the day before and for a week
    against the week before (measured: 12 false leaks in 5 seeds x 30 days of a daily cycle with
    3-7 steps of 1-10 %, every one through the comparison with earlier days).  The cycle cancels
    in the differences, where a step of the level is a box: a jump from one bucket to the next,
    flat for the lag, a jump back; a leak rises by its rate every bucket.  As the trend windows do
    with the level, steps count for nothing: the comparisons read the level without them.

    A jump at bucket i is a step's front edge (the level stepped at i) or its back edge (it
    stepped a lag before, in the bucket compared with).  The level itself tells which: the step
    is in whichever of its two increments, at i and a lag before, stands further from that time
    of day's increment on the other days of the week (the cycle's own slope there), and by
    EDGE_DOMINANCE times the other: where both jumped, the cycle's amplitude changed from one day
    to the next (measured: a 288 MB jump at midnight in a model whose days each have their own
    amplitude, taken for a step, held a leak under a weekly cycle back from 23.6 h to 34.8 h).
    A step seen at both edges counts once; one that fell inside a bucket is two, in consecutive
    buckets.  More jumps in a row are a slope: the morning of a busy day compared with a quiet
    one's (measured: 88 MB a bucket for an hour, a Monday against a Sunday).  Steps down are
    left in: they only hide growth, and a weekly cycle's abrupt fall into the weekend, taken out,
    raised every later day (measured: 48 false leaks in one seed)."""
    means, per_day, lag = pattern.means, pattern.per_day, lag_days * pattern.per_day
    indices = [i for i in sorted(means) if i - lag in means]
    if len(indices) < 3:
        return []
    raw = [means[i] - means[i - lag] for i in indices]
    jumps = set(find_steps(raw, STEP_FACTOR, JUMP_FLOOR_SHARE * pattern.noise / STEP_FACTOR))
    steps: dict[int, float] = {}
    for j in sorted(jumps):
        if {j - 1, j + 1} <= jumps or {j - 2, j - 1} <= jumps or {j + 1, j + 2} <= jumps:
            continue  # three or more in a row: a slope
        i, before = indices[j], indices[j - 1]
        usual = [means[i - k * per_day] - means[before - k * per_day] for k in range(1, WEEK_DAYS + 1)
                 if k != lag_days and i - k * per_day in means and before - k * per_day in means]
        slope = median(usual) if usual else 0.0
        front = abs(means[i] - means[before] - slope)
        back = abs(means[i - lag] - means[before - lag] - slope)
        if max(front, back) < EDGE_DOMINANCE * min(front, back):
            continue  # both levels jumped: a day busier than the one before, not a step
        jump = raw[j] - raw[j - 1]
        start, size = (i, jump) if front >= back else (i - lag, -jump)
        if size > 0:
            steps.setdefault(start, size)
    return list(steps.items())


def ramp_rate(pattern: DailyPattern, last: int, lag_days: int = 1) -> tuple[float, float, float] | None:
    """(rate, standard error, seconds of growth the fit spans) of a leak from the differences ``lag_days`` apart of the buckets
    of the last day (a week apart: of the last RAMP_WEEK_DAYS days): zero before its onset,
    then rising at its rate for the lag, then flat at the lag's growth
    (``rate x clamp(t - onset, 0, lag)``), the onset searched from a day before those buckets
    (least squares; a week apart, a leak older than that is a straight line).  It reads every
    bucket since the onset, where the slope of the last half day reads a few, and a day's cycle
    busier than the day before tilts those (measured: a leak at 16.8 MB/h read at 14.5 MB/h a
    day after its onset, and week-over-week rates 20-33 % off a day after detection)."""
    key = (last, lag_days)
    if key not in pattern.ramps:
        pattern.ramps[key] = _fit_ramp(pattern, last, lag_days)
    return pattern.ramps[key]


def _fit_ramp(pattern: DailyPattern, last: int, lag_days: int) -> tuple[float, float, float] | None:
    per_day, size = pattern.per_day, pattern.bucket_seconds
    span = (1 if lag_days == 1 else RAMP_WEEK_DAYS) * per_day
    found = pattern.lagged_differences(last, lag_days, span, MIN_DAY_COVERAGE * per_day)
    if found is None:
        return None
    times, differences = found
    best = None
    for start in range(last - span - per_day + 1, last - 3):
        onset = start * size
        best = _better(best, [min(max(t - onset, 0.0), lag_days * DAY) for t in times], differences, 0.0)
    if lag_days > 1:  # older than the buckets read: a line
        mean_t = sum(times) / len(times)
        centred = [t - mean_t for t in times]
        best = _better(best, centred, differences, sum(differences) / len(differences))
    if best is None:
        return None
    sse, rate, sxx, residuals, extent = best
    lagged = sum(a * b for a, b in zip(residuals, residuals[1:]))
    rho = min(0.95, max(0.0, lagged / sse)) if sse > 0 else 0.0
    return rate, math.sqrt(sse / (len(residuals) - 2) / sxx * (1 + rho) / (1 - rho)), extent


def _better(best, xs: list[float], values: list[float], offset: float):
    """The least-squares fit of ``values - offset`` by ``rate x xs`` if its error is below ``best``'s:
    (error, rate, sum of xs squared, residuals, the seconds of growth xs span)."""
    sxx = sum(x * x for x in xs)
    if sxx <= 0:
        return best
    rate = sum(x * (v - offset) for x, v in zip(xs, values)) / sxx
    residuals = [v - offset - rate * x for x, v in zip(xs, values)]
    sse = sum(r * r for r in residuals)
    # the growth the fit spans: a ramp's xs are the time since its onset (up to the lag), a
    # centred line's run either side of its middle
    extent = max(xs) if min(xs) >= 0 else max(xs) - min(xs)
    return (sse, rate, sxx, residuals, extent) if best is None or sse < best[0] else best


def seasonal_leak(history: SeriesHistory, now: float) -> tuple[float | None, float | None, float | None]:
    """While a leak confirmed against the daily pattern lasts: (the daily mean's excess over the
    earlier days' or, where it is known, over the same weekday's a week before, whichever is
    larger: a leak going on through a quiet weekend is below the weekdays but above the last
    weekend; the leak's rate in bytes per second, that rate's standard error); None where the
    history cannot say.  The rate and its error come from the same differences: the
    week-over-week ones where the history holds them (a weekly cycle cancels there, and on a
    series without one they measure the same leak), else the day-over-day ones."""
    # the same pattern the assessment of this evaluation read (agents/leak/assessment.py)
    pattern = history.memo(("daily_pattern", history.ended_buckets(now)), lambda: daily_pattern(history, now))
    if pattern is None:
        return None, None, None
    last = math.floor(now / pattern.bucket_seconds) - 1
    excess = pattern.excess(last)
    week, weekly = pattern.week_excess(last), pattern.rate(last, WEEK_DAYS)
    # the week before counts while the leak still rises against it: once it stops, its level
    # stays above last week's for a week, and the end must not wait that long
    if week is not None and weekly is not None and weekly.slope_per_second > 0:
        excess = week if excess is None else max(excess, week)
    for lag in (WEEK_DAYS, 1):
        rate, error = lagged_rate(pattern, last, lag)
        if rate is not None:
            return excess, rate, _with_cycle_tilt(pattern, last, lag, error)
    return excess, None, None


def _with_cycle_tilt(pattern: DailyPattern, last: int, lag_days: int, error: float | None) -> float | None:
    """The served rate's error, for its forecast band: at least the tilt a day unlike the one
    before gives the ramp, the buckets' own day-over-day (week-over-week) noise over the time
    the ramp spans.  That error is correlated over the whole day, so the fit's residuals do not
    show it (measured: a day 10 % busier than the one before read a rate 32 % high 18 h into a
    leak, the fit's error 5-13 %).  Confirming a leak keeps the fit's own error."""
    ramp = ramp_rate(pattern, last, lag_days)
    noise = pattern.week_noise if lag_days > 1 and pattern.week_noise is not None else pattern.noise
    if ramp is None or ramp[2] <= 0 or not noise:
        return error
    tilt = noise / ramp[2]
    return tilt if error is None else max(error, tilt)


def swings_daily(times: list[float], values: list[float]) -> bool:
    """The points (15-minute means of at least a day) follow a daily cycle: one sine of a day's
    period explains SWING_SHARE of what a straight line leaves.  A wander correlated over an
    hour or two does not; the climb of a leak is the straight line."""
    if len(times) < 2 or times[-1] - times[0] < DAY * (1 - 1 / 24):
        return False
    omega = 2 * math.pi / DAY
    origin, centre = times[0], sum(values) / len(values)
    values = [v - centre for v in values]
    columns = [[1.0] * len(times), [(t - origin) / DAY for t in times],
               [math.cos(omega * t) for t in times], [math.sin(omega * t) for t in times]]
    line = _least_squares(columns[:2], values)
    full = _least_squares(columns, values)
    if line is None or full is None or line <= 0:
        return False
    return 1 - full / line >= SWING_SHARE


def _least_squares_slope(columns: list[list[float]], times: list[float], values: list[float]) -> float | None:
    """The coefficient of ``times`` in the least-squares fit of ``values`` on ``columns`` and
    ``times``; None when they are degenerate."""
    fitted = _fit(columns + [times], values)
    return None if fitted is None else fitted[0][-1]


def _least_squares(columns: list[list[float]], values: list[float]) -> float | None:
    """The residual sum of squares of the least-squares fit of ``values`` on ``columns``; None
    when they are degenerate."""
    fitted = _fit(columns, values)
    return None if fitted is None else fitted[1]


def _fit(columns: list[list[float]], values: list[float]) -> tuple[list[float], float] | None:
    """(coefficients, residual sum of squares) of the least-squares fit of ``values`` on
    ``columns`` (normal equations, Gaussian elimination); None when they are degenerate."""
    n = len(columns)
    a = [[sum(x * y for x, y in zip(columns[r], columns[c])) for c in range(n)]
         + [sum(x * v for x, v in zip(columns[r], values))] for r in range(n)]
    for c in range(n):
        pivot = max(range(c, n), key=lambda r: abs(a[r][c]))
        if abs(a[pivot][c]) < 1e-12 * max(1.0, abs(a[c][c])):
            return None
        a[c], a[pivot] = a[pivot], a[c]
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    coefficients = [a[r][n] / a[r][r] for r in range(n)]
    fitted = [sum(k * col[j] for k, col in zip(coefficients, columns)) for j in range(len(values))]
    return coefficients, sum((v - f) ** 2 for v, f in zip(values, fitted))
