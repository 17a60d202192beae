"""``mysql-snmp demo`` end to end, as a user runs it: real MariaDB, exporter, snmpd and subagent,
then nothing of it left running."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from mysql_snmp.agents.demo.throwaway import ThrowawayError, find_binary
from tests.agentx.netsnmp import need_net_snmp

REPO_ROOT = Path(__file__).resolve().parents[2]
# What each child's command line contains, so a pid reused by another program is not taken for it.
CHILD_PROGRAMS = {"mariadbd": "mariadbd", "snmpd": "snmpd", "exporter": "mysql_snmp.agents.cli",
                  "agentx": "mysql_snmp.agents.commands.agentx"}


@pytest.fixture(autouse=True)
def needs_mariadb_and_net_snmp():
    try:
        find_binary("mariadbd", "mysqld")
    except ThrowawayError as exc:
        pytest.skip(str(exc))
    need_net_snmp()


def demo_command(*options: str) -> list[str]:
    script = Path(sys.executable).with_name("mysql-snmp")  # the installed console script
    command = [str(script)] if script.exists() else [sys.executable, "-m", "mysql_snmp.agents.cli"]
    return [*command, "demo", *options]


def printed_pids(stdout: str) -> dict[str, int]:
    match = re.search(r"^  pids: (.+)$", stdout, re.M)
    assert match, stdout
    return {name: int(pid) for name, pid in (part.split() for part in match.group(1).split(", "))}


def still_running(name: str, pid: int) -> bool:
    """The demo's child ``name`` still alive under ``pid`` (a reused pid running something else is not)."""
    try:
        process = psutil.Process(pid)
        return process.status() != psutil.STATUS_ZOMBIE and CHILD_PROGRAMS[name] in " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return False


def assert_everything_stopped(stdout: str) -> None:
    pids = printed_pids(stdout)
    assert set(pids) == set(CHILD_PROGRAMS), pids
    assert [name for name, pid in pids.items() if still_running(name, pid)] == []
    temp_dirs = set(re.findall(r"(/\S*/mysql-snmp-(?:demo|mariadb)-[^/\s]+)/", stdout))
    assert len(temp_dirs) == 2, stdout  # the demo's and MariaDB's, as printed under "where everything is"
    assert [path for path in temp_dirs if Path(path).exists()] == []


def test_demo_shows_the_exporter_and_the_subagent_reading_the_throwaway_server():
    result = subprocess.run(demo_command(), cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr

    assert re.search(r"^  mysql_up 1(\.0)?$", out, re.M), out
    samples = int(re.search(r"/metrics: (\d+) samples", out).group(1))
    assert samples > 500  # every collector of the default set answered, not just mysql_up
    assert re.search(r"^  mysql_global_status_commands_total\{command=\"update\"\} [1-9]", out, re.M), out
    assert re.search(r"^  mysql_innodb_mem_dictionary_bytes [1-9]", out, re.M), out

    # The legacy object carries what the server itself reports (MariaDB's default: 128 MiB).
    server_value = int(re.search(r"^server variable key_buffer_size = (\d+)$", out, re.M).group(1))
    snmp_value = int(re.search(r"^  myKeyBufferSize\.0 += Counter64: (\d+)$", out, re.M).group(1))
    assert snmp_value == server_value == 134217728
    # The workload ran one UPDATE and one DELETE: the original's counters see them.
    assert re.search(r"^  myComUpdate\.0 += Counter32: [1-9]", out, re.M), out
    assert re.search(r"^  myComDelete\.0 += Counter32: [1-9]", out, re.M), out
    # The leak table row of the dictionary memory, read over SNMP.
    assert re.search(r"^      myLeakSeriesName +?= STRING: \"innodb_mem_dictionary_bytes\"$", out, re.M), out
    assert re.search(r"^      myLeakState +?= INTEGER: [012]$", out, re.M), out

    assert_everything_stopped(out)


def test_demo_serve_keeps_running_until_interrupted_then_stops_everything():
    process = subprocess.Popen(demo_command("--serve"), cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("serving until Ctrl-C"):
                break
        pids = printed_pids("".join(lines))
        assert all(still_running(name, pid) for name, pid in pids.items()), pids
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    out = "".join(lines) + rest
    assert process.returncode == 0, out
    assert "stopped: " in out
    assert_everything_stopped(out)
