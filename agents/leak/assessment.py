"""Judge one series at one moment: is it growing, is the growth a leak, and why.

Three questions, each answered per trend window (15 min, 30 min, 2 h, 6 h by default):

1. Growing?  Mann-Kendall (its variance corrected for autocorrelation) says the binned
   series rises, the Theil-Sen rate is above the series' minimum rate, and the growth over
   the window is more than the series' own noise could produce.  One-off steps and gaps
   do not count (only pairs of points on one side of them do).
2. A leak? The current level clears the highest level of the history before the window by a
   margin tied to the series' noise scale, measured on that history. A warm-up after a
   restart returns to the old level and a daily cycle to yesterday's peak, so neither clears
   it; a leak keeps setting new highs. A step up inside the window (a deployment) is taken
   off the level first: a new plateau is not a new high. With less than
   ``mature_baseline_seconds`` (a day) of history a daily cycle cannot be known yet, so
   nothing is confirmed: growth to a level not seen since the agent started is ``suspect`` at
   most. After a restart a leak can grow for hours below the old high while the warm-up
   climbs; there the growth the fitted warm-up curve does not predict is judged the same way,
   its high-water mark being how far the series strayed from the curve since the restart.
3. Why?  When the explanatory series (Open_table_definitions) grows with it and the bytes
   per added table are plausible, the reason is ``tables``; otherwise ``unexplained``.
   A flat table count explains nothing and confirms nothing on its own.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Callable

from .config import LeakConfig, SeriesConfig
from .history import Baseline, SeriesHistory, WindowPoints
from .trend import (
    Trend, autocorrelation_factor, estimate_trend, fit_hinge, mann_kendall_z, median, segments_between,
    theil_sen_slope,
)
from .seasonal import (
    DAY, WEEK_DAYS, WEEKEND_SHARE, DailyPattern, cycles, daily_pattern, lagged_rate, rises_within_days,
    swings_daily,
)
from .young_climb import climb_noise
from .warmup import TWO_STAGE_POINTS, Anchor, WarmupCurve, find_restart, fit_warmup

REASON_NONE = "none"
REASON_TABLES = "tables"
REASON_UNEXPLAINED = "unexplained"
REASONS = (REASON_NONE, REASON_TABLES, REASON_UNEXPLAINED)


@dataclass(frozen=True)
class WindowVerdict:
    seconds: float
    trend: Trend
    growing: bool
    new_high: bool  # above the baseline's high-water mark (or no baseline known yet)
    above_baseline: bool  # above it by the margin
    reason: str
    # The rate to report: the window's, or that of its points above the baseline when the
    # window still holds the flat past before a fresh leak (which would understate it).
    rate_per_second: float
    seasonal: bool = False  # judged against the same time of day on earlier days (agents/leak/seasonal.py)

    @property
    def suspicious(self) -> bool:
        return self.growing and self.new_high

    @property
    def confirmed(self) -> bool:
        return self.growing and self.above_baseline


@dataclass(frozen=True)
class Assessment:
    time: float
    level: float
    verdicts: tuple[WindowVerdict, ...]
    baseline_high: float | None  # the high-water mark the confirming window was compared with
    noise_margin: float = 0.0  # growth the noise cannot produce, on the longest window judged

    @property
    def growing(self) -> bool:
        return any(v.growing for v in self.verdicts)

    @property
    def suspicious(self) -> bool:
        """Growing to a new high: a daily cycle's rise back to yesterday's peak is not."""
        return any(v.suspicious for v in self.verdicts)

    @property
    def confirmed(self) -> bool:
        return any(v.confirmed for v in self.verdicts)

    @property
    def evidence(self) -> WindowVerdict | None:
        """The window the reported rate comes from.

        The longest window that confirms: the most points, and its rate is that of its
        points above the baseline (the flat past before the onset left out).  Else the
        growing window with the highest rate: right after onset the longer windows still
        hold the flat past and understate it.  When nothing grows, the shortest window judged.
        """
        confirmed = [v for v in self.verdicts if v.confirmed]
        if confirmed:
            return max(confirmed, key=lambda v: v.seconds)
        growing = [v for v in self.verdicts if v.growing]
        if growing:
            return max(growing, key=lambda v: v.rate_per_second)
        return self.verdicts[0] if self.verdicts else None

    @property
    def leaking_evidence(self) -> WindowVerdict | None:
        """The window the reported rate comes from once the series is known to leak.

        The longest window that confirms, else the longest that grows, else the longest
        whose rate is still positive: under wandering noise some window's significance dips
        while the leak goes on, and the most points give the steadiest rate.  None when no
        window rises at all: then there is no growth rate to serve.
        """
        return self._longest(lambda v: v.confirmed, lambda v: v.growing, lambda v: v.rate_per_second > 0)

    @property
    def reason(self) -> str:
        """From the longest window that confirms (else grows): the most data to compare with."""
        verdict = self._longest(lambda v: v.confirmed, lambda v: v.growing)
        return verdict.reason if verdict is not None else REASON_NONE

    def _longest(self, *tests: Callable[[WindowVerdict], bool]) -> WindowVerdict | None:
        """The longest window passing the first test any window passes."""
        for test in tests:
            passing = [v for v in self.verdicts if test(v)]
            if passing:
                return max(passing, key=lambda v: v.seconds)
        return None


def assess(history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float) -> Assessment | None:
    level = history.level()
    if level is None:
        return None
    verdicts = []
    baseline_high = None
    confirming = None  # (index, points) of the longest window that confirms, for its rate
    warmup = _Warmup(history, series, config, now)
    for seconds in config.windows_seconds:
        points = history.window(now, seconds, config.window_points)
        if points.coverage < config.min_coverage or len(points.times) < 5:
            continue
        trend = estimate_trend(points.times, points.values, config.step_factor, series.resolution_bytes,
                               correct_above=config.significance_z,
                               autocorrelation=lambda: prior_autocorrelation(history, series, config, now, seconds))
        baseline = _climb_baseline(history, config, now, seconds)
        margin = _margin(baseline, series, config)
        growing = (trend.z >= config.significance_z and trend.rate_per_hour >= series.min_rate_at(level)
                   and trend.growth >= margin)
        new_high = above = False
        if growing:
            # a step up inside the window is a new plateau, not growth: only what the level
            # gained besides it can set a new high
            lifted = level - trend.rise_across_steps
            new_high = lifted > (baseline.high if baseline is not None else _young_high(history))
            above = baseline is not None and _mature(baseline, config, seconds) and lifted - baseline.high >= margin
            if above and baseline_high is None:
                baseline_high = baseline.high
        reason = _reason(trend, points.times, points.values, points.aux, series, config) if growing else REASON_NONE
        if above:
            confirming = (len(verdicts), points)
        verdicts.append(WindowVerdict(seconds, trend, growing, new_high, above, reason, trend.slope_per_second))
        beyond = None if above else warmup.judge(seconds, points, baseline, margin)
        if beyond is not None:
            verdict, expected = beyond
            verdicts.append(verdict)
            if baseline_high is None:
                # leaking ends when the level falls back to what the warm-up explains
                baseline_high = expected
    seasonal = _Seasonal(history, series, config, now, level)
    if not any(v.confirmed for v in verdicts):
        found = seasonal.judge(history.baseline(now, DAY))
        if found is not None:
            verdicts.append(found)
    if any(v.confirmed for v in verdicts) and not seasonal.week_allows():
        # an agent's first week: growth on a cycling series that has not lifted its quiet
        # hours may be a busier day of a weekly cycle (agents/leak/seasonal.py): suspect at most
        verdicts = [dataclasses.replace(v, above_baseline=False) for v in verdicts]
        baseline_high, confirming = None, None
    if not verdicts:
        return None
    if confirming is not None:
        # the reported rate is the longest confirming window's (Assessment.evidence): that of
        # its points since the onset, worked out for that window alone
        index, points = confirming
        rate = _rate_since_onset(points.times, points.values, series, config)
        if rate is not None:
            verdicts[index] = dataclasses.replace(verdicts[index], rate_per_second=rate)
    return Assessment(now, level, tuple(verdicts), baseline_high, margin)


class _Warmup:
    """Growth beyond the warm-up curve since a restart (agents/leak/warmup.py), judged per
    trend window: the curve is fitted to the points from the restart to the window's start
    and extrapolated over the window.  The restart and its points are looked up once per
    assessment, and only if some window asks."""

    def __init__(self, history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float):
        self.history, self.series, self.config, self.now = history, series, config, now
        self._overview: WindowPoints | None = None
        self._restart: int | None = None

    def _since_restart(self) -> tuple[WindowPoints, int] | None:
        if self._overview is None:
            # the bins kept, in points of a few minutes: enough to see a drop and fit a curve
            self._overview = self.history.window(self.now, 2 * self.config.longest_window,
                                                 4 * self.config.window_points)
            # a restart empties the cache: far more than the smallest growth worth a look
            self._restart = find_restart(self._overview.values, self.config.restart_drop_share,
                                         10 * self.series.min_growth_bytes)
        if self._restart is None:
            return None
        return self._overview, self._restart

    def judge(self, seconds: float, points: WindowPoints, baseline: Baseline | None,
              margin: float) -> tuple[WindowVerdict, float] | None:
        """(the verdict, the level the curve expects now) when the window's growth beyond the
        warm-up is a leak; None otherwise or when there is no warm-up to judge.

        Beyond the warm-up means beyond both curves that describe the climb: the one that fits
        it best, and the one that fits it returning to the level before the restart.  Early in
        a slow second stage the first levels off too soon -- the points before the window
        barely show that stage -- and the stage's climb would pass for a leak; the second
        knows where the climb is heading.  A leak rises past both.  Nothing is judged until
        the points since the restart are enough for a curve of two stages: one exponential
        fitted to the first of two stages misses the second by megabytes."""
        config = self.config
        # the day-one rule holds here too: without a day of history nothing is confirmed
        if baseline is None or not _mature(baseline, config, seconds):
            return None
        found = self._since_restart()
        if found is None:
            return None
        overview, restart = found
        start, fit_end = overview.times[restart], self.now - seconds
        # extrapolating over the window needs a curve fitted over several times its length
        if fit_end - start < max(3 * seconds, config.min_baseline_seconds):
            return None
        before = self.history.window(fit_end, seconds, config.window_points)
        if len(points.times) < 5 or len(before.times) < 5:
            return None
        fitted = [i for i in range(restart, len(overview.times)) if overview.times[i] <= fit_end]
        if len(fitted) < TWO_STAGE_POINTS:
            return None
        since = WindowPoints([overview.times[i] for i in fitted], [overview.values[i] for i in fitted],
                             [overview.aux[i] for i in fitted] if overview.aux is not None else None, 1.0)
        verdicts = []
        for curve in self._curves(since, start, _level_before(overview, restart), margin):
            verdict = curve and self._beyond(curve, seconds, points, since, before, margin)
            if verdict is None:
                return None
            verdicts.append(verdict)
        # the verdict of the curve expecting the most: the least growth beyond the warm-up
        return max(verdicts, key=lambda found: found[1])

    def _curves(self, since: WindowPoints, start: float, anchor: Anchor | None, margin: float):
        """The best curve (None when none fits), then the one returning to ``anchor`` when
        it describes the climb as well as the series' wander allows: a warm-up that levels
        off below the old level (a smaller cache) is no excuse.  Lazily: judge stops at the
        first curve that explains the window."""
        max_per_unit = self.series.max_bytes_per_unit
        best = fit_warmup(since.times, since.values, since.aux, start, max_per_unit)
        yield _settled(best, since, anchor)
        if anchor is None:
            return
        returning = fit_warmup(since.times, since.values, since.aux, start, max_per_unit, anchor)
        if returning is not None and returning.misfit <= max(3 * best.misfit, margin / self.config.noise_margin_factor):
            yield _settled(returning, since, anchor)

    def _beyond(self, curve: WarmupCurve, seconds: float, points: WindowPoints, since: WindowPoints,
                before: WindowPoints, margin: float) -> tuple[WindowVerdict, float] | None:
        """judge's test against one curve fitted to the points ``since`` the restart."""
        config, series = self.config, self.series
        excess = _beyond_curve(curve, points)
        # what the series' wander already did around the curve since the restart: a leak must
        # rise above that, as above a high-water mark
        high = max(0.0, *(_beyond_curve(curve, since) or [0.0]))
        noise = _beyond_curve(curve, before)
        if excess is None or noise is None:
            return None
        trend = estimate_trend(points.times, excess, config.step_factor, series.resolution_bytes,
                               correct_above=config.significance_z,
                               autocorrelation=lambda: autocorrelation_factor(before.times, noise, 0.0))
        # the curve's own misfit since the restart counts as noise too: a warm-up the curve
        # does not describe well must not pass for a leak
        margin = max(margin, config.noise_margin_factor * curve.misfit)
        now_above = median(excess[-3:])
        if not (trend.z >= config.significance_z and trend.rate_per_hour >= series.min_rate_at(points.values[-1])
                and trend.growth >= margin and now_above - high >= margin):
            return None
        verdict = WindowVerdict(seconds, trend, True, True, True, REASON_UNEXPLAINED, trend.slope_per_second)
        return verdict, points.values[-1] - now_above


class _Seasonal:
    """Growth of the daily mean beyond the same moment on earlier days (agents/leak/seasonal.py),
    judged where the series follows a daily cycle and no trend window confirms a leak."""

    def __init__(self, history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float, level: float):
        self.history, self.series, self.config, self.now, self.level = history, series, config, now, level
        self._pattern: tuple[DailyPattern | None] | None = None

    @property
    def pattern(self) -> DailyPattern | None:
        if self._pattern is None:
            # the same for every evaluation until the next bucket ends (daily_pattern reads the ended ones)
            history, now = self.history, self.now
            self._pattern = (history.memo(("daily_pattern", history.ended_buckets(now)),
                                          lambda: daily_pattern(history, now)),)
        return self._pattern[0]

    def _margin(self, pattern: DailyPattern, lag: int = 1) -> float:
        # the daily means of a few days are smooth and few: their spread alone understates how far a
        # busier day moves them; the buckets' day-over-day spread is the floor, up to half a day
        # back as the daily means' is, or a leak's own rise widens it (settled_noise).  The week's
        # comparison is against the week-over-week spreads once they are known: there a weekly
        # cycle cancels, while the day-over-day ones hold every weekend's fall and rise
        noise = max(pattern.daily_noise, pattern.settled_noise)
        if lag == WEEK_DAYS and pattern.week_noise is not None and pattern.week_daily_noise is not None:
            # a few days of them may hold no weekend, nor a day busier than the rest: how far a
            # weekend busier than the last moves its daily mean is a share of the cycle's
            # amplitude, and a weekly cycle at most doubles the day-over-day spread (seasonal.py)
            noise = max(pattern.week_daily_noise, pattern.week_noise, WEEKEND_SHARE * pattern.amplitude,
                        pattern.daily_noise / 2)
        return max(self.series.min_growth_bytes, self.config.noise_margin_factor * noise)

    def judge(self, baseline: Baseline | None) -> WindowVerdict | None:
        """The verdict when the daily mean's growth is a leak (agents/leak/seasonal.py): above
        the highest earlier day's at the same time, or above the same weekday's a week before."""
        config, series = self.config, self.series
        if baseline is None or not _mature(baseline, config, DAY):
            return None
        pattern = self.pattern
        if pattern is None or not cycles(pattern, baseline.noise):
            return None
        last = math.floor(self.now / pattern.bucket_seconds) - 1
        for excess, lag in ((pattern.excess(last), 1), (pattern.week_excess(last), WEEK_DAYS)):
            if excess is None or excess < self._margin(pattern, lag) or self._restarted(pattern, last, lag + 1):
                continue
            trend = pattern.rate(last, lag)
            # the ramp fitted to the differences: it reads a leak older than the lag too (one the
            # first week's quiet hours kept waiting is older than a day when confirmed)
            rate, error = lagged_rate(pattern, last, lag)
            # a leak at the minimum rate is measured below it half the time: against the day
            # before it must not be below it by more than the rate's standard error.  Not against
            # the week before: its margin comes from a few days of differences, and a weekend
            # busier than the last lifts the daily mean without rising (measured: a false leak)
            error = (error or 0.0) if lag == 1 else 0.0
            if trend is None or rate is None or (rate + error) * 3600 < series.min_rate_at(self.level):
                continue
            if lag == WEEK_DAYS and not rises_within_days(pattern, last, lag, rate):
                # the same weekday a week before was a quieter day, not a leak's start
                continue
            return WindowVerdict(DAY, trend, True, True, True, REASON_UNEXPLAINED, rate, seasonal=True)
        return None

    def _restarted(self, pattern: DailyPattern, last: int, days: int) -> bool:
        """Whether the buckets of the last ``days`` days up to ``last`` hold a restart's drop.

        The day (week) compared and the one before it are then of different processes: a day
        without a restart stands above earlier ones that each held one and its warm-up, and the
        differences read a leak's rate off the drop (measured: RSS restarting about daily, 623
        MB/h, a false leak).  After a restart the warm-up curve judges growth (_Warmup)."""
        means = [pattern.means[i] for i in range(last - days * pattern.per_day + 1, last + 1) if i in pattern.means]
        return find_restart(means, self.config.restart_drop_share, 10 * self.series.min_growth_bytes) is not None

    def week_allows(self) -> bool:
        """Whether growth may be confirmed as far as a weekly cycle goes (agents/leak/seasonal.py,
        "An agent's first week"): always once a week of history is known, and on a series that
        does not cycle daily; in the first week of a cycling one, only when the latest quiet
        hours stand above every earlier day's by the seasonal margin.  A first day that swung
        like a daily cycle, with no second day to compare it with yet, allows nothing."""
        history, config = self.history, self.config
        if not history.buckets or history.buckets[-1].start - history.buckets[0].start >= WEEK_DAYS * DAY:
            return True
        # the plain noise of the history before the longest trend window: the growth judged left out
        before = history.baseline(self.now, config.longest_window)
        if before is None:
            return True
        pattern = self.pattern
        if pattern is None:
            times, means = history.bucket_means(self.now - config.longest_window, WEEK_DAYS * DAY)
            return not swings_daily(times, means)
        if not cycles(pattern, before.noise):
            return True
        last, margin = math.floor(self.now / pattern.bucket_seconds) - 1, self._margin(pattern)
        if pattern.earlier_days_alike(last, margin):
            return True
        lift = pattern.quiet_lift(last)
        # the whole seasonal margin: a busy Monday's quiet hours, at their edge, can stand above
        # a weekend's by half of it (measured), and a leak's lift there only grows
        return lift is not None and lift >= margin


def _level_before(overview: WindowPoints, restart: int) -> Anchor | None:
    """(value, table count) where the series stood before the restart's drop: the highest of
    the five points before its lowest one (the lowest can come up to three points after the
    first one below half, and the point before that may already hold part of the drop: with
    three, a restart found at such a late point was anchored to the low level after it);
    None when the history does not reach back before the drop."""
    before = range(max(0, restart - 5), restart)
    if not before:
        return None
    top = max(before, key=lambda i: overview.values[i])
    return overview.values[top], overview.aux[top] if overview.aux is not None else None


# A logistic climb one time scale past its midpoint has done this share of its way.
SETTLED_SHARE = 1 / (1 + math.exp(-1))


def _settled(curve: WarmupCurve | None, since: WindowPoints, anchor: Anchor | None) -> WarmupCurve | None:
    """The curve, or None while it is a logistic climb whose points have not come back
    ``SETTLED_SHARE`` of the way from the restart's low to the level before it (None without
    that level): fitted to the accelerating part alone, where it levels off is barely known --
    not even its midpoint, so the curve's own cannot tell -- and a climb a fifth faster than the
    curve extrapolated two hours ahead would pass for a leak (a 21-hour warm-up, 8 hours in)."""
    if curve is None or not curve.delay:
        return curve
    if anchor is None or anchor[0] <= since.values[0]:
        return None
    done = (median(since.values[-3:]) - since.values[0]) / (anchor[0] - since.values[0])
    return curve if done >= SETTLED_SHARE else None


def _beyond_curve(curve: WarmupCurve, points: WindowPoints) -> list[float] | None:
    """The points' values minus what the curve expects; None when the curve needs the
    table count and the points lack it."""
    if curve.per_unit and points.aux is None:
        return None
    aux = points.aux if curve.per_unit else [None] * len(points.times)
    return [v - curve.predict(t, a) for t, v, a in zip(points.times, points.values, aux)]


def prior_autocorrelation(history: SeriesHistory, series: SeriesConfig, config: LeakConfig,
                          now: float, seconds: float) -> float | None:
    """The Hamed-Rao factor of the window just before this one: how the series' own noise
    is correlated at this window's spacing, measured where a fresh leak is not yet."""
    before = history.window(now - seconds, seconds, config.window_points)
    if before.coverage < config.min_coverage or len(before.times) < 5:
        return None
    return _noise_factor(tuple(before.times), tuple(before.values), config.step_factor, series.resolution_bytes)


@functools.lru_cache(maxsize=64)
def _noise_factor(times: tuple[float, ...], values: tuple[float, ...], step_factor: float, resolution: float) -> float:
    """prior_autocorrelation's factor of the points.  The window before a long window moves
    only when a new point of it closes (every 4 minutes for 2 hours, 12 for 6), while the
    detector asks every minute: memoised on the points themselves."""
    trend = estimate_trend(times, values, step_factor, resolution, correct_above=float("inf"))
    return autocorrelation_factor(times, values, trend.slope_per_second)


def _climb_baseline(history: SeriesHistory, config: LeakConfig, now: float, seconds: float) -> Baseline | None:
    """The baseline before a window; where the history is one unbroken climb shaped like a leak
    (agents/leak/young_climb.py), with its noise measured around a smooth fit, not a line."""
    baseline = history.baseline(now, seconds)
    if baseline is None:
        return None
    noise = climb_noise(history, now, seconds, config.baseline_seconds, config.significance_z)
    return baseline if noise is None else dataclasses.replace(baseline, noise=noise)


def _young_high(history: SeriesHistory) -> float:
    """With no baseline yet, the highest level the history holds before now: a warm-up
    climbing back after a restart the agent saw stays below it, a leak does not."""
    high = history.highest_before()
    return high if high is not None else float("-inf")


def _margin(baseline: Baseline | None, series: SeriesConfig, config: LeakConfig) -> float:
    """Growth the series' own wander cannot produce: a multiple of its noise scale."""
    noise = baseline.noise if baseline is not None else 0.0
    return max(series.min_growth_bytes, config.noise_margin_factor * noise)


def _mature(baseline: Baseline, config: LeakConfig, window: float) -> bool:
    """Enough history before the window to know the series' daily cycle and noise."""
    return baseline.span_seconds >= max(window, config.min_baseline_seconds, config.mature_baseline_seconds)


def _rate_since_onset(times: list[float], values: list[float], series: SeriesConfig,
                      config: LeakConfig) -> float | None:
    """Theil-Sen slope of the window's points since the growth began.

    The slope of a whole window that still holds the flat past before a fresh leak
    understates the leak; the onset is the knee of the hinge (flat, then a straight line)
    that fits the window best."""
    start = _onset(times, values)
    if len(values) - start < 5:
        return None
    return estimate_trend(times[start:], values[start:], config.step_factor, series.resolution_bytes).slope_per_second


def _onset(times: list[float], values: list[float]) -> int:
    """Index of the knee of the least-squares hinge a + c * max(0, t - knee)."""
    hinge = fit_hinge(times, values)
    return hinge.knee if hinge is not None else 0


def _reason(
    trend: Trend, times: list[float], values: list[float], aux: list[float] | None,
    series: SeriesConfig, config: LeakConfig,
) -> str:
    """``tables`` when growth in the explanatory count accounts for the bytes.

    Bytes per table come from the data (Theil-Sen slope of value against count); the growth
    is explained when that figure is plausible and the value minus count x bytes-per-table
    no longer rises.  The seed's leak (same tables, more bytes) leaves that remainder rising.
    """
    if series.explained_by is None or aux is None or max(aux) == min(aux):
        return REASON_UNEXPLAINED
    # a restart inside the window drops the value and the count together, and what the
    # server holds besides its tables comes back a little different: only pairs on one
    # side of such a step compare like with like, so the count is split where the trend was
    segments = segments_between(trend.split, len(values))
    if mann_kendall_z(aux, segments) < config.significance_z:
        return REASON_UNEXPLAINED
    try:
        bytes_per_unit = theil_sen_slope(aux, values, segments)
    except ValueError:
        return REASON_UNEXPLAINED
    if not 0 < bytes_per_unit <= series.max_bytes_per_unit:
        return REASON_UNEXPLAINED
    # the tables added over the window must account for most of the bytes, not a few
    # tables wandering while something else grows
    added = theil_sen_slope(times, aux) * (times[-1] - times[0])
    if bytes_per_unit * added < 0.5 * trend.growth:
        return REASON_UNEXPLAINED
    remainder = [v - bytes_per_unit * a for v, a in zip(values, aux)]
    rest = estimate_trend(times, remainder, config.step_factor, series.resolution_bytes, steps=trend.split)
    if rest.z >= config.significance_z:
        return REASON_UNEXPLAINED
    return REASON_TABLES
