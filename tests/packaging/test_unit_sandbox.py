"""The units' sandbox lets both agents do their work: every system call a real run makes (start,
collections, scrapes, /probe, SNMP walks, the leak history saved at SIGTERM) is one the unit's
SystemCallFilter= allows, every socket is of a family RestrictAddressFamilies= allows, and no
mapping is writable and executable at once (MemoryDenyWriteExecute=).

No systemd runs as PID 1 here, so the sandbox cannot be applied to a process; strace records what
the agents ask of the kernel, and `systemd-analyze syscall-filter` says what the filter lets through.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from mysql_snmp.agents.demo.netsnmp_sandbox import COMMUNITY, Snmpd, missing_net_snmp_tools, net_snmp_tool
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.support import create_monitoring_user

REPO = Path(__file__).resolve().parents[2]
CLI = "import sys; from mysql_snmp.agents.cli import main; sys.exit(main())"

pytestmark = [pytest.mark.live, pytest.mark.snmp]


def unit_values(unit: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in (REPO / "packaging/systemd" / unit).read_text().splitlines()
            if line.startswith(f"{key}=")]


def syscall_set(group_or_name: str) -> set[str]:
    """A filter word as systemd expands it: a group (recursively) or one system call."""
    if not group_or_name.startswith("@"):
        return {group_or_name}
    listing = subprocess.run(["systemd-analyze", "syscall-filter", group_or_name], capture_output=True, text=True,
                             timeout=30).stdout.splitlines()[1:]
    names: set[str] = set()
    for entry in (line.strip() for line in listing):
        if entry and not entry.startswith("#"):
            names |= syscall_set(entry)
    return names


def allowed_syscalls(unit: str) -> set[str]:
    """SystemCallFilter= lines in order: an allow list, then ~ lines taking calls out of it."""
    allowed: set[str] = set()
    for value in unit_values(unit, "SystemCallFilter"):
        words = value.removeprefix("~").split()
        names = set().union(*(syscall_set(word) for word in words))
        allowed = allowed - names if value.startswith("~") else allowed | names
    return allowed


def traced(trace: Path) -> tuple[set[str], set[str], list[str]]:
    """System calls, socket families, and writable+executable mappings of a strace -f log."""
    calls, families, wx = set(), set(), []
    for line in trace.read_text().splitlines():
        found = re.match(r"\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]", line)
        if found:
            calls.add(found.group(1))
        families.update(re.findall(r"\bsocket\((AF_[A-Z0-9]+)", line))
        if re.search(r"\b(mmap|mprotect)\(.*PROT_WRITE\|PROT_EXEC|PROT_EXEC\|PROT_WRITE", line):
            wx.append(line)
    return calls, families, wx


def scrape(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.read()
    except OSError:
        return None


def test_both_agents_run_inside_their_units_sandbox(mariadb, tmp_path):
    for tool in ("strace", "systemd-analyze"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (scripts/test installs it)")
    if missing_net_snmp_tools():
        pytest.skip(f"Net-SNMP missing: {missing_net_snmp_tools()}")
    my_cnf = create_monitoring_user(mariadb, tmp_path).my_cnf
    http_port = free_loopback_port()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    commands = {
        "mysql-snmp-exporter.service": ["exporter", "--config.my-cnf", str(my_cnf), "--web.listen-address",
                                        f"127.0.0.1:{http_port}", "--exporter.leak-state-file",
                                        str(tmp_path / "exporter-leak.json")],
        "mysql-snmp-agentx.service": ["agentx", "--my-cnf", str(my_cnf), "--agentx-socket", str(snmpd.agentx_socket),
                                      "--refresh", "2", "--leak-state", str(tmp_path / "agentx-leak.json")],
    }
    agents = {}
    try:
        for unit, arguments in commands.items():
            log = open(tmp_path / f"{unit}.log", "wb")
            agents[unit] = subprocess.Popen(["strace", "-f", "-qq", "-o", str(tmp_path / f"{unit}.trace"),
                                             sys.executable, "-c", CLI, *arguments],
                                            stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
        deadline = time.monotonic() + 90
        walked = metrics = probe = None
        while time.monotonic() < deadline and not (walked and metrics and probe):
            metrics = metrics or scrape(f"http://127.0.0.1:{http_port}/metrics")
            probe = probe or scrape(f"http://127.0.0.1:{http_port}/probe?target=127.0.0.1:{mariadb.port}")
            walk = subprocess.run([net_snmp_tool("snmpbulkwalk"), "-v2c", "-c", COMMUNITY, "-On", snmpd.address,
                                   "1.3.6.1.4.1.20267.200.1"], capture_output=True, text=True, env=snmpd.env,
                                  timeout=60)
            walked = walked or len(walk.stdout.splitlines()) >= 100
            time.sleep(0.5)
        assert walked and b"mysql_up 1" in (metrics or b"") and b"mysql_up 1" in (probe or b""), \
            [(tmp_path / f"{unit}.log").read_text()[-2000:] for unit in commands]
    finally:
        for agent in agents.values():
            # SIGTERM to the agent itself (strace's child); strace then exits with its status.
            for child in Path(f"/proc/{agent.pid}/task/{agent.pid}/children").read_text().split():
                os.kill(int(child), signal.SIGTERM)
        statuses = {unit: agent.wait(timeout=30) for unit, agent in agents.items()}
        snmpd.stop()
    assert statuses == {unit: 0 for unit in commands}
    assert (tmp_path / "exporter-leak.json").stat().st_size > 0 and (tmp_path / "agentx-leak.json").stat().st_size > 0
    for unit in commands:
        calls, families, writable_executable = traced(tmp_path / f"{unit}.trace")
        assert len(calls) > 30, sorted(calls)  # the trace is real
        assert sorted(calls - allowed_syscalls(unit)) == [], unit
        assert families and families <= set(unit_values(unit, "RestrictAddressFamilies")[0].split()), families
        assert writable_executable == [], writable_executable[:3]
    # The control: the filter is not everything; a privileged call such as mount is out.
    assert "mount" not in allowed_syscalls("mysql-snmp-exporter.service")
    assert "mount" in syscall_set("@privileged") | syscall_set("@mount")
