"""Fixtures for the AgentX tests that need Net-SNMP: a private snmpd and the real subagent as
a process against the throwaway MariaDB (helpers in tests/agentx/agent_process.py)."""

from __future__ import annotations

import pytest

from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp


@pytest.fixture(scope="module")
def snmpd(tmp_path_factory):
    need_net_snmp()
    server = Snmpd(tmp_path_factory.mktemp("snmpd"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def private_snmpd(tmp_path):
    """An snmpd of the test's own, for tests that kill it or register other views."""
    need_net_snmp()
    server = Snmpd(tmp_path / "snmpd")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def live_agent(snmpd, mariadb, tmp_path_factory):
    """``mysql-snmp agentx`` against the session MariaDB, refreshing every second."""
    agent = run_agent(snmpd, mariadb, tmp_path_factory.mktemp("agent"))
    try:
        yield agent
    finally:
        stop_agent(agent)
