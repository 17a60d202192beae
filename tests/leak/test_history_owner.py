"""Whose a leak history file is: one agent at a time (a lock), and one server (its identity in the
file).  Real files, real flock; the control shows what two unguarded detectors on one file do."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading

import pytest

from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.leak.history_lock import HistoryInUse, HistoryLock, lock_path
from mysql_snmp.agents.leak.server_identity import same_server
from mysql_snmp.agents.leak.setup import build_leak_detector
from mysql_snmp.agents.leak.state_file import load_document, parse_state, set_aside_path
from mysql_snmp.agents.snapshot import Snapshot

DICT = "innodb_mem_dictionary_bytes"
RSS = "process_resident_memory_bytes"
CONFIG = {"series": [{"name": DICT}, {"name": RSS}]}


def snapshot(t, values, *, target="db1:3306", **variables):
    taken = Snapshot(target, t, True, values=dict(values))
    if variables:
        taken.raw["global_variables"] = variables
    return taken


SERVER_A = {"hostname": "db1", "port": 3306, "server_id": 1}
SERVER_B = {"hostname": "db2", "port": 3306, "server_id": 2}


# ------------------------------------------------------------------ the lock


def test_control_two_unlocked_detectors_on_one_file_wipe_each_others_series(tmp_path):
    path = tmp_path / "leak-state.json"
    first = LeakDetector({"series": [{"name": DICT}]}, state_path=path)
    second = LeakDetector({"series": [{"name": RSS}]}, state_path=path)
    first.observe(snapshot(1000.0, {DICT: 1e6}))
    assert set(parse_state(path.read_text())) == {DICT}
    second.observe(snapshot(1000.0, {RSS: 1e9}))
    assert set(parse_state(path.read_text())) == {RSS}  # the first one's history is gone


def test_a_second_lock_on_one_file_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "leak-state.json"
    first = HistoryLock(path, "mysql-snmp agentx monitoring db1:3306")
    assert first.acquire()
    assert lock_path(path).read_text() == f"pid {os.getpid()}, mysql-snmp agentx monitoring db1:3306\n"
    with pytest.raises(HistoryInUse) as refused:
        HistoryLock(path, "mysql-snmp exporter monitoring db2:3306").acquire()
    message = str(refused.value)
    assert "\n" not in message and str(path) in message
    assert f"in use by pid {os.getpid()}, mysql-snmp agentx monitoring db1:3306" in message
    first.release()
    again = HistoryLock(path, "mysql-snmp exporter monitoring db2:3306")
    assert again.acquire()
    again.release()


def test_one_directory_named_by_two_paths_is_one_lock(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    first = HistoryLock(real / "leak-state.json", "the first agent")
    assert first.acquire()
    with pytest.raises(HistoryInUse, match="the first agent"):
        HistoryLock(tmp_path / "alias" / "leak-state.json", "the second agent").acquire()
    first.release()


def test_the_lock_of_a_process_that_died_is_free(tmp_path):
    path = tmp_path / "leak-state.json"
    holder = HistoryLock(path, "x")
    child = subprocess.run([sys.executable, "-c", f"""
import sys
from mysql_snmp.agents.leak.history_lock import HistoryLock
HistoryLock({str(path)!r}, "a killed agent").acquire()
import os, signal
os.kill(os.getpid(), signal.SIGKILL)
"""], capture_output=True)
    assert child.returncode == -9, child.stderr  # killed holding it: no stale lock left behind
    assert lock_path(path).read_text().endswith("a killed agent\n")
    assert holder.acquire()
    holder.release()


def test_a_symlink_at_the_locks_path_is_not_followed(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    victim = tmp_path / "precious"
    victim.write_text("keep me")
    lock_path(path).symlink_to(victim)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert HistoryLock(path, "x").acquire() is False
    assert victim.read_text() == "keep me"
    assert "cannot lock leak state file" in caplog.text and "\n" not in caplog.text.strip()


def test_a_fifo_at_the_locks_path_does_not_hang_the_start(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    os.mkfifo(lock_path(path))
    result = {}
    thread = threading.Thread(target=lambda: result.update(held=HistoryLock(path, "x").acquire()), daemon=True)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        thread.start()
        thread.join(5)
    assert not thread.is_alive() and result["held"] is False
    assert "not a regular file" in caplog.text


def test_a_detector_that_could_not_lock_at_start_saves_nothing_once_another_holds_it(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    lock_path(path).mkdir()  # the lock file cannot be opened: this agent starts unlocked
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        unlocked = HistoryLock(path, "the first agent")
        assert not unlocked.acquire()
        first = LeakDetector({"series": [{"name": DICT}], "save_every_seconds": 1}, state_path=path, lock=unlocked)
        first.observe(snapshot(1000.0, {DICT: 1e6}))
        assert DICT in parse_state(path.read_text())
        lock_path(path).rmdir()
        other = HistoryLock(path, "the second agent")
        assert other.acquire()
        other_history = '{"version": 1, "saved_at": 1, "series": {}}'
        path.write_text(other_history)
        for i in range(3):
            first.observe(snapshot(1001.0 + i, {DICT: 1e6}))
    assert path.read_text() == other_history  # the holder's file is left alone
    refusals = [r.getMessage() for r in caplog.records if "not saved" in r.getMessage()]
    assert len(refusals) == 1 and "the second agent" in refusals[0]
    other.release()


def test_build_leak_detector_locks_only_when_asked(tmp_path):
    path = tmp_path / "state.json"
    held = build_leak_detector("db1:3306", None, path, agent="agentx", live=True)
    build_leak_detector("db1:3306", None, path, agent="exporter")  # a library use: no lock taken
    with pytest.raises(HistoryInUse, match="mysql-snmp agentx monitoring db1:3306"):
        build_leak_detector("db1:3306", None, path, agent="exporter", live=True)
    held.close()
    build_leak_detector("db1:3306", None, path, agent="exporter", live=True).close()


# ------------------------------------------------------------------ the server


def history_of(server, tmp_path, target="db1:3306"):
    path = tmp_path / "leak-state.json"
    detector = LeakDetector(CONFIG, state_path=path)
    for i in range(3):
        detector.observe(snapshot(1000.0 + 60 * i, {DICT: 1e6, RSS: 1e9}, target=target, **server))
    detector.close()
    return path


def test_the_file_records_the_server_its_history_is_of(tmp_path):
    path = history_of(SERVER_A, tmp_path)
    assert load_document(path).server == {**SERVER_A, "target": "db1:3306"}


def test_the_same_servers_history_is_loaded(tmp_path):
    path = history_of(SERVER_A, tmp_path)
    detector = LeakDetector(CONFIG, state_path=path)
    detector.observe(snapshot(2000.0, {DICT: 1e6}, **SERVER_A))
    assert [b.count for b in detector.detectors[DICT].history.buckets] == [3, 1]  # the three saved samples, and this one


def test_another_servers_history_is_set_aside_and_detection_starts_afresh(tmp_path, caplog):
    path = history_of(SERVER_A, tmp_path)
    original = path.read_text()
    detector = LeakDetector(CONFIG, state_path=path)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        detector.observe(snapshot(2000.0, {DICT: 5e6}, **SERVER_B))
        detector.observe(snapshot(2060.0, {DICT: 5e6}, **SERVER_B))
    aside = set_aside_path(path, "db1:3306")
    assert aside.read_text() == original  # kept, not destroyed
    assert detector.detectors[DICT].history.last_time == 2060.0
    assert len(detector.detectors[DICT].history.buckets) == 1 and RSS not in detector.detectors
    detector.close()
    saved = load_document(path)
    assert saved.server["hostname"] == "db2" and set(saved.series) == {DICT}  # A's RSS history is not carried over
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "another server, db1:3306 (server_id 1, target db1:3306), not of db2:3306" in warnings[0]
    assert f"moved to {aside}" in warnings[0]


def test_a_server_answering_at_the_address_mid_run_is_not_judged_by_the_last_ones_history(tmp_path, caplog):
    path = tmp_path / "leak-state.json"
    detector = LeakDetector({"series": [{"name": DICT}], "save_every_seconds": 1}, state_path=path)
    for i in range(3):
        detector.observe(snapshot(1000.0 + 60 * i, {DICT: 1e6}, **SERVER_A))
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        detector.observe(snapshot(1200.0, {DICT: 9e6}, **SERVER_B))  # a failover moved the address
    assert detector.detectors[DICT].history.last_time == 1200.0 and len(detector.detectors[DICT].history.bins) == 0
    assert load_document(set_aside_path(path, "db1:3306")).server["hostname"] == "db1"
    assert caplog.text.count("another server") == 1


def test_a_file_of_an_older_release_without_the_server_is_still_loaded(tmp_path):
    path = tmp_path / "leak-state.json"
    series = {DICT: {"state": 0, "history": {"last_time": 1000.0, "bins": [[900.0, 1e6, None]],
                                             "buckets": [[900.0, 1e6, 1e6, 1e6, 1]]}}}
    path.write_text(json.dumps({"version": 1, "saved_at": 1000.0, "series": series}))
    detector = LeakDetector(CONFIG, state_path=path)
    detector.observe(snapshot(1060.0, {DICT: 1e6}, **SERVER_B))
    assert len(detector.detectors[DICT].history.bins) == 1
    detector.save(1060.0)
    assert load_document(path).server["hostname"] == "db2"  # recorded from now on


def test_without_the_servers_variables_the_target_decides():
    assert same_server({"target": "db1:3306", "hostname": "db1", "port": 3306}, {"target": "db1:3306"})
    assert same_server({"target": "db1:3306"}, {"target": "db2:3306"}) is False
    assert same_server({"server_uuid": "u1", "hostname": "h"}, {"server_uuid": "u1", "hostname": "renamed"})
    assert same_server({"server_uuid": "u1"}, {"server_uuid": "u2", "target": "x"}) is False
    assert same_server({"hostname": "h", "port": 3306}, {"hostname": "h", "port": 3307}) is False
    assert same_server({}, {"target": "x"}) is None


@pytest.mark.parametrize("server", [[1, 2], {"hostname": "x" * 300}, {"hostname": True}, {"password": "x"}])
def test_a_malformed_server_in_the_file_is_an_unusable_file(tmp_path, caplog, server):
    path = tmp_path / "leak-state.json"
    path.write_text(json.dumps({"version": 1, "saved_at": 1.0, "series": {}, "server": server}))
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        assert load_document(path).series == {} and load_document(path).server is None
    assert "unusable" in caplog.text


def test_a_hostile_hostname_does_not_forge_log_lines(tmp_path, caplog):
    path = history_of(SERVER_A, tmp_path)
    detector = LeakDetector(CONFIG, state_path=path)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.leak"):
        detector.observe(snapshot(2000.0, {DICT: 1e6}, hostname="evil\nCRITICAL forged", port=3306))
    warning = [r.getMessage() for r in caplog.records if "another server" in r.getMessage()][0]
    assert "\n" not in warning and "evil\\nCRITICAL forged:3306" in warning
