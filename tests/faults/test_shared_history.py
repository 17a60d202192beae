"""One leak history file and real agent processes: a second agent given the file refuses to start
naming the holder, a file of another server is set aside when an agent starts on this one, and a
file saved by a clock a day ahead goes on from the agent's first sample (tests/leak/ has the
controls: two unlocked detectors wiping each other's series, a leak found as without the step)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mysql_snmp.agents.leak.history_lock import lock_path
from mysql_snmp.agents.leak.state_file import load_document, set_aside_path
from mysql_snmp.agents.demo.netsnmp_sandbox import REPO_ROOT
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.faults.exporter_process import ExporterProcess, start_exporter
from tests.faults.faultkit import own_mariadb, seconds_until
from tests.support import create_monitoring_user

DAY = 86400.0


@pytest.fixture(scope="module")
def servers():
    with own_mariadb(server_id=41) as first, own_mariadb(server_id=42) as second:
        yield first, second


def leak_config(directory: Path) -> Path:
    config = directory / "leak.yml"
    config.write_text("leak:\n  save_every_seconds: 1\n")
    return config


def exporter_on(server, directory: Path, history: Path, environment: pytest.MonkeyPatch | None = None,
                env: dict[str, str] | None = None) -> ExporterProcess:
    """An exporter process on ``server``; ``env``: variables it gets on top of this process's
    (set through ``environment`` for its start only)."""
    directory.mkdir(parents=True, exist_ok=True)
    user = create_monitoring_user(server, directory)
    flags = (f"--exporter.leak-config={leak_config(directory)}", f"--exporter.leak-state-file={history}")
    if not env:
        return start_exporter(user.my_cnf, directory, *flags)
    with environment.context() as only_for_the_start:
        for name, value in env.items():
            only_for_the_start.setenv(name, value)
        return start_exporter(user.my_cnf, directory, *flags)


def saved_with_series(exporter: ExporterProcess, history: Path):
    """Scrapes (the exporter collects when scraped) until the history holds some series."""
    def saved():
        assert exporter.scrape().status == 200
        try:
            document = load_document(history)
        except OSError:
            return None
        return document if document.series and document.server else None
    seconds_until(saved, timeout=20, interval=0.5, what=f"a history with series in {history}")
    return load_document(history)


def history_of_a_run(server, directory: Path, history: Path):
    """An exporter on ``server`` until its history holds series, then stopped: the history."""
    exporter = exporter_on(server, directory, history)
    try:
        return saved_with_series(exporter, history)
    finally:
        exporter.stop()


def refused_exporter(server, directory: Path, history: Path) -> subprocess.CompletedProcess:
    directory.mkdir(parents=True, exist_ok=True)
    user = create_monitoring_user(server, directory)
    return subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "exporter",
                           f"--web.listen-address=127.0.0.1:{free_loopback_port()}", f"--config.my-cnf={user.my_cnf}",
                           f"--exporter.leak-config={leak_config(directory)}", f"--exporter.leak-state-file={history}"],
                          cwd=REPO_ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def refused_agentx(server, directory: Path, history: Path) -> subprocess.CompletedProcess:
    directory.mkdir(parents=True, exist_ok=True)
    user = create_monitoring_user(server, directory)
    # The lock is taken before the agent connects to snmpd: no master is needed to be refused.
    return subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "agentx", "--my-cnf", str(user.my_cnf),
                           "--agentx-socket", f"unix:{directory / 'no-master'}", "--leak-state", str(history)],
                          cwd=REPO_ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def holder_lines(result: subprocess.CompletedProcess, pid: int) -> list[str]:
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    return [line for line in output.splitlines() if f"in use by pid {pid}," in line]


def test_a_second_agent_given_the_exporters_history_refuses_to_start(servers, tmp_path):
    server_a, server_b = servers
    history = tmp_path / "shared" / "leak-state.json"
    first = exporter_on(server_a, tmp_path / "first", history)
    try:
        before = saved_with_series(first, history)
        holder = f"in use by pid {first.process.pid}, mysql-snmp exporter monitoring 127.0.0.1:{server_a.port}"
        for refused in (refused_exporter(server_b, tmp_path / "second", history),
                        refused_agentx(server_b, tmp_path / "third", history)):
            assert refused.returncode == 2, refused.stdout + refused.stderr
            lines = holder_lines(refused, first.process.pid)
            assert len(lines) == 1 and holder in lines[0] and str(history) in lines[0], refused.stdout + refused.stderr
        # The holder goes on, its history still its own.
        time.sleep(1.5)
        assert first.scrape().parsed().value("mysql_up") == 1
        after = saved_with_series(first, history)
        assert after.server["port"] == server_a.port and set(after.series) == set(before.series)
    finally:
        assert first.stop() == 0
    # Once the holder has stopped, the file is free for the next agent.
    second = exporter_on(server_a, tmp_path / "fourth", history)
    try:
        saved_with_series(second, history)
        assert lock_path(history).read_text().startswith(f"pid {second.process.pid}, mysql-snmp exporter")
    finally:
        second.stop()


def test_the_exporter_refuses_the_history_of_a_running_agentx(servers, tmp_path):
    need_net_snmp()
    server_a, server_b = servers
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    try:
        agent_dir = tmp_path / "agentx"
        agent_dir.mkdir()
        agent = run_agent(snmpd, server_a, agent_dir, 1.0, "--leak-config", str(leak_config(agent_dir)))
        try:
            refused = refused_exporter(server_b, tmp_path / "exporter", agent.leak_state)
            assert refused.returncode == 2
            lines = holder_lines(refused, agent.process.pid)
            assert len(lines) == 1 and f"mysql-snmp agentx monitoring 127.0.0.1:{server_a.port}" in lines[0]
            assert agent.process.poll() is None
        finally:
            stop_agent(agent)
    finally:
        snmpd.stop()


def test_an_agent_started_on_another_server_sets_its_history_aside(servers, tmp_path):
    server_a, server_b = servers
    history = tmp_path / "history" / "leak-state.json"
    of_a = history_of_a_run(server_a, tmp_path / "on-a", history)
    kept = history.read_text()
    assert of_a.server["port"] == server_a.port and of_a.server["server_id"] == 41
    of_b = history_of_a_run(server_b, tmp_path / "on-b", history)
    assert of_b.server["port"] == server_b.port and of_b.server["server_id"] == 42
    aside = set_aside_path(history, f"{of_a.server['hostname']}:{server_a.port}")
    assert aside.read_text() == kept  # server A's history, kept whole
    log = (tmp_path / "on-b" / "exporter.log").read_text()
    warnings = [line for line in log.splitlines() if "is of another server" in line]
    assert len(warnings) == 1 and f":{server_a.port} (server_id 41" in warnings[0], log[-3000:]
    assert f"not of {of_a.server['hostname']}:{server_b.port} (server_id 42" in warnings[0]
    # B's history starts at B's first sample: nothing of A's was carried over.
    first_b_sample = min(s["history"]["last_time"] for s in of_b.series.values())
    assert all(b[0] >= first_b_sample - 900 for s in of_b.series.values() for b in s["history"]["buckets"])


def shift_history(path: Path, seconds: float) -> None:
    """The file as an agent whose clock read ``seconds`` more would have written it."""
    document = json.loads(path.read_text())
    for state in document["series"].values():
        history = state["history"]
        history["last_time"] += seconds
        history["bins"] = [[start + seconds, *rest] for start, *rest in history["bins"]]
        history["buckets"] = [[start + seconds, *rest] for start, *rest in history["buckets"]]
        for name in ("since", "last_suspicious", "peak_time", "stopped_until"):
            if state.get(name) is not None:
                state[name] += seconds
    document["saved_at"] += seconds
    path.write_text(json.dumps(document))


def test_a_history_saved_a_day_ahead_goes_on_from_the_first_sample(servers, tmp_path):
    """The agent ran with its clock a day ahead; NTP set it right; the agent restarted."""
    server_a, _ = servers
    history = tmp_path / "history" / "leak-state.json"
    history_of_a_run(server_a, tmp_path / "ahead", history)
    shift_history(history, DAY)
    ahead = {name: s["history"]["last_time"] for name, s in load_document(history).series.items()}
    restarted = exporter_on(server_a, tmp_path / "corrected", history)
    try:
        for _ in range(3):
            scrape = restarted.scrape().parsed()
            time.sleep(1.1)
        now = time.time()
        served = scrape.samples["mysql_leak_state"]
        assert served and set(served.values()) <= {0.0, 1.0, 2.0}
    finally:
        restarted.stop()
    after = load_document(history).series
    for name, was in ahead.items():
        # samples were taken (before: ignored for a day), and the day-old history was kept
        assert now - 10 <= after[name]["history"]["last_time"] <= now, name
        assert after[name]["history"]["buckets"], name
    log = restarted.log_text()
    warnings = [line for line in log.splitlines() if "clock went back" in line]
    assert len(warnings) == 1 and "Traceback" not in log, log[-3000:]


FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


def test_a_running_exporter_whose_clock_steps_a_year_forward_and_back_keeps_its_history(servers, tmp_path,
                                                                                        monkeypatch):
    """The exporter's own wall clock (libfaketime, read from a file at every call) jumps a year ahead,
    then NTP steps it back; its monotonic clock and the machine's are left alone."""
    if not FAKETIME.exists():
        pytest.skip("libfaketime not installed (apt-get install libfaketime)")
    server_a, _ = servers
    clock = tmp_path / "clock"
    clock.write_text("+0\n")
    env = {"LD_PRELOAD": str(FAKETIME), "FAKETIME_TIMESTAMP_FILE": str(clock), "FAKETIME_NO_CACHE": "1",
           "DONT_FAKE_MONOTONIC": "1"}
    history = tmp_path / "history" / "leak-state.json"
    history_of_a_run(server_a, tmp_path / "earlier", history)
    shift_history(history, -2 * 3600)  # as if saved two hours ago: a history of several buckets
    exporter = exporter_on(server_a, tmp_path / "run", history, monkeypatch, env)
    served = []

    def scrapes(count: int) -> None:
        for _ in range(count):
            served.append(exporter.scrape().parsed().samples["mysql_leak_state"])
            time.sleep(1.1)

    try:
        before = saved_with_series(exporter, history).series
        assert all(len(b["history"]["buckets"]) >= 2 for b in before.values())
        clock.write_text("+365d\n")
        scrapes(2)
        ahead = load_document(history).series
        clock.write_text("+0\n")
        stepped = time.time()
        scrapes(3)
        after = load_document(history).series
        now = time.time()
    finally:
        exporter.stop()
    for name, first in before.items():
        # A year ahead the history moved with the clock: not aged out of the week's baseline.
        assert ahead[name]["history"]["last_time"] > now + 364 * DAY, name
        assert len(ahead[name]["history"]["buckets"]) >= len(first["history"]["buckets"]), name
        # Back: samples taken on the corrected clock (before: all ignored for a year) and saved at once.
        assert stepped - 1 <= after[name]["history"]["last_time"] <= now, name
        assert len(after[name]["history"]["buckets"]) >= len(first["history"]["buckets"]), name
    assert all(scrape and set(scrape.values()) <= {0.0, 1.0} for scrape in served)
    log = exporter.log_text()
    assert "Traceback" not in log, log[-3000:]
    for which in ("forward", "back"):
        warnings = [line for line in log.splitlines() if f"clock went {which}" in line]
        assert len(warnings) == 1, log[-3000:]
        assert re.search(rf"went {which} 31\d{{6}} s", warnings[0]), warnings[0]
