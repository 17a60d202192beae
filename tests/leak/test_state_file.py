"""The leak history file against hostile input: every unusable file is a warning and a fresh start
(no traceback, no hang), and what is written is always JSON that reads back, with finite numbers."""

from __future__ import annotations

import json
import logging
import math
import os
import threading

import pytest

from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.leak.series_detector import OK
from mysql_snmp.agents.leak.state_file import MAX_STATE_BYTES, load_state, parse_state, save_state
from mysql_snmp.agents.snapshot import Snapshot

DICT = "innodb_mem_dictionary_bytes"


def valid_series(**history) -> dict:
    return {DICT: {"state": 0, "history": {"last_time": 1000.0, "bins": [[960.0, 1e6, None]], "buckets": [],
                                         **history}}}


def document(series) -> str:
    return json.dumps({"version": 1, "saved_at": 1000.0, "series": series})


def load_in_thread(path, seconds=10.0):
    """load_state() in a thread, so a hang fails the test instead of stalling the run."""
    result = {}
    thread = threading.Thread(target=lambda: result.update(state=load_state(path)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"load_state({path}) still running after {seconds}s"
    return result["state"]


HOSTILE = {
    "nested object": '{"version": 1, "series": ' + '{"a": ' * 100000 + "1" + "}" * 100001,
    "nested list": '{"version": 1, "series": {"x": ' + "[" * 100000 + "]" * 100000 + "}}",
    "nested within the limit of json but deeper than a state": document({"x": json.loads("[" * 50 + "]" * 50)}),
    "NaN": document(valid_series()).replace("1000000.0", "NaN"),
    "Infinity": document(valid_series()).replace("1000000.0", "-Infinity"),
    "1e999 (inf once parsed)": document(valid_series()).replace("1000000.0", "1e999"),
    "a 400-digit integer": document(valid_series()).replace("1000000.0", "9" * 400),
    "a 5000-digit integer": document(valid_series()).replace("1000000.0", "9" * 5000),
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe",
    "truncated": document(valid_series())[:-7],
    "empty": "",
    "a list": "[1, 2, 3]",
    "an unknown version": '{"version": 99, "series": {}}',
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_is_a_warning_and_a_fresh_start(tmp_path, caplog, name):
    path = tmp_path / "leak-state.json"
    content = HOSTILE[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_in_thread(path) == {}
        detector = LeakDetector({}, state_path=path)
        detector.observe(Snapshot("db1", 2000.0, True, values={DICT: 2e6}))
    assert detector.detectors[DICT].state == OK
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and all(str(path) in w and "\n" not in w for w in warnings), warnings
    # The fresh history replaced the hostile file with one that reads back.
    assert DICT in parse_state(path.read_text())


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    os.mkfifo(path)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_in_thread(path, seconds=5) == {}
    assert "not a regular file" in caplog.text and str(path) in caplog.text


@pytest.mark.parametrize("kind", ["directory", "device"])
def test_other_non_regular_paths_are_refused(tmp_path, caplog, kind):
    path = tmp_path / "leak-state.json"
    if kind == "directory":
        path.mkdir()
    else:
        path = "/dev/zero"  # endless: reading it "to the end" would never finish
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_in_thread(path) == {}
    assert str(path) in caplog.text and "starting without history" in caplog.text


def test_an_oversized_file_is_not_read(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_STATE_BYTES + 1)  # sparse: costs no disk
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_in_thread(path) == {}
    assert "more than such a file ever holds" in caplog.text


def test_an_unreadable_file_is_a_warning(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    path.symlink_to(path)  # a loop: ELOOP, whoever runs the test (root reads any mode)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_in_thread(path) == {}
    assert "unreadable" in caplog.text and str(path) in caplog.text


def test_a_valid_file_still_loads():
    assert parse_state(document(valid_series())) == valid_series()


def test_a_series_that_turned_non_finite_is_restarted_and_the_others_saved(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    config = {"series": [{"name": DICT}, {"name": "innodb_mem_adaptive_hash_index_bytes"}]}
    detector = LeakDetector(config, state_path=path)
    detector.observe(Snapshot("db1", 1000.0, True, values={DICT: 1e6, "innodb_mem_adaptive_hash_index_bytes": 5e6}))
    # What a NaN reaching the history would do: before, json refused it at every save for ever.
    detector.detectors[DICT].history.last_time = math.nan
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        detector.save(1100.0)
        detector.save(1200.0)
    saved = parse_state(path.read_text())
    assert saved["innodb_mem_adaptive_hash_index_bytes"]["history"]["last_time"] == 1000.0
    assert DICT in saved and saved[DICT]["history"]["last_time"] is None
    assert len([r for r in caplog.records if "cannot be saved" in r.getMessage()]) == 1
    assert "cannot write" not in caplog.text


def test_save_refuses_non_finite_numbers_rather_than_writing_them(tmp_path):
    path = tmp_path / "leak-state.json"
    with pytest.raises(ValueError):
        save_state(path, {"x": math.inf}, 1.0)
    assert not path.exists() and list(tmp_path.iterdir()) == []
