"""The wall clock stepping back under the detector (NTP correcting a clock that ran ahead, a restored
VM, a history saved a day ahead): one warning, the history moves back, and detection goes on at the
same pace as without the step -- never every sample ignored while "ok" is served."""

from __future__ import annotations

import json
import logging
import re

import pytest

from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.leak.history import SeriesHistory
from mysql_snmp.agents.leak.series_detector import LEAKING, OK
from mysql_snmp.agents.leak.state_file import load_document, load_state
from mysql_snmp.agents.snapshot import Snapshot, labels_of
from tests.leak import synthetic

HOUR, DAY = synthetic.HOUR, synthetic.DAY
EPOCH = 1_800_000_000.0  # the traces start at 0; an agent's samples carry Unix times
DICT = "innodb_mem_dictionary_bytes"
CONFIG = {"series": [{"name": DICT, "explained_by": "status_open_table_definitions"}],
          "mature_baseline_seconds": 3 * HOUR}


def run(trace, step_at: float | None = None, step: float = 0.0, monotonic: bool = True):
    """Feed the trace; from ``step_at`` on the wall clock reads ``step`` seconds more (negative: less)
    while the monotonic clock goes on (as the agents give it; ``monotonic=False``: as a replay, without
    one).  Returns the detector, the trace time of each state change, and the state served after each sample."""
    trace_time = [0.0]
    detector = LeakDetector({**CONFIG, "state_file": None}, monotonic=(lambda: trace_time[0]) if monotonic else None)
    changes, served = [], []
    for t, value, aux in trace.rows():
        trace_time[0] = t
        clock = EPOCH + t + (step if step_at is not None and t >= step_at else 0.0)
        snapshot = Snapshot("db1", clock, True, values={DICT: value, "status_open_table_definitions": aux})
        detector.observe(snapshot)
        changes += [(t, e.new_name) for e in detector.changes]
        served.append(snapshot.series["leak_state"][labels_of(series=DICT)])
    return detector, changes, served


def clock_warnings(caplog, which: str = "back") -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and f"clock went {which}" in r.getMessage()]


@pytest.mark.parametrize("step", [-DAY, -365 * DAY, -90.0, DAY, 365 * DAY])
def test_a_leak_after_the_clock_stepped_is_detected_as_without_the_step(caplog, step):
    trace = synthetic.dictionary_leak(days=0.3, onset=4 * HOUR)
    _, unstepped, _ = run(trace)
    assert [state for _, state in unstepped] == ["suspect", "leaking"]  # found without a step
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        detector, stepped, _ = run(trace, step_at=2 * HOUR, step=step)
    # Found at the same samples, give or take a bin: the history before the step still counts.
    assert [state for _, state in stepped] == ["suspect", "leaking"]
    for (before, _), (after, _) in zip(unstepped, stepped):
        assert abs(after - before) <= 2 * detector.config.bin_seconds
    which = "back" if step < 0 else "forward"
    warnings = clock_warnings(caplog, which)
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings
    went = float(re.search(rf"went {which} (\d+) s", warnings[0]).group(1))
    assert abs(step) - 15 <= went <= abs(step) and "1 series" in warnings[0]  # less the time between samples
    history = detector.detectors[DICT].history
    assert history.last_time == EPOCH + trace.times[-1] + step  # every sample after the step was taken


def test_control_without_the_monotonic_clock_a_year_forward_ages_the_baseline_out_and_delays_the_leak():
    trace = synthetic.dictionary_leak(days=0.3, onset=4 * HOUR)
    _, unstepped, _ = run(trace)
    detector, stepped, _ = run(trace, step_at=2 * HOUR, step=365 * DAY, monotonic=False)
    assert stepped[-1][1] == "leaking" and stepped[-1][0] - unstepped[-1][0] > HOUR
    moved, _, _ = run(trace, step_at=2 * HOUR, step=365 * DAY)
    assert len(detector.detectors[DICT].history.buckets) < len(moved.detectors[DICT].history.buckets)


def test_a_leak_going_on_when_the_clock_steps_back_stays_leaking_with_its_rate():
    trace = synthetic.dictionary_leak(days=0.4, onset=3.5 * HOUR)
    detector, changes, served = run(trace, step_at=7 * HOUR, step=-DAY)
    assert [state for _, state in changes] == ["suspect", "leaking"] and changes[-1][0] < 7 * HOUR
    assert set(served[-len(served) // 3:]) == {LEAKING}  # no "ok" served after the step
    rate = detector.detectors[DICT].reading().rate_bytes_per_hour
    assert rate == pytest.approx(trace.rate_bytes_per_hour, rel=0.15)


def test_a_history_saved_by_a_clock_a_day_ahead_goes_on_from_the_first_sample(tmp_path, caplog):
    """The agent ran with its clock a day ahead, then restarted after NTP put it right."""
    trace = synthetic.dictionary_leak(days=0.3, onset=4 * HOUR)
    path = tmp_path / "leak-state.json"
    rows = list(trace.rows())
    ahead = LeakDetector(CONFIG, state_path=path)
    half = len(rows) // 2
    for t, value, aux in rows[:half]:
        ahead.observe(Snapshot("db1", EPOCH + t + DAY, True, values={DICT: value, "status_open_table_definitions": aux}))
    ahead.close()
    saved_until = load_state(path)[DICT]["history"]["last_time"]
    assert saved_until == EPOCH + rows[half - 1][0] + DAY

    restarted = LeakDetector(CONFIG, state_path=path)
    states = []
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        for t, value, aux in rows[half:]:
            snapshot = Snapshot("db1", EPOCH + t, True, values={DICT: value, "status_open_table_definitions": aux})
            restarted.observe(snapshot)
            states.append(snapshot.series["leak_state"][labels_of(series=DICT)])
    restarted.close()
    assert len(clock_warnings(caplog)) == 1
    assert states[-1] == LEAKING  # the leak (onset at 4 h, after the restart) was found
    assert load_state(path)[DICT]["history"]["last_time"] == EPOCH + rows[-1][0]
    assert len(load_state(path)[DICT]["history"]["buckets"]) >= 0.3 * DAY / 900 - 2  # nothing lost


def test_the_history_is_saved_on_the_stepped_clock_at_once(tmp_path):
    path = tmp_path / "leak-state.json"
    detector = LeakDetector({**CONFIG, "save_every_seconds": 60}, state_path=path)
    for i in range(10):
        detector.observe(Snapshot("db1", EPOCH + 30 * i, True, values={DICT: 1e6}))
    detector.observe(Snapshot("db1", EPOCH + 300 - DAY, True, values={DICT: 1e6}))
    saved = load_document(path)
    assert json.loads(path.read_text())["saved_at"] == EPOCH + 300 - DAY  # not a day later
    assert saved.series[DICT]["history"]["last_time"] == EPOCH + 300 - DAY


def test_a_repeated_snapshot_is_still_ignored_quietly(caplog):
    detector = LeakDetector({**CONFIG, "state_file": None}, monotonic=lambda: 0.0)
    with caplog.at_level(logging.DEBUG, logger="mysql_snmp.agents.leak"):
        for _ in range(2):
            detector.observe(Snapshot("db1", EPOCH, True, values={DICT: 1e6}))
    assert detector.detectors[DICT].history.last_time == EPOCH
    assert detector.detectors[DICT].state == OK and not clock_warnings(caplog)


def test_moving_a_history_back_keeps_bins_and_buckets_on_their_grid_and_in_order():
    history = SeriesHistory(bin_seconds=60, bins_kept=7200, bucket_seconds=900, baseline_seconds=86400)
    for i in range(200):
        history.add(EPOCH + 15 * i, 1e6 + i)
    last = history.last_time
    shift = history.move_before(last - 3600.5)
    assert shift == -3660  # whole bins, ending within one bin before the new sample
    assert last - 3600.5 - 60 <= history.last_time < last - 3600.5
    assert all(b.start % 60 == 0 for b in history.bins) and all(b.start % 900 == 0 for b in history.buckets)
    assert [b.start for b in history.buckets] == sorted(b.start for b in history.buckets)
    assert history.buckets[-1].start <= last - 3600.5
    before = len(history.bins)
    history.add(last - 3600.5, 5e6)  # taken, and the pending bin of the old samples closes
    history.add(last - 3600.5 + 120, 5e6)
    assert len(history.bins) >= before + 1
