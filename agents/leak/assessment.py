"""Judge one series at one moment: is it growing, is the growth a leak, and why.

Three questions, each answered per trend window (15 min, 30 min, 2 h, 6 h by default):

1. Growing?  Mann-Kendall (its variance corrected for autocorrelation) says the binned
   series rises, the Theil-Sen rate is above the series' minimum rate, and the growth over
   the window is more than the series' own noise could produce.  One-off steps and gaps
   do not count (only pairs of points on one side of them do).
2. A leak?  The current level clears the highest level of the history before the window
   by a margin tied to the series' noise scale, measured on that history.  A warm-up after
   a restart returns to the old level and a daily cycle to yesterday's peak, so neither
   clears it; a leak keeps setting new highs.  With less than ``mature_baseline_seconds``
   (a day) of history a daily cycle cannot be known yet, so nothing is confirmed: growth to
   a level not seen since the agent started is ``suspect`` at most.
3. Why?  When the explanatory series (Open_table_definitions) grows with it and the bytes
   per added table are plausible, the reason is ``tables``; otherwise ``unexplained``.
   A flat table count explains nothing and confirms nothing on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from mysql_snmp.agents.leak.config import LeakConfig, SeriesConfig
from mysql_snmp.agents.leak.history import Baseline, SeriesHistory
from mysql_snmp.agents.leak.trend import Trend, autocorrelation_factor, estimate_trend, mann_kendall_z, theil_sen_slope

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
    def reason(self) -> str:
        """From the longest window that confirms (else grows): the most data to compare with."""
        for candidates in ([v for v in self.verdicts if v.confirmed], [v for v in self.verdicts if v.growing]):
            if candidates:
                return max(candidates, key=lambda v: v.seconds).reason
        return REASON_NONE


def assess(history: SeriesHistory, series: SeriesConfig, config: LeakConfig, now: float) -> Assessment | None:
    level = history.level()
    if level is None:
        return None
    verdicts = []
    baseline_high = None
    for seconds in config.windows_seconds:
        points = history.window(now, seconds, config.window_points)
        if points.coverage < config.min_coverage or len(points.times) < 5:
            continue
        trend = estimate_trend(points.times, points.values, config.step_factor, series.resolution_bytes,
                               correct_above=config.significance_z,
                               autocorrelation=lambda: prior_autocorrelation(history, series, config, now, seconds))
        baseline = history.baseline(now, seconds)
        margin = _margin(baseline, series, config)
        growing = (trend.z >= config.significance_z and trend.rate_per_hour >= series.min_rate_bytes_per_hour
                   and trend.growth >= margin)
        new_high = above = False
        if growing:
            new_high = baseline is None or level > baseline.high
            above = baseline is not None and _mature(baseline, config, seconds) and level - baseline.high >= margin
            if above and baseline_high is None:
                baseline_high = baseline.high
        reason = _reason(trend, points.times, points.values, points.aux, series, config) if growing else REASON_NONE
        rate = trend.slope_per_second
        if above:
            rate = _rate_above(points.times, points.values, baseline.typical, series, config) or rate
        verdicts.append(WindowVerdict(seconds, trend, growing, new_high, above, reason, rate))
    if not verdicts:
        return None
    return Assessment(now, level, tuple(verdicts), baseline_high)


def prior_autocorrelation(history: SeriesHistory, series: SeriesConfig, config: LeakConfig,
                          now: float, seconds: float) -> float | None:
    """The Hamed-Rao factor of the window just before this one: how the series' own noise
    is correlated at this window's spacing, measured where a fresh leak is not yet."""
    before = history.window(now - seconds, seconds, config.window_points)
    if before.coverage < config.min_coverage or len(before.times) < 5:
        return None
    trend = estimate_trend(before.times, before.values, config.step_factor, series.resolution_bytes,
                           correct_above=float("inf"))
    return autocorrelation_factor(before.times, before.values, trend.slope_per_second)


def _margin(baseline: Baseline | None, series: SeriesConfig, config: LeakConfig) -> float:
    """Growth the series' own wander cannot produce: a multiple of its noise scale."""
    noise = baseline.noise if baseline is not None else 0.0
    return max(series.min_growth_bytes, config.noise_margin_factor * noise)


def _mature(baseline: Baseline, config: LeakConfig, window: float) -> bool:
    """Enough history before the window to know the series' daily cycle and noise."""
    return baseline.span_seconds >= max(window, config.min_baseline_seconds, config.mature_baseline_seconds)


def _rate_above(times: list[float], values: list[float], high: float, series: SeriesConfig,
                config: LeakConfig) -> float | None:
    """Slope of the window's last points above ``high`` (since it last touched it).

    Called with the baseline's typical level, not its high-water mark: on a wandering
    series the points above the high are those of an upward excursion, whose slope
    overstates the leak's; the last time at the usual level is close to the onset."""
    start = len(values)
    while start > 0 and values[start - 1] > high:
        start -= 1
    if len(values) - start < 5:
        return None
    return estimate_trend(times[start:], values[start:], config.step_factor, series.resolution_bytes).slope_per_second


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
    if mann_kendall_z(aux) < config.significance_z:
        return REASON_UNEXPLAINED
    try:
        bytes_per_unit = theil_sen_slope(aux, values)
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
    rest = estimate_trend(times, remainder, config.step_factor, series.resolution_bytes)
    if rest.z >= config.significance_z:
        return REASON_UNEXPLAINED
    return REASON_TABLES
