"""Faults of the AgentX master: snmpd SIGKILL (then started again), SIGSTOP (then SIGCONT), its
AgentX socket removed.  The subagent runs as a process against the session MariaDB; it must
stay up and bounded, and be served again within two refresh intervals of snmpd's return."""

from __future__ import annotations

import signal
import time

import psutil
import pytest

from tests.agentx.agent_process import mysql_up, run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.faults.agents_under_test import agentx_reading
from tests.faults.report import record_fault

REFRESH = 3.0  # above the session's longest reconnection backoff (5 s) over two intervals
RECOVERY_LIMIT = 2 * REFRESH


@pytest.fixture
def served(tmp_path, mariadb):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    agent = run_agent(snmpd, mariadb, tmp_path, REFRESH)
    try:
        yield snmpd, agent
    finally:
        stop_agent(agent)
        snmpd.stop()


def served_again_after(snmpd: Snmpd, since: float, timeout: float = 30.0) -> float | None:
    while time.monotonic() - since < timeout:
        if mysql_up(snmpd) and agentx_reading(snmpd).uptime is not None:
            return time.monotonic() - since
        time.sleep(0.05)
    return None


def resources(agent) -> tuple[int, int]:
    process = psutil.Process(agent.process.pid)
    return process.num_threads(), process.num_fds()


def assert_bounded(agent, before: tuple[int, int]) -> None:
    threads, fds = resources(agent)
    assert agent.process.poll() is None, agent.log_text()[-2000:]
    assert threads <= before[0] + 1 and fds <= before[1] + 2, (before, (threads, fds))


def test_snmpd_sigkill_then_started_again(served):
    snmpd, agent = served
    before = resources(agent)
    snmpd.kill()
    time.sleep(2 * REFRESH)  # the agent finds the master gone and backs off meanwhile
    assert agent.process.poll() is None
    snmpd.start()
    back = served_again_after(snmpd, time.monotonic())
    assert back is not None and back <= RECOVERY_LIMIT, (back, agent.log_text()[-2000:])
    assert_bounded(agent, before)
    record_fault("snmpd SIGKILL, started again", "agentx", "agent kept running, registered again", back)


def test_snmpd_sigstop_longer_than_the_timeouts_then_sigcont(served):
    snmpd, agent = served
    before = resources(agent)
    snmpd.process.send_signal(signal.SIGSTOP)
    try:
        time.sleep(3 * REFRESH)  # past the agent's pings and request timeouts
        assert agent.process.poll() is None
        stopped_threads, stopped_fds = resources(agent)
    finally:
        snmpd.process.send_signal(signal.SIGCONT)
    back = served_again_after(snmpd, time.monotonic())
    assert back is not None and back <= RECOVERY_LIMIT, (back, agent.log_text()[-2000:])
    assert_bounded(agent, before)
    assert stopped_threads <= before[0] + 1 and stopped_fds <= before[1] + 2
    record_fault(f"snmpd SIGSTOP {3 * REFRESH:g} s, SIGCONT", "agentx", "agent kept running, served after SIGCONT",
                 back)


def test_agentx_socket_removed(served):
    snmpd, agent = served
    before = resources(agent)
    snmpd.agentx_socket.unlink()
    # The open session does not need the path: still served.
    time.sleep(REFRESH)
    assert mysql_up(snmpd)
    # snmpd gone with its socket path: reconnecting meets "no such file", again and again.
    snmpd.kill()
    time.sleep(2 * REFRESH)
    assert agent.process.poll() is None
    snmpd.start()
    back = served_again_after(snmpd, time.monotonic())
    assert back is not None and back <= RECOVERY_LIMIT, (back, agent.log_text()[-2000:])
    assert_bounded(agent, before)
    record_fault("AgentX socket removed (then snmpd restarted)", "agentx",
                 "still served on the open session; reconnected once the socket was back", back)
