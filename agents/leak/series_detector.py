"""The state machine of one watched series: ok -> suspect -> leaking -> ok, with hysteresis.

- ok -> suspect: some trend window shows significant growth above the minimum rate, to a
  level above the baseline's high-water mark (a daily cycle's rise back to yesterday's
  peak does not count; with no baseline yet, any growth does).
- suspect -> leaking: the growth has also cleared the baseline for ``confirm_evaluations``
  consecutive evaluations (one per completed bin).
- suspect -> ok: nothing like that for ``suspect_clear_seconds``.
- leaking -> ok: the level fell back to the high-water mark it was detected above (tables
  dropped, server restarted); or no window grew for ``leaking_clear_seconds`` and the level
  set no new high for as long as the leak, at its rate, needs to rise twice the noise
  margin (the most the wander can take away between two readings).  Under wandering noise
  every window's significance dips now and then while a leak goes on; leaving then, to come
  back minutes later, would page an operator twice for one leak.

Fed plain (time, value, explanatory value) samples, so the live detector and the replay
command share it; it knows nothing about snapshots.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mysql_snmp.agents.leak.assessment import REASON_NONE, REASONS, Assessment, assess
from mysql_snmp.agents.leak.config import LeakConfig, SeriesConfig
from mysql_snmp.agents.leak.history import SeriesHistory

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
        )
        self.state = OK
        self.since: float | None = None
        self.confirmations = 0
        self.last_growth: float | None = None
        self.last_suspicious: float | None = None
        self.clear_level: float | None = None
        self.peak: float | None = None  # the highest level while leaking, and when it was set
        self.peak_time: float | None = None
        self.last: Assessment | None = None
        self.reason = REASON_NONE

    def feed(self, t: float, value: float, aux: float | None = None) -> tuple[int, int] | None:
        """Add one sample; returns (old, new) when the state changed.

        A sample not after the previous one is ignored (logged): agents may deliver a
        snapshot twice, and history must stay in time order.
        """
        last = self.history.last_time
        if last is not None and t <= last:
            log.debug("%s: sample at %s not after %s, ignored", self.series_id, t, last)
            return None
        if last is not None and t - last > self.config.max_gap_seconds:
            log.info("%s: %.0f s without samples, trend windows restart", self.series_id, t - last)
            self.history.restart_trend()
        if self.history.add(t, value, aux) is None:
            return None
        return self._evaluate(t)

    def _evaluate(self, now: float) -> tuple[int, int] | None:
        assessment = assess(self.history, self.series, self.config, now)
        self.last = assessment
        if assessment is None:
            return None
        old = self.state
        if assessment.growing:
            self.last_growth = now
        if assessment.suspicious:
            self.last_suspicious = now
        if self.state == OK:
            if assessment.suspicious:
                self.state = SUSPECT
                self.confirmations = 1 if assessment.confirmed else 0
        elif self.state == SUSPECT:
            self.confirmations = self.confirmations + 1 if assessment.confirmed else 0
            if self.confirmations >= self.config.confirm_evaluations:
                self.state = LEAKING
                self.clear_level = assessment.baseline_high
                self.peak, self.peak_time = assessment.level, now
            elif _since(now, self.last_suspicious) >= self.config.suspect_clear_seconds:
                self.state = OK
        elif self.state == LEAKING:
            if self.peak is None or assessment.level > self.peak:
                self.peak, self.peak_time = assessment.level, now
            returned = self.clear_level is not None and assessment.level <= self.clear_level
            if returned or self._growth_stopped(assessment, now):
                self.state = OK
                self.clear_level = self.peak = self.peak_time = None
                self.confirmations = 0
        if self.state == OK:
            self.reason = REASON_NONE
        elif assessment.growing:
            self.reason = assessment.reason
        if self.state != old:
            self.since = now
            return old, self.state
        return None

    def _growth_stopped(self, assessment: Assessment, now: float) -> bool:
        """While leaking: no window grew for a while and the level stopped setting new highs.

        A leak going on at rate r lifts the level by twice the noise margin in
        2 * margin / r, more than the wander can hide; a level that has not passed its peak
        for that long (and for ``leaking_clear_seconds`` at least) has stopped growing.
        With no window rising faster than the series' minimum rate there is none to wait for."""
        quiet = self.config.leaking_clear_seconds
        if _since(now, self.last_growth) < quiet:
            return False
        evidence = assessment.leaking_evidence
        # a rate below the series' minimum is no leak to wait for (and would wait for ever)
        if evidence is not None and evidence.rate_per_second * 3600.0 >= self.series.min_rate_bytes_per_hour:
            quiet = max(quiet, 2.0 * assessment.noise_margin / evidence.rate_per_second)
        return _since(now, self.peak_time) >= quiet

    def reading(self) -> Reading:
        if self.last is None:
            evidence = None
        elif self.state == LEAKING:
            # the longest window that still rises: one window's dip is not the leak's end,
            # and a shrinking rate or no forecast would be a wrong number on a leaking series
            evidence = self.last.leaking_evidence
        else:
            evidence = self.last.evidence
        return Reading(
            state=self.state,
            reason=self.reason,
            level=self.last.level if self.last else self.history.level(),
            rate_bytes_per_hour=evidence.rate_per_second * 3600.0 if evidence else None,
            window_seconds=evidence.seconds if evidence else None,
            window_growth_bytes=evidence.trend.growth if evidence else None,
            growing=bool(evidence and (evidence.growing or self.state == LEAKING)),
        )

    # -- persistence -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "since": self.since,
            "reason": self.reason,
            "confirmations": self.confirmations,
            "last_growth": self.last_growth,
            "last_suspicious": self.last_suspicious,
            "clear_level": self.clear_level,
            "peak": self.peak,
            "peak_time": self.peak_time,
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
        self.last_growth = _optional_float(data.get("last_growth"))
        self.last_suspicious = _optional_float(data.get("last_suspicious"))
        self.clear_level = _optional_float(data.get("clear_level"))
        self.peak = _optional_float(data.get("peak"))
        self.peak_time = _optional_float(data.get("peak_time"))


def _since(now: float, then: float | None) -> float:
    return now - then if then is not None else float("inf")


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)
