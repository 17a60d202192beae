"""The leak history file under faults, with both agents running against a real server: corrupt, deeply
nested, a FIFO, on a read-only filesystem, on a full one.  Each time the agent starts (no traceback,
no hang) and serves MySQL, the log says once what is wrong with the file, and once the fault ends
the file written is JSON that reads back, with finite numbers."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

from mysql_snmp.agents.leak.state_file import parse_state
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.exporter.exporter_harness import running_exporter
from tests.faults.faultkit import own_mariadb, seconds_until
from tests.faults.report import record_fault
from tests.support import create_monitoring_user

REFRESH = 1.0  # the agent's --refresh, the exporter's scrape interval, and the history's save interval
LEAK_CONFIG = "leak:\n  save_every_seconds: 1\n"


@pytest.fixture(scope="module")
def server():
    with own_mariadb(server_id=33) as mariadb:
        yield mariadb


# ------------------------------------------------------------------ the faults


@contextmanager
def small_filesystem(directory: Path, size: str = "256k") -> Iterator[Path]:
    """A tmpfs of its own at ``directory`` (mounting needs root; without it the test is skipped)."""
    directory.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for this fault ({result.stderr.strip()}); needs root")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)


def remount(directory: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(directory)], check=True, capture_output=True)


class Fault:
    """Sets the fault up before the agent starts; ``end()`` ends it (None: it ends when the agent
    replaces the file); ``warning`` is what the log must say about it, once."""

    def __init__(self, name: str, prepare: Callable[[Path], Callable[[], None] | None], warning: str):
        self.name, self.prepare, self.warning = name, prepare, warning


def write_content(content: str) -> Callable[[Path], None]:
    def prepare(path: Path) -> None:
        path.write_text(content)
    return prepare


def fifo(path: Path) -> None:
    os.mkfifo(path)


def read_only(path: Path) -> Callable[[], None]:
    path.write_text(json.dumps({"version": 1, "saved_at": 1.0, "series": {}}))
    remount(path.parent, "ro")
    return lambda: remount(path.parent, "rw")


def full(path: Path) -> Callable[[], None]:
    filler = path.parent / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: the filesystem is full
        pass
    finally:
        os.close(fd)
    return filler.unlink


FAULTS = [
    Fault("corrupt", write_content('{"version": 1, "series": {"x": [1, 2'), "is unusable"),
    Fault("deeply nested", write_content("[" * 200000 + "]" * 200000), "nested too deeply"),
    Fault("NaN inside", write_content('{"version": 1, "series": {"innodb_mem_dictionary_bytes": {"state": 0, '
                                      '"history": {"last_time": NaN, "bins": [], "buckets": []}}}}'),
          "is unusable"),
    Fault("a FIFO", fifo, "not a regular file"),
    Fault("on a read-only filesystem", read_only, "cannot write leak state file"),
    Fault("on a full filesystem", full, "cannot write leak state file"),
]
MOUNTED = {"on a read-only filesystem", "on a full filesystem"}


def saved_document(path: Path) -> dict | None:
    """The file's document when it reads back as a state file with finite numbers, else None."""
    try:
        text = path.read_text()
        parse_state(text)  # refuses NaN, infinities, out-of-range numbers, hostile nesting
        document = json.loads(text)
    except (OSError, ValueError):
        return None
    return document if math.isfinite(document.get("saved_at", math.nan)) and document["saved_at"] > 1 else None


@contextmanager
def fault_at(tmp_path: Path, fault: Fault) -> Iterator[tuple[Path, Callable[[], None] | None]]:
    directory = tmp_path / "history"
    if fault.name in MOUNTED:
        with small_filesystem(directory) as mounted:
            path = mounted / "leak-state.json"
            yield path, fault.prepare(path)
    else:
        directory.mkdir()
        path = directory / "leak-state.json"
        yield path, fault.prepare(path)


def check_recovery(path: Path, end: Callable[[], None] | None) -> float:
    """Ends the fault and returns the seconds until the agent has written a valid file."""
    ended = time.monotonic()
    if end is not None:
        end()
    seconds_until(lambda: saved_document(path), timeout=15, interval=0.1, what=f"a valid {path.name}")
    return time.monotonic() - ended


# ------------------------------------------------------------------ the tests


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_exporter_history_file_fault(server, tmp_path, caplog, fault):
    user = create_monitoring_user(server, tmp_path)
    config = tmp_path / "leak.yml"
    config.write_text(LEAK_CONFIG)
    with fault_at(tmp_path, fault) as (path, end):
        with caplog.at_level(logging.INFO):
            with running_exporter(f"--config.my-cnf={user.my_cnf}", f"--exporter.leak-config={config}",
                                  f"--exporter.leak-state-file={path}") as exporter:
                for _ in range(3):  # several saves during the fault: still one warning
                    assert exporter.scrape().value("mysql_up") == 1
                    time.sleep(REFRESH)
                recovery = check_recovery_while(path, end, lambda: exporter.scrape())
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("mysql_snmp.agents.leak")
                and r.levelno >= logging.WARNING and fault.warning in r.getMessage()]
    assert len(warnings) == 1 and str(path) in warnings[0] and "\n" not in warnings[0], warnings
    assert not any(r.exc_info for r in caplog.records if r.name.startswith("mysql_snmp.agents.leak"))
    record_fault(f"history file {fault.name}", "exporter", f"started and served; one warning: {fault.warning}",
                 recovery)
    assert recovery <= 2 * REFRESH + 1  # a save is a collection away; plus the scrape in flight


def check_recovery_while(path: Path, end, collect: Callable[[], object]) -> float:
    """check_recovery() while collections go on (the exporter collects only when scraped)."""
    ended = time.monotonic()
    if end is not None:
        end()

    def saved():
        collect()
        return saved_document(path)

    seconds_until(saved, timeout=15, interval=REFRESH / 4, what=f"a valid {path.name}")
    return time.monotonic() - ended


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_agentx_history_file_fault(server, tmp_path, fault):
    need_net_snmp()
    config = tmp_path / "leak.yml"
    config.write_text(LEAK_CONFIG)
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    try:
        with fault_at(tmp_path, fault) as (path, end):
            agent_dir = tmp_path / "agent"
            agent_dir.mkdir()
            agent = run_agent(snmpd, server, agent_dir, REFRESH, "--leak-config", str(config),
                              "--leak-state", str(path))
            try:
                time.sleep(3 * REFRESH)  # several saves during the fault: still one warning
                recovery = check_recovery(path, end)
                assert agent.process.poll() is None
            finally:
                stop_agent(agent)
    finally:
        snmpd.stop()
    log = agent.log_text()
    assert "Traceback" not in log
    assert log.count(fault.warning) == 1 and str(path) in log, log[-3000:]
    record_fault(f"history file {fault.name}", "agentx", f"started and served; one warning: {fault.warning}",
                 recovery)
    assert recovery <= 2 * REFRESH
