"""AgentX master faults: a master that breaks every session right after registering it, and a
subtree another subagent already holds (duplicate registration, from a real snmpd)."""

import asyncio
import logging
import threading
import time

import pytest

from mysql_snmp.agents.agentx.session import AgentXSession, MasterAddress
from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.snapshot import Snapshot
from tests.agentx.agent_process import InProcessAgent
from tests.agentx.netsnmp import Snmpd, need_net_snmp, wait_until
from tests.agentx.test_session import FakeMaster, running_agent
from tests.faults.report import record_fault


def test_garbage_after_each_registration_keeps_backing_off(tmp_path):
    # A fake master: no real snmpd sends garbage on demand.
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master", backoff_initial=0.05, backoff_max=0.4,
                                     healthy_after=0.5) as session:
                accepted = []
                for _ in range(6):  # registered, then garbage at once: never healthy
                    conn = await master.next_connection()
                    accepted.append(time.monotonic())
                    await conn.accept_session()
                    conn.writer.write(b"GET / HTTP/1.1\r\n\r\n" * 3)  # more than one 20-byte header
                gaps = [b - a for a, b in zip(accepted, accepted[1:])]
                # 0.05, 0.1, 0.2, 0.4, 0.4 s: doubling to the maximum, not reset by each registration
                assert gaps[-1] >= 0.35 and gaps[-2] >= 0.35 and gaps[0] < 0.3, gaps
                # a session that stays registered longer than healthy_after resets the back-off
                conn = await master.next_connection()
                await conn.accept_session()
                await asyncio.sleep(0.6)
                broken = time.monotonic()
                conn.writer.write(b"GET / HTTP/1.1\r\n\r\n" * 3)  # more than one 20-byte header
                conn = await master.next_connection()
                recovered = time.monotonic() - broken
                await conn.accept_session()
                assert recovered < 0.3, recovered
                assert session.stats.protocol_errors == 7
        return gaps, recovered

    gaps, recovered = asyncio.run(asyncio.wait_for(scenario(), 30))
    record_fault("AgentX master sends garbage after every Register", "agentx",
                 f"back-off grew {gaps[0]:.2f} -> {gaps[-1]:.2f} s; reset after a healthy session", recovered)


@pytest.mark.snmp
def test_duplicate_registration_is_one_warning_and_registers_once_free(tmp_path, caplog):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    catalog = load_catalog()
    view = build_view(TreeLayout.from_catalog(catalog), Snapshot("db", 0.0, False))
    second = AgentXSession(MasterAddress(path=str(snmpd.agentx_socket)), lambda: view, [catalog.new_root],
                           backoff_initial=0.05, backoff_max=0.2)
    try:
        with InProcessAgent(snmpd, view, [catalog.new_root]) as first:
            loop = asyncio.new_event_loop()
            stop = asyncio.Event()

            async def run_second():
                await second.run(stop)

            thread = threading.Thread(target=lambda: loop.run_until_complete(run_second()), daemon=True)
            with caplog.at_level(logging.DEBUG, logger="mysql_snmp.agents.agentx.session"):
                thread.start()
                wait_until(lambda: second.stats.connects >= 4, what="several refused registrations")
                assert not second.registered.is_set() and first.session.registered.is_set()
                warnings = [r for r in caplog.records if r.levelno == logging.WARNING
                            and "already registered by another subagent" in r.getMessage()]
                assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
                assert "DUPLICATE_REGISTRATION" in second.stats.last_error
        freed = time.monotonic()  # the first subagent closed its session
        wait_until(lambda: second.registered.is_set(), what="second subagent registered")
        recovered = time.monotonic() - freed
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
        loop.close()
    finally:
        snmpd.stop()
    record_fault("subtree already registered by another subagent (snmpd)", "agentx",
                 "one warning, retried with back-off; registered once freed", recovered)
