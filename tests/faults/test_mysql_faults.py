"""Faults on the MySQL side, both agents at once on a throwaway MariaDB of this module's own:
mysqld SIGKILL and restart, max_connections exhausted, a metadata lock on the heartbeat table.

Each: the agents stay up, say the server (or the source) is down with no value left from
before, stay bounded, and serve fresh values again within two refresh intervals (the AgentX
agent's --refresh; the exporter collects on each scrape) of the fault's end."""

from __future__ import annotations

import time

import pymysql
import pytest

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.agentx.agent_process import RunningAgent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp, start_agent, wait_until
from tests.faults.agents_under_test import (
    HEARTBEAT_LAG_OID, NUMBER_TYPES, BothAgents, Reading, agentx_reading, down_without_values, exporter_reading,
    fresh_after_restart, wait_for_both,
)
from tests.faults.exporter_process import start_exporter
from tests.faults.report import record_fault
from tests.support import MINIMAL_GRANTS, create_monitoring_user

REFRESH = 1.0
RECOVERY_LIMIT = 2 * REFRESH + 1.0  # two refresh intervals, and the time to read the value (snmpget)
GRANTS = (*MINIMAL_GRANTS, "GRANT SELECT ON heartbeat.* TO {user}")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    need_net_snmp()
    directory = tmp_path_factory.mktemp("mysql-faults")
    server = ThrowawayMariaDB(server_id=7)
    server.start()
    snmpd = Snmpd(directory / "snmpd")
    exporter = agent = None
    try:
        server.execute("CREATE DATABASE heartbeat",
                       "CREATE TABLE heartbeat.heartbeat (ts VARCHAR(26) NOT NULL, server_id INT UNSIGNED NOT NULL "
                       "PRIMARY KEY)",
                       "INSERT INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 7)")
        snmpd.start()
        exporter_user = create_monitoring_user(server, directory, GRANTS)
        exporter = start_exporter(exporter_user.my_cnf, directory, "--collect.heartbeat", "--no-collect.host")
        agent_user = create_monitoring_user(server, directory, GRANTS)
        log = directory / "agent.log"
        process = start_agent(snmpd, log, "--my-cnf", str(agent_user.my_cnf), "--refresh", str(REFRESH),
                              "--heartbeat", "heartbeat.heartbeat", "--host-metrics", "off",
                              "--leak-state", str(directory / "agent-leak.json"))
        agent = RunningAgent(process, log, agent_user.my_cnf, directory / "agent-leak.json")
        wait_until(lambda: agentx_reading(snmpd).up, what="agentx serving MySQL")
        yield BothAgents(server, exporter, agent, snmpd, REFRESH, directory, (exporter_user.name, agent_user.name))
    finally:
        if agent is not None:
            stop_agent(agent)
        if exporter is not None:
            exporter.stop()
        snmpd.stop()
        server.stop(remove=True)


def fresh(reading: Reading) -> bool:
    return reading.up and reading.uptime is not None and reading.values > 0


def assert_bounded(both: BothAgents, before: dict[str, tuple[int, int]]) -> None:
    """No thread or descriptor left behind by the fault (a couple of spares for timing)."""
    after = both.resources()
    for agent, (threads, fds) in after.items():
        assert threads <= before[agent][0] + 2, (agent, before[agent], after[agent])
        assert fds <= before[agent][1] + 3, (agent, before[agent], after[agent])


def assert_down_and_staying_down(both: BothAgents) -> tuple[float, float]:
    """Seconds until each agent says down with no values; still so two refresh intervals later."""
    (exporter_down, exporter_seen), (agentx_down, agentx_seen) = wait_for_both(both, down_without_values, 10)
    assert exporter_down is not None, exporter_seen
    assert agentx_down is not None and agentx_down <= RECOVERY_LIMIT, (agentx_down, agentx_seen)
    time.sleep(2 * REFRESH)  # nothing from before the fault comes back while it lasts
    assert down_without_values(exporter_reading(both.exporter))
    assert down_without_values(agentx_reading(both.snmpd))
    return exporter_down, agentx_down


def assert_recovered(both: BothAgents, accept, since: float, before: dict) -> tuple[float, float]:
    """Seconds from ``since`` until each agent serves what ``accept`` wants, both within the limit."""
    (exporter_recovery, exporter_seen), (agentx_recovery, agentx_seen) = wait_for_both(both, accept, 30, since)
    assert both.alive()
    assert agentx_recovery is not None and agentx_recovery <= RECOVERY_LIMIT, (agentx_recovery, agentx_seen)
    assert exporter_recovery is not None and exporter_recovery <= RECOVERY_LIMIT, (exporter_recovery, exporter_seen)
    assert_bounded(both, before)
    return exporter_recovery, agentx_recovery


def test_mysqld_sigkill_then_restart(both):
    before = both.resources()
    assert fresh(exporter_reading(both.exporter)) and fresh(agentx_reading(both.snmpd))
    both.server.kill()
    exporter_down, agentx_down = assert_down_and_staying_down(both)
    # The new server's Uptime counts from its start, which a loaded machine can stretch to seconds:
    # a value is the new server's when its Uptime is within the time since start() began.
    starting = time.monotonic()
    both.server.start()
    restarted = time.monotonic()
    is_new = fresh_after_restart(lambda: time.monotonic() - starting)
    exporter_recovery, agentx_recovery = assert_recovered(both, is_new, restarted, before)
    record_fault("mysqld SIGKILL, restart", "exporter",
                 f"up=0, no values {exporter_down:.1f} s after the kill; new server's Uptime after restart",
                 exporter_recovery)
    record_fault("mysqld SIGKILL, restart", "agentx",
                 f"up=0, no values {agentx_down:.1f} s after the kill; new server's Uptime after restart",
                 agentx_recovery)


def test_max_connections_exhausted(both):
    before = both.resources()
    control = both.server.connect(autocommit=True)  # root's own slot, taken before the server is full
    fillers = []
    filler_user = create_monitoring_user(both.server, both.directory, (), name="filler")
    agents_in = ", ".join(f"'{user}'" for user in both.users)

    def fill() -> None:
        while len(fillers) < 30:
            try:
                fillers.append(pymysql.connect(host="127.0.0.1", port=both.server.port, user=filler_user.name,
                                               password=filler_user.password, connect_timeout=5))
            except pymysql.err.OperationalError as error:
                assert error.args[0] == 1040, error  # Too many connections
                return
        raise AssertionError("max_connections never reached")

    try:
        with control.cursor() as cursor:
            cursor.execute("SET GLOBAL max_connections = 12")
            fill()
            # The agents' persistent connections go too: they must connect again, and cannot.  Their
            # slots are taken at once; again if an agent got in first.
            for _ in range(5):
                cursor.execute(f"SELECT ID FROM information_schema.PROCESSLIST WHERE USER IN ({agents_in})")
                agent_threads = [row[0] for row in cursor.fetchall()]
                if not agent_threads:
                    break
                for thread_id in agent_threads:
                    cursor.execute(f"KILL CONNECTION {int(thread_id)}")
                fill()
            assert not agent_threads
        exporter_down, agentx_down = assert_down_and_staying_down(both)
    finally:
        for connection in fillers:
            connection.close()
        released = time.monotonic()
        with control.cursor() as cursor:
            cursor.execute("SET GLOBAL max_connections = 151")
        control.close()
    exporter_recovery, agentx_recovery = assert_recovered(both, fresh, released, before)
    for agent, down in (("exporter", exporter_down), ("agentx", agentx_down)):
        record_fault("max_connections exhausted (connections killed)", agent,
                     f"up=0, no values {down:.1f} s after; served again once connections were free",
                     exporter_recovery if agent == "exporter" else agentx_recovery)


def heartbeat_served(both: BothAgents) -> tuple[bool, bool]:
    """(exporter, agentx) serve a heartbeat value."""
    scrape = both.exporter.scrape(timeout=20).parsed()
    exporter_has = scrape.has("mysql_heartbeat_stored_timestamp_seconds")
    lag = both.snmpd.get(HEARTBEAT_LAG_OID)
    return exporter_has, bool(lag) and lag[0].type in NUMBER_TYPES


def test_metadata_lock_on_the_heartbeat_table(both):
    both.server.execute("UPDATE heartbeat.heartbeat SET ts = DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f')")
    wait_until(lambda: heartbeat_served(both) == (True, True), what="heartbeat served by both")
    before = both.resources()
    holder = both.server.connect(autocommit=True)
    try:
        with holder.cursor() as cursor:
            cursor.execute("LOCK TABLES heartbeat.heartbeat WRITE")
        locked = time.monotonic()
        # A scrape in the lock's shadow: on time, the server up with its other values, no heartbeat.
        wait_until(lambda: heartbeat_served(both) == (False, False), timeout=10,
                   what="the heartbeat withdrawn by both agents")
        withdrawn = time.monotonic() - locked
        result = both.exporter.scrape(timeout=20)
        scrape = result.parsed()
        assert result.seconds < 10
        assert scrape.value("mysql_up") == 1.0 and scrape.has("mysql_global_status_uptime")
        assert scrape.value("mysql_exporter_collector_success", collector="collect.heartbeat") == 0.0
        assert fresh(agentx_reading(both.snmpd))
        time.sleep(2 * REFRESH)
        assert heartbeat_served(both) == (False, False)
    finally:
        with holder.cursor() as cursor:
            cursor.execute("UNLOCK TABLES")
        holder.close()
    unlocked = time.monotonic()
    wait_until(lambda: heartbeat_served(both) == (True, True), timeout=30, what="heartbeat back")
    recovery = time.monotonic() - unlocked
    assert recovery <= RECOVERY_LIMIT + 1.0, recovery  # + the lock wait of a collection already waiting
    assert both.alive()
    assert_bounded(both, before)
    record_fault("metadata lock (LOCK TABLES WRITE) on the heartbeat table", "both",
                 f"heartbeat withdrawn after {withdrawn:.1f} s, other values fresh, scrape {result.seconds:.1f} s",
                 recovery)
