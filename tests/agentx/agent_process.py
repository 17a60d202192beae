"""Running subagents for tests and benchmarks: the real ``mysql-snmp agentx`` as a process
against a throwaway MariaDB, and an in-process AgentXSession serving a chosen view.

Plain helpers (no fixtures), so test modules outside tests/agentx and the benchmarks import
them without importing a conftest."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from mysql_snmp.agents.agentx.session import AgentXSession
from mysql_snmp.agents.agentx.view import MibView
from mysql_snmp.agents.catalog import format_oid, load_catalog
from tests.agentx.netsnmp import Snmpd, start_agent, stop_process, wait_until
from tests.support import create_monitoring_user

AGENT_MYSQL_UP = format_oid(load_catalog().by_name("agent_mysql_up").snmp.oid) + ".0"


def mysql_up(snmpd: Snmpd) -> bool:
    values = snmpd.get(AGENT_MYSQL_UP)
    return bool(values) and values[0].type == "Gauge32" and values[0].number == 1


@dataclass
class RunningAgent:
    process: subprocess.Popen
    log: Path
    my_cnf: Path
    leak_state: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def run_agent(snmpd: Snmpd, server, directory: Path, refresh: float = 1.0, *options: str) -> RunningAgent:
    """``mysql-snmp agentx`` as a monitoring user of ``server``, once it serves MySQL's values.

    The leak detector's history goes to ``directory`` (never /var/lib/mysql-snmp)."""
    user = create_monitoring_user(server, directory)
    log = directory / "agent.log"
    leak_state = directory / "leak-state.json"
    process = start_agent(snmpd, log, "--my-cnf", str(user.my_cnf), "--refresh", str(refresh),
                          "--leak-state", str(leak_state), *options)
    agent = RunningAgent(process, log, user.my_cnf, leak_state)
    try:
        wait_until(lambda: mysql_up(snmpd) or process.poll() is not None, what="agent serving MySQL")
    except AssertionError:
        process.kill()
        raise AssertionError(f"agent not serving; its log:\n{agent.log_text()[-3000:]}") from None
    assert process.poll() is None, agent.log_text()[-3000:]
    return agent


def stop_agent(agent: RunningAgent) -> int:
    """SIGTERM (what systemd sends), SIGKILL after 10 s; the exit status."""
    return stop_process(agent.process)


class InProcessAgent:
    """An AgentXSession on its own event loop thread, serving ``view_provider()``
    (or a fixed ``view``)."""

    def __init__(self, snmpd: Snmpd, view: MibView, subtrees, view_provider=None, **options) -> None:
        self.view = view
        self.loop = asyncio.new_event_loop()
        self.session = AgentXSession(str(snmpd.agentx_socket), view_provider or (lambda: self.view), subtrees,
                                     **options)
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
