"""mysqld frozen (SIGSTOP) for longer than every timeout, then SIGCONT: both agents say the server is
not up while it is frozen, with the data age growing from the last collection that reached it, and
serve fresh values again within two refresh intervals of the SIGCONT."""

from __future__ import annotations

import time

import pytest

from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.exporter.exporter_harness import running_exporter
from tests.faults.faultkit import SnmpLiveness, frozen, mysql_value, own_mariadb, scrape, seconds_until
from tests.faults.report import record_fault
from tests.support import create_monitoring_user

# Longer than the statement timeout (1 s), the client's read timeout (2 s), the scrape deadline
# (2.75 s), the connect timeout (5 s) and the agent's collection timeout (its refresh, 2 s).
FREEZE_SECONDS = 8.0
REFRESH = 2.0  # the agent's --refresh, and the exporter's scrape interval here


@pytest.fixture(scope="module")
def server():
    with own_mariadb(server_id=31) as mariadb:
        yield mariadb


def test_exporter_reports_a_frozen_server_down_then_recovers(server, tmp_path):
    user = create_monitoring_user(server, tmp_path)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--exporter.collector-timeout=1") as exporter:
        before = scrape(exporter, 3)
        assert before.value("mysql_up") == 1
        uptime_before = before.value("mysql_global_status_uptime")
        with frozen(server) as stopped_at:
            observed = []
            while time.monotonic() - stopped_at < FREEZE_SECONDS:
                during = scrape(exporter, 3)
                observed.append(during)
                time.sleep(REFRESH / 2)
            frozen_for = time.monotonic() - stopped_at
        resumed = time.monotonic()
        for during in observed:
            assert during.value("mysql_up") == 0, during.text[:2000]
            assert not during.names("mysql_global_status_"), "a value from before the freeze served"
        ages = [during.value("mysql_agent_data_age_seconds") for during in observed]
        assert ages == sorted(ages) and ages[-1] >= frozen_for - REFRESH, ages

        def fresh():
            result = scrape(exporter, 3)
            return result if result.value("mysql_up") == 1 else None

        recovery = seconds_until(fresh, timeout=4 * REFRESH, interval=REFRESH / 4, what="exporter up again")
        after = scrape(exporter, 3)
        assert after.value("mysql_global_status_uptime") >= uptime_before + frozen_for - 1
        assert after.value("mysql_agent_data_age_seconds") < 1
    log = f"{len(observed)} scrapes while frozen: mysql_up 0, no MySQL values, data age up to {ages[-1]:.0f}s"
    record_fault(f"mysqld SIGSTOP {frozen_for:.0f}s, SIGCONT", "exporter", log, recovery)
    assert recovery <= 2 * REFRESH


def test_agentx_reports_a_frozen_server_down_then_recovers(server, tmp_path):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    agent = run_agent(snmpd, server, tmp_path, REFRESH, "--statement-timeout", "1")
    try:
        snmp = SnmpLiveness(snmpd)
        before = snmp.read()
        assert before["up"] == 1 and before["legacy"] is not None
        with frozen(server) as stopped_at:
            readings = []
            while time.monotonic() - stopped_at < FREEZE_SECONDS:
                readings.append((time.monotonic() - stopped_at, snmp.read()))
                time.sleep(0.25)
            frozen_for = time.monotonic() - stopped_at
        # Up to one refresh for the collection to start, then the statement limit plus the
        # client's margin (2 s) before the old values are withdrawn; 1 s for a loaded machine.
        settled = [values for at, values in readings if at > REFRESH + 3.0]
        assert settled, readings
        for values in settled:
            assert values["up"] == 0 and values["legacy"] is None and values["uptime"] is None, \
                (readings, agent.log_text()[-3000:])
        shown_up = [at for at, values in readings if values["up"] == 1]
        assert all(values["age"] >= at - REFRESH - 1 for at, values in readings), readings
        recovery = seconds_until(lambda: snmp.fresh(REFRESH), timeout=4 * REFRESH, interval=0.1,
                                 what="agent serving fresh values again")
        after = snmp.read()
        assert after["uptime"] >= before["uptime"] + frozen_for - 1
        assert agent.process.poll() is None
    finally:
        log_text = agent.log_text()
        stop_agent(agent)
        snmpd.stop()
    assert "Traceback" not in log_text
    withdrawn_after = max(shown_up, default=0.0)
    record_fault(f"mysqld SIGSTOP {frozen_for:.0f}s, SIGCONT", "agentx",
                 f"myAgentMysqlUp 0 and values absent {withdrawn_after:.1f}s after the freeze, "
                 f"data age up to {max(v['age'] for _, v in readings)}s", recovery)
    assert recovery <= 2 * REFRESH
