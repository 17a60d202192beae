"""LeakDetector: watches the memory series of each snapshot and writes its verdicts back.

Integration (exporter and AgentX loops)::

    detector = LeakDetector(config.get("leak"))          # YAML section, LeakConfig or None
    ...
    snapshot = collector.collect()
    detector.observe(snapshot)                            # adds leak_* series to the snapshot
    for event in detector.changes:                        # state changes of this snapshot
        send_notification(event)                          # e.g. leakDetected / leakCleared
    ...
    detector.close()                                      # saves the state file

One detector per target: its history is that server's.  Values it adds (catalog names,
labelled by ``series``): leak_series_name, leak_state, leak_growth_bytes_per_hour,
leak_window_growth_bytes, leak_window_seconds, leak_time_to_limit_seconds (and its band,
leak_time_to_limit_lower_seconds / _upper_seconds), leak_limit_bytes, leak_reason_code and
leak_reason{series,reason}.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from typing import Any, Callable, Iterator, Mapping

from .assessment import REASONS
from .clock_steps import WallClockWatch, log_step
from .config import LeakConfig, SeriesConfig, load_leak_config
from .forecast import forecast, forecast_band, number
from .history_lock import HistoryInUse, HistoryLock
from .series_detector import LeakEvent, SeriesDetector
from .server_identity import Identity, describe, same_server, server_identity, short_name
from .state_file import load_document, save_state, set_aside_path, storable
from ..snapshot import Labels, Snapshot, labels_of

log = logging.getLogger(__name__)

REASON_CODES = {reason: code for code, reason in enumerate(REASONS)}


def series_id(name: str, labels: Labels) -> str:
    """The ``series`` label of a watched series: its catalog name, plus its labels if any."""
    if not labels:
        return name
    return name + "{" + ",".join(f"{k}={v}" for k, v in labels) + "}"


class LeakDetector:
    def __init__(self, config: LeakConfig | Mapping[str, Any] | None = None, state_path: str | os.PathLike | None = None,
                 lock: HistoryLock | None = None, monotonic: Callable[[], float] | None = None):
        """``lock``: the state file's lock, already taken (agents/leak/history_lock.py); released by close().
        ``monotonic``: a running agent's monotonic clock (time.monotonic), to tell a wall clock that
        stepped forward from time that passed; None (replays, tests): snapshot times are taken as they come."""
        self.config = config if isinstance(config, LeakConfig) else load_leak_config(config)
        self.state_path = state_path if state_path is not None else self.config.state_file
        self.detectors: dict[str, SeriesDetector] = {}
        self.changes: list[LeakEvent] = []
        self.listeners: list[Callable[[LeakEvent], None]] = []
        self.lock = lock
        self._lock_lost = False
        self._clock_watch = WallClockWatch(monotonic) if monotonic is not None else None
        saved = load_document(self.state_path) if self.state_path else None
        self._saved_state = saved.series if saved else {}
        # The server the history is of: from the file until the first snapshot says (server_identity.py).
        self.server: Identity | None = saved.server if saved else None
        self._last_save: float | None = None
        self._save_failed = False
        self._over_limit_warned = False

    # -- the hook ----------------------------------------------------------------------

    def observe(self, snapshot: Snapshot) -> None:
        """Feed one snapshot; add the leak values to it; set ``changes`` to its state changes."""
        self.changes = []
        jump = self._clock_watch.forward_step(snapshot.timestamp) if self._clock_watch else None
        if jump is not None:
            moved = [d for d in self.detectors.values() if d.move_forward(jump)]
            log_step("forward", jump, snapshot.timestamp, len(moved))
        if snapshot.up:
            self._check_server(snapshot)
            stepped: list[SeriesDetector] = []
            for ident, series, value in self._watched(snapshot):
                detector = self._detector(ident, series)
                if detector is None:
                    continue
                aux = number(snapshot.values.get(series.explained_by)) if series.explained_by else None
                change = detector.feed(snapshot.timestamp, value, aux)
                if detector.clock_step is not None:
                    stepped.append(detector)
                if change is not None:
                    self._record(detector, change, snapshot)
            if stepped:
                log_step("back", max(d.clock_step for d in stepped), snapshot.timestamp, len(stepped))
        for ident, detector in self.detectors.items():
            self._export(snapshot, ident, detector)
        # A save time ahead of the snapshot is a clock that stepped back: waiting for it would not save for as long.
        if self.state_path and (
            self._last_save is None or not 0 <= snapshot.timestamp - self._last_save < self.config.save_every_seconds
        ):
            self.save(snapshot.timestamp)

    def _check_server(self, snapshot: Snapshot) -> None:
        """Keep the history only while it is this server's: a history measured on another
        (a state file given to the wrong agent, an address now answered by another server) is
        set aside, and detection starts afresh."""
        current = server_identity(snapshot)
        if self.server is not None and same_server(self.server, current) is False:
            self._set_aside(current)
            self.server = current
            return
        self.server = {**(self.server or {}), **current}

    def _set_aside(self, current: Identity) -> None:
        other = self.server or {}
        where = "not kept"
        if self.state_path:
            aside = set_aside_path(self.state_path, short_name(other))
            try:
                os.replace(self.state_path, aside)
                where = f"moved to {aside}"
            except FileNotFoundError:
                pass
            except OSError as exc:
                where = f"cannot be moved to {aside}: {exc.strerror or exc}"
        log.warning("leak history of %s is of another server, %s, not of %s (%s): starting without history",
                    self.state_path or "this detector", describe(other), describe(current), where)
        self._saved_state = {}
        self.detectors = {}
        self._over_limit_warned = False

    def _watched(self, snapshot: Snapshot) -> Iterator[tuple[str, SeriesConfig, float]]:
        for series in self.config.series:
            if not series.labels:
                value = number(snapshot.values.get(series.name))
                if value is not None:
                    yield series.name, series, value
                continue
            for labels, raw in (snapshot.series.get(series.name) or {}).items():
                given = dict(labels)
                if all(k in given and fnmatch.fnmatchcase(given[k], pattern) for k, pattern in series.labels):
                    value = number(raw)
                    if value is not None:
                        yield series_id(series.name, labels), series, value

    def _detector(self, ident: str, series: SeriesConfig) -> SeriesDetector | None:
        detector = self.detectors.get(ident)
        if detector is not None:
            return detector
        if len(self.detectors) >= self.config.max_series:
            if not self._over_limit_warned:
                log.warning("leak detector watches %d series already (max_series); %s and later ones ignored",
                            len(self.detectors), ident)
                self._over_limit_warned = True
            return None
        detector = SeriesDetector(ident, series, self.config)
        saved = self._saved_state.pop(ident, None)
        if saved is not None:
            try:
                detector.load_dict(saved)
            except (KeyError, TypeError, ValueError, OverflowError) as exc:
                log.warning("leak state of %s is malformed (%s): starting it without history", ident, exc)
                detector = SeriesDetector(ident, series, self.config)
        self.detectors[ident] = detector
        return detector

    def _record(self, detector: SeriesDetector, change: tuple[int, int], snapshot: Snapshot) -> None:
        reading = detector.reading()
        seconds, _ = forecast(reading, detector.series, snapshot.values)
        event = LeakEvent(
            series=detector.series_id,
            time=snapshot.timestamp,
            old=change[0],
            new=change[1],
            rate_bytes_per_hour=reading.rate_bytes_per_hour,
            window_growth_bytes=reading.window_growth_bytes,
            time_to_limit_seconds=seconds,
            reason=reading.reason,
        )
        log.log(logging.WARNING if event.new else logging.INFO, "leak detector: %s %s -> %s (%s, %s B/h)",
                event.series, event.old_name, event.new_name, event.reason,
                None if event.rate_bytes_per_hour is None else round(event.rate_bytes_per_hour))
        self.changes.append(event)
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # a broken notifier must not stop detection
                log.exception("leak event listener failed for %s", event.series)

    def _export(self, snapshot: Snapshot, ident: str, detector: SeriesDetector) -> None:
        reading = detector.reading()
        labels = labels_of(series=ident)
        snapshot.add_series("leak_series_name", labels, ident)
        snapshot.add_series("leak_state", labels, reading.state)
        snapshot.add_series("leak_reason_code", labels, REASON_CODES[reading.reason])
        for reason in REASONS:
            snapshot.add_series("leak_reason", labels_of(series=ident, reason=reason), int(reason == reading.reason))
        if reading.rate_bytes_per_hour is not None:
            snapshot.add_series("leak_growth_bytes_per_hour", labels, round(reading.rate_bytes_per_hour))
            snapshot.add_series("leak_window_growth_bytes", labels, round(reading.window_growth_bytes))
            snapshot.add_series("leak_window_seconds", labels, round(reading.window_seconds))
        seconds, limit = forecast(reading, detector.series, snapshot.values)
        if limit is not None:
            snapshot.add_series("leak_limit_bytes", labels, round(limit))
        if seconds is not None:
            snapshot.add_series("leak_time_to_limit_seconds", labels, round(seconds))
        lower, upper = forecast_band(reading, detector.series, snapshot.values)
        if lower is not None:
            snapshot.add_series("leak_time_to_limit_lower_seconds", labels, round(lower))
        if upper is not None:
            snapshot.add_series("leak_time_to_limit_upper_seconds", labels, round(upper))

    # -- persistence -------------------------------------------------------------------

    def save(self, now: float) -> None:
        if not self.state_path or not self._may_write():
            return
        # Series not seen since the restart keep their history until it is older than the
        # baseline (a dropped instrument must not stay in the file for ever).
        self._saved_state = {
            ident: saved for ident, saved in self._saved_state.items()
            if _last_time(saved) is not None and now - _last_time(saved) <= self.config.baseline_seconds
        }
        state = dict(self._saved_state)
        for ident, detector in list(self.detectors.items()):
            saved = detector.to_dict()
            if storable(saved):
                state[ident] = saved
                continue
            # A NaN or an overflow in one series' history must not make every save fail for
            # ever: that series starts afresh, the others are saved.
            log.warning("leak history of %s holds a number that cannot be saved: restarting that series", ident)
            self.detectors[ident] = SeriesDetector(ident, detector.series, self.config)
        try:
            save_state(self.state_path, state, now, self.server)
            if self._save_failed:
                log.warning("leak state file %s written again", self.state_path)
            self._save_failed = False
        except (OSError, ValueError) as exc:
            if not self._save_failed:
                log.warning("cannot write leak state file %s: %s (history will not survive a restart)",
                            self.state_path, exc)
            self._save_failed = True
        self._last_save = now

    def _may_write(self) -> bool:
        """Whether this detector may replace the state file: not while another agent holds its
        lock (taken when the lock file could not be opened at this agent's start)."""
        if self.lock is None:
            return True
        try:
            self.lock.acquire()
        except HistoryInUse as exc:
            if not self._lock_lost:
                log.warning("%s: this agent's history is not saved", exc)
            self._lock_lost = True
            return False
        self._lock_lost = False
        return True

    def close(self) -> None:
        if self._last_save is not None or self.detectors:
            last_times = [d.history.last_time for d in self.detectors.values() if d.history.last_time]
            self.save(max(last_times) if last_times else 0.0)
        if self.lock is not None:
            self.lock.release()


def _last_time(saved: Any) -> float | None:
    try:
        return float(saved["history"]["last_time"])
    except (KeyError, TypeError, ValueError):
        return None
