"""Judge one series at one moment: is it growing, is the growth a leak, and why.

Three questions, each answered per trend window (15 min, 30 min, 2 h, 6 h by default):

1. Growing?  Mann-Kendall says the binned series rises, and the Theil-Sen rate is above
   the series' minimum rate.  Noise fails the test; a one-off step does not count (only
   pairs of points on one side of it do); a saturating warm-up passes it for a while.
2. Above the baseline?  The current level clears the highest level of the history
   before the window by a margin.  A warm-up after a restart returns to the old level and
   a daily cycle to yesterday's peak, so neither clears it; a leak keeps setting new highs.
   With less than a day of history the margin is several times the baseline's whole range:
   the agent cannot yet know the daily cycle, so it only trusts growth out of a flat past
   -- or growth that no change in the table count could explain (the seed's leak).
3. Why?  When the explanatory series (Open_table_definitions) grows with it and the bytes
   per added table are plausible, the reason is ``tables``; otherwise ``unexplained``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.leak.config import LeakConfig, SeriesConfig
from agents.leak.history import Baseline, SeriesHistory
from agents.leak.trend import Trend, estimate_trend, mann_kendall_z, theil_sen_slope

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

        The growing window with the highest rate: right after onset the longer windows
        still hold the flat past and understate the rate; on an established linear leak
        all windows agree.  When nothing grows, the shortest window judged.
        """
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
        trend = estimate_trend(points.times, points.values, config.step_factor, series.resolution_bytes)
        growing = trend.z >= config.significance_z and trend.rate_per_hour >= series.min_rate_bytes_per_hour
        new_high = above = False
        if growing:
            baseline = history.baseline(now, seconds)
            new_high = baseline is None or level > baseline.high
            above = baseline is not None and _above_baseline(baseline, series, config, seconds, level)
            high = baseline.high if above else None
            if not above and _beyond_any_table_growth(trend, points.aux, series, seconds, config):
                above, high = True, level - trend.growth
            new_high = new_high or above
            if above and baseline_high is None:
                baseline_high = high
        reason = _reason(trend, points.times, points.values, points.aux, series, config) if growing else REASON_NONE
        rate = trend.slope_per_second
        if above and high is not None:
            rate = max(rate, _rate_above(points.times, points.values, high, series, config) or rate)
        verdicts.append(WindowVerdict(seconds, trend, growing, new_high, above, reason, rate))
    if not verdicts:
        return None
    return Assessment(now, level, tuple(verdicts), baseline_high)


def _above_baseline(baseline: Baseline, series: SeriesConfig, config: LeakConfig, window: float, level: float) -> bool:
    if baseline.span_seconds < max(window, config.min_baseline_seconds):
        return False
    if baseline.span_seconds >= config.mature_baseline_seconds:
        spread = config.mature_margin_factor * baseline.detrended_range
    else:
        spread = config.young_margin_factor * baseline.range
    margin = max(series.min_growth_bytes, spread)
    return level - baseline.high >= margin


def _rate_above(times: list[float], values: list[float], high: float, series: SeriesConfig,
                config: LeakConfig) -> float | None:
    """Slope of the window's last points above ``high`` (since it last touched it)."""
    start = len(values)
    while start > 0 and values[start - 1] > high:
        start -= 1
    if len(values) - start < 5:
        return None
    return estimate_trend(times[start:], values[start:], config.step_factor, series.resolution_bytes).slope_per_second


def _beyond_any_table_growth(
    trend: Trend, aux: list[float] | None, series: SeriesConfig, seconds: float, config: LeakConfig
) -> bool:
    """Growth no change in the table count can explain, even at a generous size per table.

    This is the seed's leak seen without a flat past to compare with (the agent started
    on an already leaking server): a daily cycle or a warm-up of the dictionary comes with
    tables opened, this does not.  Only windows of at least ``min_baseline_seconds``, so a
    short burst cannot pass for it.
    """
    if series.explained_by is None or aux is None or seconds < config.min_baseline_seconds:
        return False
    possible = series.max_bytes_per_unit * (max(aux) - min(aux))
    return trend.growth > 2 * possible + series.min_growth_bytes


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
    remainder = [v - bytes_per_unit * a for v, a in zip(values, aux)]
    rest = estimate_trend(times, remainder, config.step_factor, series.resolution_bytes)
    if rest.z >= config.significance_z:
        return REASON_UNEXPLAINED
    return REASON_TABLES
