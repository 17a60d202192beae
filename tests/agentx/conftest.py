"""Fixtures for the AgentX tests that need Net-SNMP: a private snmpd, the real subagent as a
process against the throwaway MariaDB, and an in-process session serving a chosen view."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.agentx.session import AgentXSession
from agents.agentx.view import MibView
from agents.catalog import format_oid, load_catalog
from tests.agentx.netsnmp import Snmpd, need_net_snmp, start_agent, wait_until
from tests.conftest import create_monitoring_user

AGENT_MYSQL_UP = format_oid(load_catalog().by_name("agent_mysql_up").snmp.oid) + ".0"


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


def mysql_up(snmpd: Snmpd) -> bool:
    values = snmpd.get(AGENT_MYSQL_UP)
    return bool(values) and values[0].type == "Gauge32" and values[0].number == 1


@dataclass
class RunningAgent:
    process: object
    log: Path
    my_cnf: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def run_agent(snmpd: Snmpd, server, directory: Path, refresh: float = 1.0) -> RunningAgent:
    user = create_monitoring_user(server, directory)
    log = directory / "agent.log"
    process = start_agent(snmpd, log, "--my-cnf", str(user.my_cnf), "--refresh", str(refresh))
    agent = RunningAgent(process, log, user.my_cnf)
    try:
        wait_until(lambda: mysql_up(snmpd) or process.poll() is not None, what="agent serving MySQL")
    except AssertionError:
        process.kill()
        raise AssertionError(f"agent not serving; its log:\n{agent.log_text()[-3000:]}") from None
    assert process.poll() is None, agent.log_text()[-3000:]
    return agent


def stop_agent(agent: RunningAgent) -> None:
    if agent.process.poll() is None:
        agent.process.terminate()
        try:
            agent.process.wait(timeout=10)
        except Exception:
            agent.process.kill()
            agent.process.wait()


@pytest.fixture(scope="module")
def live_agent(snmpd, mariadb, tmp_path_factory):
    """``mysql-snmp agentx`` against the session MariaDB, refreshing every second."""
    agent = run_agent(snmpd, mariadb, tmp_path_factory.mktemp("agent"))
    try:
        yield agent
    finally:
        stop_agent(agent)


class InProcessAgent:
    """An AgentXSession on its own event loop thread, serving a fixed view."""

    def __init__(self, snmpd: Snmpd, view: MibView, subtrees, **options) -> None:
        self.view = view
        self.loop = asyncio.new_event_loop()
        self.session = AgentXSession(str(snmpd.agentx_socket), lambda: self.view, subtrees, **options)
        self.stop_event: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.stop_event = asyncio.Event()
        self.loop.run_until_complete(self.session.run(self.stop_event))

    def __enter__(self) -> "InProcessAgent":
        self.thread.start()
        wait_until(lambda: self.session.registered.is_set(), what="in-process session registered")
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(timeout=10)
        self.loop.close()
