"""The state machine of one watched series: ok -> suspect -> leaking -> ok, with hysteresis.

- ok -> suspect: some trend window shows significant growth above the minimum rate, to a
  level above the baseline's high-water mark (a daily cycle's rise back to yesterday's
  peak does not count; with no baseline yet, any growth does).
- suspect -> leaking: the growth has also cleared the baseline for ``confirm_evaluations``
  consecutive evaluations (one per completed bin).
- suspect -> ok: nothing like that for ``suspect_clear_seconds``.
- leaking -> ok: the level fell back to the high-water mark it was detected above (tables
  dropped, server restarted): at once; or the growth is significantly absent: for
  ``confirm_evaluations`` consecutive evaluations some window rose significantly less than
  half the rate the leak was confirmed at (agents/leak/leak_end.py), with no new high for
  ``leaking_clear_seconds``.  Under wandering noise every window's significance dips now
  and then while a leak goes on; leaving then, to come back minutes later, would page an
  operator twice for one leak, so the end is judged against what confirmed the leak.

Fed plain (time, value, explanatory value) samples, so the live detector and the replay
command share it; it knows nothing about snapshots.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from .assessment import REASON_NONE, REASONS, Assessment, assess
from .config import LeakConfig, SeriesConfig
from .history import SeriesHistory
from .leak_end import growth_stopped
from .leak_rate import LeakRate, rate_over_leak, recent_rate
from .seasonal import DAY, EXTRA_DAYS, seasonal_leak
from .young_climb import warming_up

log = logging.getLogger(__name__)

OK, SUSPECT, LEAKING = 0, 1, 2
STATE_NAMES = {OK: "ok", SUSPECT: "suspect", LEAKING: "leaking"}


@dataclass(frozen=True)
class LeakEvent:
    """A state change of one series, for notifications (SNMP traps, logs)."""

    series: str
    time: float
    old: int
    new: int
    rate_bytes_per_hour: float | None
    window_growth_bytes: float | None
    time_to_limit_seconds: float | None
    reason: str

    @property
    def old_name(self) -> str:
        return STATE_NAMES[self.old]

    @property
    def new_name(self) -> str:
        return STATE_NAMES[self.new]


@dataclass(frozen=True)
class Reading:
    """What the detector says about the series right now (exported every collection)."""

    state: int
    reason: str
    level: float | None
    rate_bytes_per_hour: float | None
    window_seconds: float | None
    window_growth_bytes: float | None
    growing: bool  # the rate is growth to forecast from: a window grows, or leaking and it rises
    # the rate's standard error while leaking (from the leak's whole span); None otherwise
    rate_error_bytes_per_hour: float | None = None


class SeriesDetector:
    def __init__(self, series_id: str, series: SeriesConfig, config: LeakConfig):
        self.series_id = series_id
        self.series = series
        self.config = config
        self.history = SeriesHistory(
            bin_seconds=config.bin_seconds,
            # twice the longest window: the window before each one measures the noise's
            # autocorrelation (assessment.prior_autocorrelation)
            bins_kept=2 * config.longest_window + config.bin_seconds,
            bucket_seconds=config.baseline_bucket_seconds,
            baseline_seconds=config.baseline_seconds,
            # days more, for the daily mean of the same weekday a week before and how much the
            # week-over-week differences vary (agents/leak/seasonal.py)
            extra_seconds=EXTRA_DAYS * DAY,
        )
        self.state = OK
        self.since: float | None = None
        self.confirmations = 0
        self.last_suspicious: float | None = None
        self.clear_level: float | None = None
        self.peak: float | None = None  # the highest level while leaking, and when it was set
        self.peak_time: float | None = None
        # the rate the leak was confirmed at, from the longest window confirming it at a new
        # high so far (bytes per second), and that window: what its end is judged against
        self.leak_rate: float | None = None
        self.leak_rate_window: float | None = None
        self.stopped_evaluations = 0  # consecutive evaluations that found the growth absent
        # after a leak that stopped: its peak, and until when the trend windows still hold its
        # growth (which must not confirm it again)
        self.stopped_high: float | None = None
        self.stopped_until: float | None = None
        self.last: Assessment | None = None
        self.leak_fit: LeakRate | None = None  # while leaking: the rate over the leak's span
        self.warming = False  # the growth is a warm-up watched from the agent's start
        self.seasonal = False  # leaking, confirmed against the daily pattern (agents/leak/seasonal.py)
        self.reason = REASON_NONE
        self.clock_step: float | None = None  # how far the clock went back before the last sample

    def feed(self, t: float, value: float, aux: float | None = None) -> tuple[int, int] | None:
        """Add one sample; returns (old, new) when the state changed.

        A sample at the time of the previous one is ignored (logged): agents may deliver a
        snapshot twice.  A sample before it means the wall clock stepped back (NTP correcting
        a clock that ran ahead, a restored VM, a history saved by a clock a day ahead): waiting
        for the clock to pass the history would ignore every sample that long while serving
        "ok", so the history moves back to end just before this sample and detection goes on;
        ``clock_step`` says by how much the clock went back (None: it did not).
        """
        last = self.history.last_time
        self.clock_step = None
        if last is not None and t == last:
            log.debug("%s: sample at %s repeats the previous one, ignored", self.series_id, t)
            return None
        if last is not None and t < last:
            self.clock_step = last - t
            self._move_times(self.history.move_before(t))
            last = self.history.last_time
        if last is not None and t - last > self.config.max_gap_seconds:
            log.info("%s: %.0f s without samples, trend windows restart", self.series_id, t - last)
            self.history.restart_trend()
        if self.history.add(t, value, aux) is None:
            return None
        return self._evaluate(t)

    def move_forward(self, seconds: float) -> float:
        """After the wall clock stepped forward by ``seconds`` (LeakDetector tells a step from
        time that passed by the monotonic clock): the history moves with it, by whole bins, so the
        step is not taken for hours without samples, nor ages the baseline out.  Returns the shift."""
        if self.history.last_time is None:
            return 0.0
        shift = math.floor(seconds / self.config.bin_seconds) * self.config.bin_seconds
        self.history.move_by(shift)
        self._move_times(shift)
        return shift

    def _move_times(self, shift: float) -> None:
        """Move the state machine's times with its history (see feed())."""
        for name in ("since", "last_suspicious", "peak_time", "stopped_until"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value + shift)

    def _evaluate(self, now: float) -> tuple[int, int] | None:
        assessment = assess(self.history, self.series, self.config, now)
        self.last = assessment
        if assessment is None:
            return None
        old = self.state
        beyond = self._beyond_stopped_leak(assessment, now)
        # a climb watched since the agent's first sample that is curved is a warm-up: never a
        # leak, and no limit is forecast for it (agents/leak/young_climb.py)
        self.warming = self.state != LEAKING and assessment.growing and warming_up(
            self.history, now, self.config.baseline_seconds, self.config.significance_z)
        suspicious = assessment.suspicious and beyond
        confirmed = assessment.confirmed and beyond and not self.warming
        if suspicious:
            self.last_suspicious = now
        if self.state == OK:
            if suspicious:
                self.state = SUSPECT
                self.confirmations = 1 if confirmed else 0
        elif self.state == SUSPECT:
            self.confirmations = self.confirmations + 1 if confirmed else 0
            if self.confirmations >= self.config.confirm_evaluations:
                self.state = LEAKING
                evidence = assessment.leaking_evidence
                self.seasonal = bool(evidence and evidence.seasonal)
                # under a daily cycle the level falls below any high every night
                self.clear_level = None if self.seasonal else assessment.baseline_high
                self.peak, self.peak_time = assessment.level, now
                self.leak_rate = self.leak_rate_window = None
                self.stopped_evaluations = 0
                self._record_rate(assessment)
            elif _since(now, self.last_suspicious) >= self.config.suspect_clear_seconds:
                self.state = OK
        elif self.state == LEAKING and self.seasonal:
            self._judge_seasonal_leak(now)
        elif self.state == LEAKING:
            if self.peak is None or assessment.level > self.peak:
                self.peak, self.peak_time = assessment.level, now
                self._record_rate(assessment)
            returned = self.clear_level is not None and assessment.level <= self.clear_level
            self.stopped_evaluations = self.stopped_evaluations + 1 if self._growth_absent(assessment, now) else 0
            if returned or self.stopped_evaluations >= self.config.confirm_evaluations:
                if not returned:
                    self.stopped_high, self.stopped_until = self.peak, now + self.config.longest_window
                self._leave_leaking()
        if self.state == OK:
            self.reason = REASON_NONE
        elif assessment.growing:
            self.reason = assessment.reason
        if self.state != old:
            self.since = now
        if self.state != LEAKING:
            self.leak_fit = None
        elif not self.seasonal:
            self.leak_fit = self._rate_over_leak(now)
        return (old, self.state) if self.state != old else None

    def _leave_leaking(self) -> None:
        self.state = OK
        self.clear_level = self.peak = self.peak_time = self.leak_rate = self.leak_rate_window = None
        self.confirmations = self.stopped_evaluations = 0
        self.seasonal = False

    def _judge_seasonal_leak(self, now: float) -> None:
        """A leak confirmed against the daily pattern: its rate is the daily pattern's, and it
        is over once the daily mean is no longer above the earlier days' for
        ``confirm_evaluations`` evaluations (agents/leak/seasonal.py)."""
        excess, rate, error = seasonal_leak(self.history, now)
        if rate is not None and rate > 0:
            # the span the rate compares: a day against the day before
            self.leak_fit = LeakRate(rate, DAY, rate * DAY, error=error)
        over = excess is not None and excess <= 0
        self.stopped_evaluations = self.stopped_evaluations + 1 if over else 0
        if self.stopped_evaluations >= self.config.confirm_evaluations:
            self._leave_leaking()

    def _rate_over_leak(self, now: float) -> LeakRate | None:
        """From a confirming window's span before the leak was confirmed up to now."""
        before = self.leak_rate_window if self.leak_rate_window is not None else self.config.longest_window
        whole = rate_over_leak(self.history, self.series, self.config, now, _since(now, self.since) + before)
        return None if whole is None else recent_rate(self.history, self.series, self.config, now, whole)

    def _record_rate(self, assessment: Assessment) -> None:
        """Keep the rate of the longest window that confirms the leak at a new high: a dip of
        one window under the wander does not lower it, and after a stop no new high updates it."""
        evidence = assessment.leaking_evidence
        if evidence is None or not evidence.confirmed or evidence.rate_per_second <= 0:
            return
        if self.leak_rate_window is None or evidence.seconds >= self.leak_rate_window:
            self.leak_rate, self.leak_rate_window = evidence.rate_per_second, evidence.seconds

    def _beyond_stopped_leak(self, assessment: Assessment, now: float) -> bool:
        """False while the trend windows still hold the growth of a leak that was found to have
        stopped and the level has not risen past its peak by the noise margin: that growth
        is over, and must not be suspected or confirmed a second time."""
        if self.stopped_until is None or now >= self.stopped_until:
            self.stopped_high = self.stopped_until = None
            return True
        return self.stopped_high is None or assessment.level - self.stopped_high >= assessment.noise_margin

    def _growth_absent(self, assessment: Assessment, now: float) -> bool:
        """No new high for ``leaking_clear_seconds`` and some window rose significantly less
        than the leak did (agents/leak/leak_end.py)."""
        if _since(now, self.peak_time) < self.config.leaking_clear_seconds:
            return False
        rate, evidence = self.leak_rate, assessment.leaking_evidence
        # a short window that confirmed the leak early may have caught the wander rising with it:
        # the rate served now (the longest rising window's) caps it
        if rate is not None and evidence is not None:
            rate = min(rate, evidence.rate_per_second)
        return growth_stopped(self.history, self.series, self.config, now, rate, assessment.noise_margin,
                              _since(now, self.since)) is not None

    def reading(self) -> Reading:
        if self.last is None:
            evidence = None
        elif self.state == LEAKING:
            # the longest window that still rises: one window's dip is not the leak's end,
            # and a shrinking rate or no forecast would be a wrong number on a leaking series
            evidence = self.last.leaking_evidence
        else:
            evidence = self.last.evidence
        level = self.last.level if self.last else self.history.level()
        if self.leak_fit is not None and self.state == LEAKING:
            # the whole leak's rate (agents/leak/leak_rate.py) rather than one window's
            fit = self.leak_fit
            error = None if fit.error is None else fit.error * 3600.0
            return Reading(self.state, self.reason, level, fit.rate_per_second * 3600.0, fit.seconds, fit.growth, True,
                           error)
        return Reading(
            state=self.state,
            reason=self.reason,
            level=level,
            rate_bytes_per_hour=evidence.rate_per_second * 3600.0 if evidence else None,
            window_seconds=evidence.seconds if evidence else None,
            window_growth_bytes=evidence.trend.growth if evidence else None,
            growing=bool(evidence and (evidence.growing or self.state == LEAKING) and not self.warming),
        )

    # -- persistence -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "since": self.since,
            "reason": self.reason,
            "confirmations": self.confirmations,
            "last_suspicious": self.last_suspicious,
            "clear_level": self.clear_level,
            "peak": self.peak,
            "peak_time": self.peak_time,
            "leak_rate": self.leak_rate,
            "leak_rate_window": self.leak_rate_window,
            "stopped_evaluations": self.stopped_evaluations,
            "stopped_high": self.stopped_high,
            "stopped_until": self.stopped_until,
            "seasonal": self.seasonal,
            "history": self.history.to_dict(),
        }

    def load_dict(self, data: dict[str, Any]) -> None:
        state = int(data["state"])
        if state not in STATE_NAMES:
            raise ValueError(f"unknown state {state}")
        reason = str(data.get("reason", REASON_NONE))
        if reason not in REASONS:
            raise ValueError(f"unknown reason {reason!r}")
        self.history.load_dict(data["history"])
        self.state = state
        self.reason = reason
        self.since = _optional_float(data.get("since"))
        self.confirmations = int(data.get("confirmations", 0))
        self.last_suspicious = _optional_float(data.get("last_suspicious"))
        self.clear_level = _optional_float(data.get("clear_level"))
        self.peak = _optional_float(data.get("peak"))
        self.peak_time = _optional_float(data.get("peak_time"))
        self.leak_rate = _optional_float(data.get("leak_rate"))
        self.leak_rate_window = _optional_float(data.get("leak_rate_window"))
        self.stopped_evaluations = int(data.get("stopped_evaluations", 0))
        self.stopped_high = _optional_float(data.get("stopped_high"))
        self.stopped_until = _optional_float(data.get("stopped_until"))
        self.seasonal = bool(data.get("seasonal", False))


def _since(now: float, then: float | None) -> float:
    return now - then if then is not None else float("inf")


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)
