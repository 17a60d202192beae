"""LeakDetector on snapshots: exported values, events, labelled series, the state file."""

import json
import logging

import pytest

from tests.leak import synthetic
from mysql_snmp.agents.leak.detector import LeakDetector, series_id
from mysql_snmp.agents.leak.series_detector import LEAKING, OK
from mysql_snmp.agents.snapshot import Snapshot, labels_of

HOUR = synthetic.HOUR
# day one (only suspect) shortened to 3 h, so the leak traces stay short
SHORT_DAY_ONE = {"mature_baseline_seconds": 3 * HOUR}
DICT = "innodb_mem_dictionary_bytes"
DICT_LABELS = labels_of(series=DICT)


def snapshots(trace, extra_values=None):
    for t, value, aux in trace.rows():
        snapshot = Snapshot(target="db1", timestamp=t, up=True)
        snapshot.values[trace.series] = value
        if aux is not None:
            snapshot.values["status_open_table_definitions"] = aux
        snapshot.values.update(extra_values or {})
        yield snapshot


def feed(detector, trace, extra_values=None):
    events, last = [], None
    for snapshot in snapshots(trace, extra_values):
        detector.observe(snapshot)
        events.extend(detector.changes)
        last = snapshot
    return events, last


def test_seed_leak_sets_leak_values_and_records_events(tmp_path):
    trace = synthetic.dictionary_leak(days=0.25, onset=4 * HOUR)
    detector = LeakDetector({"series": [{"name": DICT, "explained_by": "status_open_table_definitions"}], **SHORT_DAY_ONE},
                            state_path=tmp_path / "leak.json")
    heard = []
    detector.listeners.append(heard.append)
    rss, total = 2 * 1024**3, 8 * 1024**3
    events, last = feed(detector, trace, {"process_resident_memory_bytes": rss, "host_memory_total_bytes": total})
    assert [(e.old_name, e.new_name) for e in events] == [("ok", "suspect"), ("suspect", "leaking")]
    assert heard == events
    leaking = events[-1]
    assert leaking.series == DICT and leaking.reason == "unexplained"
    assert leaking.time_to_limit_seconds == pytest.approx((total - rss) / (leaking.rate_bytes_per_hour / 3600))
    assert last.series["leak_state"][DICT_LABELS] == LEAKING
    assert last.series["leak_series_name"][DICT_LABELS] == DICT
    assert last.series["leak_reason_code"][DICT_LABELS] == 2
    assert last.series["leak_reason"][labels_of(series=DICT, reason="unexplained")] == 1
    assert last.series["leak_reason"][labels_of(series=DICT, reason="tables")] == 0
    rate = last.series["leak_growth_bytes_per_hour"][DICT_LABELS]
    assert abs(rate / trace.rate_bytes_per_hour - 1) < 0.15
    assert last.series["leak_limit_bytes"][DICT_LABELS] == total
    assert last.series["leak_time_to_limit_seconds"][DICT_LABELS] == pytest.approx((total - rss) / (rate / 3600), rel=0.01)
    # while leaking the rate is the whole leak's: its span is the time since the fitted onset
    assert last.series["leak_window_seconds"][DICT_LABELS] == pytest.approx(trace.times[-1] - trace.onset, abs=900)
    assert "leak_state" not in last.values  # labelled values only


def test_series_absent_from_the_snapshot_is_not_watched():
    detector = LeakDetector({"state_file": None})
    snapshot = Snapshot(target="db1", timestamp=1000.0, up=True, values={"status_uptime": 5})
    detector.observe(snapshot)
    assert detector.detectors == {}
    assert "leak_state" not in snapshot.series


def test_labelled_instruments_matching_the_pattern_are_each_watched():
    config = {"state_file": None, "series": [{"name": "perf_schema_memory_bytes",
                                              "labels": {"event_name": "memory/innodb/*"}}]}
    detector = LeakDetector(config)
    snapshot = Snapshot(target="db1", timestamp=1000.0, up=True)
    snapshot.add_series("perf_schema_memory_bytes", labels_of(event_name="memory/innodb/mem0mem"), 4_015_256)
    snapshot.add_series("perf_schema_memory_bytes", labels_of(event_name="memory/innodb/hash0hash"), 3_558_304)
    snapshot.add_series("perf_schema_memory_bytes", labels_of(event_name="memory/sql/TABLE"), 1_000)
    detector.observe(snapshot)
    assert sorted(detector.detectors) == [
        "perf_schema_memory_bytes{event_name=memory/innodb/hash0hash}",
        "perf_schema_memory_bytes{event_name=memory/innodb/mem0mem}",
    ]
    ident = series_id("perf_schema_memory_bytes", labels_of(event_name="memory/innodb/mem0mem"))
    assert snapshot.series["leak_state"][labels_of(series=ident)] == OK


def test_max_series_bounds_the_watched_series(caplog):
    config = {"state_file": None, "max_series": 1,
              "series": [{"name": "perf_schema_memory_bytes", "labels": {"event_name": "*"}}]}
    detector = LeakDetector(config)
    snapshot = Snapshot(target="db1", timestamp=1000.0, up=True)
    for name in ("a", "b", "c"):
        snapshot.add_series("perf_schema_memory_bytes", labels_of(event_name=name), 1)
    with caplog.at_level(logging.WARNING):
        detector.observe(snapshot)
    assert len(detector.detectors) == 1
    assert "max_series" in caplog.text


def test_a_down_snapshot_feeds_nothing_but_keeps_exporting_state():
    detector = LeakDetector({"state_file": None})
    detector.observe(Snapshot(target="db1", timestamp=1000.0, up=True, values={DICT: 1e6}))
    down = Snapshot(target="db1", timestamp=1015.0, up=False)
    detector.observe(down)
    assert down.series["leak_state"][DICT_LABELS] == OK
    assert detector.detectors[DICT].history.last_time == 1000.0


def test_history_and_state_survive_a_restart(tmp_path):
    path = tmp_path / "leak-state.json"
    trace = synthetic.dictionary_leak(days=0.25, onset=4 * HOUR)
    rows = list(trace.rows())
    first = LeakDetector({"series": [{"name": DICT, "explained_by": "status_open_table_definitions"}], **SHORT_DAY_ONE},
                         state_path=path)
    half = len(rows) * 3 // 4
    for t, value, aux in rows[:half]:
        first.observe(Snapshot("db1", t, True, values={DICT: value, "status_open_table_definitions": aux}))
    assert first.detectors[DICT].state == LEAKING
    first.close()
    saved = json.loads(path.read_text())
    assert saved["version"] == 1 and DICT in saved["series"]
    assert not [p for p in path.parent.iterdir() if p.name != path.name]  # no temporary files left

    second = LeakDetector({"series": [{"name": DICT, "explained_by": "status_open_table_definitions"}], **SHORT_DAY_ONE},
                          state_path=path)
    events = []
    for t, value, aux in rows[half:]:
        second.observe(Snapshot("db1", t, True, values={DICT: value, "status_open_table_definitions": aux}))
        events.extend(second.changes)
    restored = second.detectors[DICT]
    assert restored.state == LEAKING
    assert events == []  # no second leakDetected after the restart
    assert len(restored.history.buckets) >= 20


@pytest.mark.parametrize("content", ["{not json", '{"version": 99, "series": {}}', "[]",
                                     '{"version": 1, "series": {"innodb_mem_dictionary_bytes": {"state": 7}}}'])
def test_corrupt_state_file_starts_fresh_with_a_warning(tmp_path, caplog, content):
    path = tmp_path / "leak-state.json"
    path.write_text(content)
    with caplog.at_level(logging.WARNING):
        detector = LeakDetector({}, state_path=path)
        detector.observe(Snapshot("db1", 1000.0, True, values={DICT: 1e6}))
    assert detector.detectors[DICT].state == OK
    assert "starting" in caplog.text and "without history" in caplog.text


def test_missing_state_file_starts_fresh_and_is_created(tmp_path):
    path = tmp_path / "sub" / "leak-state.json"
    detector = LeakDetector({}, state_path=path)
    detector.observe(Snapshot("db1", 1000.0, True, values={DICT: 1e6}))
    assert path.exists()


def test_unwritable_state_file_warns_once_and_keeps_detecting(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    detector = LeakDetector({"save_every_seconds": 1}, state_path=blocker / "leak.json")
    with caplog.at_level(logging.WARNING):
        for i in range(5):
            detector.observe(Snapshot("db1", 1000.0 + 15 * i, True, values={DICT: 1e6}))
    assert caplog.text.count("cannot write leak state file") == 1
    assert detector.detectors[DICT].history.last_time == 1060.0


def test_state_path_for_target_gives_each_target_its_file():
    from mysql_snmp.agents.leak.state_file import state_path_for_target

    base = "/var/lib/mysql-snmp/leak-state.json"
    assert str(state_path_for_target(base, "db1:3306")) == "/var/lib/mysql-snmp/leak-state.db1_3306.json"
    assert str(state_path_for_target(base, "unix:///run/mysqld/mysqld.sock")) == \
        "/var/lib/mysql-snmp/leak-state.unix_run_mysqld_mysqld.sock.json"


def test_saved_series_not_seen_again_are_dropped_once_older_than_the_baseline(tmp_path):
    path = tmp_path / "leak.json"
    first = LeakDetector({"series": [{"name": DICT}, {"name": "process_resident_memory_bytes"}]}, state_path=path)
    first.observe(Snapshot("db1", 1000.0, True, values={DICT: 1e6, "process_resident_memory_bytes": 1e9}))
    first.close()
    second = LeakDetector({"series": [{"name": DICT}, {"name": "process_resident_memory_bytes"}]}, state_path=path)
    second.observe(Snapshot("db1", 2000.0, True, values={DICT: 1e6}))  # no RSS any more
    second.save(2000.0)
    assert set(json.loads(path.read_text())["series"]) == {DICT, "process_resident_memory_bytes"}
    week_later = 1000.0 + second.config.baseline_seconds + 3600
    second.observe(Snapshot("db1", week_later, True, values={DICT: 1e6}))
    second.save(week_later)
    assert set(json.loads(path.read_text())["series"]) == {DICT}
