"""Grants revoked and the agent's connections killed, then grants restored: the server stays up
(the killed connection is reopened within the same collection), the sources that need the revoked
grant fail as privilege failures (logged once), and they work again at the first collection after
the GRANT (the exporter; within two refresh intervals for the AgentX agent), however long the denial
lasted, without a restart and without a killed connection."""

from __future__ import annotations

import logging
import math
import time

import pytest

from mysql_snmp.agents.config.settings import settings_from_my_cnf
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.exporter.exporter_harness import running_exporter
from tests.faults.faultkit import (
    INNODB_TIMESTAMP_OID,
    SnmpLiveness,
    kill_connections,
    mysql_value,
    own_mariadb,
    scrape,
    seconds_until,
)
from tests.faults.report import record_fault
from tests.support import create_monitoring_user

REFRESH = 1.0  # the agent's --refresh, and the exporter's scrape interval here
# The denied sources' back-off starts at one interval and doubles (retries 1, 3, 7, 15 s after the
# denial): a denial of 11 s outlasts its 8 s step, the largest reached here, so the back-off alone
# would come back 4 s after the GRANT at the earliest; only the SHOW GRANTS check is that fast.
FAULT_SECONDS = 11.0
# The exporter test's GRANT waits until no back-off retry is due within this long: a retry reopens the
# connection, which would bring the sources back without the SHOW GRANTS check that test is about.
BACKOFF_CLEARANCE = 3.0
INNODB_SUCCESS = {"collector": "collect.engine_innodb_status"}


@pytest.fixture(scope="module")
def server():
    with own_mariadb(server_id=32) as mariadb:
        yield mariadb


def revoke_and_kill(server, user: str) -> int:
    server.execute(f"REVOKE PROCESS ON *.* FROM '{user}'@'127.0.0.1'")
    return kill_connections(server, user)


def restore(server, user: str) -> float:
    server.execute(f"GRANT PROCESS ON *.* TO '{user}'@'127.0.0.1'")
    return time.monotonic()


def test_exporter_survives_revoked_grants_and_killed_connections(server, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="mysql_snmp.agents.collection")
    user = create_monitoring_user(server, tmp_path)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--collect.info_schema.processlist") as exporter:
        # The first retry of a denied source comes after 15 s, sized for 15-60 s scrape intervals;
        # scaled here to this test's 1 s scrapes, as the AgentX agent does.
        exporter.app.default_target().collector.disabled_retry_seconds = REFRESH
        before = scrape(exporter, 5)
        assert before.value("mysql_exporter_collector_success", **INNODB_SUCCESS) == 1
        killed = revoke_and_kill(server, user.name)
        denied_at = time.monotonic()
        assert killed >= 1
        collector = exporter.app.default_target().collector

        def retry_due_soon() -> bool:
            return min((d.retry_at for d in collector._disabled.values()), default=math.inf) \
                - time.monotonic() < BACKOFF_CLEARANCE

        during = []
        started = time.monotonic()
        while time.monotonic() - started < FAULT_SECONDS or retry_due_soon():
            during.append(scrape(exporter, 5))
            time.sleep(REFRESH)
        # Never down: the killed connection is reopened within the collection that found it gone.
        assert all(result.value("mysql_up") == 1 for result in during)
        # Values keep coming (the module's server may be under a second old: Uptime can read 0).
        assert all(result.has("mysql_global_status_uptime") for result in during)
        denied = during[1:]  # the first scrape may still have run on the old session
        assert all(r.value("mysql_exporter_collector_success", **INNODB_SUCCESS) == 0 for r in denied)
        assert all(not r.has("mysql_innodb_monitor_timestamp_seconds") for r in denied)
        assert all(r.value("mysql_exporter_collector_success", collector="collect.info_schema.processlist") == 0
                   for r in denied)
        assert during[-1].value("mysql_exporter_scrape_errors_total", collector="collect.engine_innodb_status",
                                reason="privilege") >= 1
        # A privilege failure is not a lost connection: the cut connection cost no reconnect warning.
        assert mysql_value(during[-1], "mysql_exporter_scrape_errors_total", collector="collect.global_status",
                           reason="connection") is None

        restored = restore(server, user.name)
        logged_before = len(caplog.records)
        after_grant = scrape(exporter, 5)  # the first collection after the GRANT
        recovery = time.monotonic() - restored
        back = [r.getMessage() for r in caplog.records[logged_before:]]
    # Event order, not wall time (load stretches that): that first collection read SHOW GRANTS,
    # saw the change and ran the denied sources again on a new session.
    assert after_grant.value("mysql_exporter_collector_success", **INNODB_SUCCESS) == 1
    assert after_grant.has("mysql_innodb_monitor_timestamp_seconds")
    assert after_grant.value("mysql_exporter_collector_success", collector="collect.info_schema.processlist") == 1
    assert any("grants changed; retrying" in m and "innodb_status" in m for m in back), back
    assert any("source innodb_status works again" in m for m in back), back
    disabled = [r.getMessage() for r in caplog.records if "source innodb_status disabled" in r.getMessage()]
    assert len(disabled) == 1 and "grant PROCESS" in disabled[0], disabled
    record_fault(f"PROCESS revoked + connections killed for {restored - denied_at:.0f}s, then granted", "exporter",
                 f"mysql_up 1 in all {len(during)} scrapes, InnoDB and processlist collectors 0 (privilege), "
                 "logged once; SHOW GRANTS saw the GRANT at the first collection after it; back without a restart",
                 recovery)


def test_agentx_survives_revoked_grants_and_killed_connections(server, tmp_path):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    agent = run_agent(snmpd, server, tmp_path, REFRESH)
    user = settings_from_my_cnf(agent.my_cnf).user
    try:
        snmp = SnmpLiveness(snmpd)
        assert snmp.read(INNODB_TIMESTAMP_OID)[INNODB_TIMESTAMP_OID] is not None
        assert revoke_and_kill(server, user) >= 1
        readings = []
        started = time.monotonic()
        while time.monotonic() - started < FAULT_SECONDS:
            readings.append((time.monotonic() - started, snmp.read(INNODB_TIMESTAMP_OID)))
            time.sleep(0.1)
        assert all(values["up"] == 1 and values["legacy"] is not None for _, values in readings), readings
        denied = [values for at, values in readings if at > 2 * REFRESH]
        assert denied and all(values[INNODB_TIMESTAMP_OID] is None for values in denied), readings

        restored = restore(server, user)
        seconds_until(lambda: snmp.read(INNODB_TIMESTAMP_OID)[INNODB_TIMESTAMP_OID] is not None,
                      timeout=30, interval=0.1, what="InnoDB values back")
        recovery = time.monotonic() - restored
        assert agent.process.poll() is None
    finally:
        stop_agent(agent)
        snmpd.stop()
    log = agent.log_text()
    assert "Traceback" not in log
    assert log.count("source innodb_status disabled") == 1 and "grant PROCESS" in log
    assert log.count("source processlist disabled") == 1
    assert "source innodb_status works again" in log and "source processlist works again" in log
    assert "lost the server" not in log  # the killed connection was reopened, not reported as an outage
    assert "grants changed; retrying" in log
    record_fault(f"PROCESS revoked + connections killed for {FAULT_SECONDS:.0f}s, then granted", "agentx",
                 f"myAgentMysqlUp 1 in all {len(readings)} reads, InnoDB objects absent (privilege), "
                 "processlist a privilege failure, logged once; SHOW GRANTS saw the GRANT; back without a restart",
                 recovery)
    assert recovery <= 2 * REFRESH
