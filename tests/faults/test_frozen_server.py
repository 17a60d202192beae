"""mysqld frozen (SIGSTOP) for longer than every timeout, then SIGCONT: both agents say the server is
not up while it is frozen, with the data age growing from the last collection that reached it, and
serve fresh values again within two refresh intervals of the SIGCONT.  The AgentX agent withdraws its
values once they are older than its refresh interval plus its --stale-grace, whatever the collection
waits on."""

from __future__ import annotations

import time

import pytest

from mysql_snmp.agents.config.settings import settings_from_my_cnf
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.exporter.exporter_harness import running_exporter
from tests.faults.faultkit import SnmpLiveness, frozen, kill_connections, own_mariadb, scrape, seconds_until
from tests.faults.report import record_fault
from tests.support import create_monitoring_user

# Longer than the statement timeouts (exporter 1 s, agent 3 s), the client's read timeouts (2 s, 4 s),
# the scrape deadline (2.75 s), the connect timeout (5 s) and the agent's collection timeout (its
# refresh, 2 s).
FREEZE_SECONDS = 8.0
REFRESH = 2.0  # the agent's --refresh, and the exporter's scrape interval here
STALE_GRACE = 1.0  # the agent's --stale-grace
# The agent's --statement-timeout: longer than the grace, so the values must go before any MySQL
# timeout fires.
AGENT_STATEMENT_TIMEOUT = 3.0
READ_SLACK = 0.5  # an snmpget through snmpd on a loaded machine


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


def cut_agent_connection(server, user: str) -> None:
    """KILL the agent's idle connection and wait until it is gone: its next collection must connect."""
    assert kill_connections(server, user) >= 1
    seconds_until(lambda: not server.execute(
        f"SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '{user}'"), timeout=5, what="connection gone")


# The path the collection blocks on: a statement on its live connection (sent, its answer never
# read), or the connect that replaces a connection cut just before the freeze (the handshake never
# answered).  The grace bounds both alike: it does not wait for any MySQL timeout.
BLOCKED_PATHS = ("statement", "connect")


@pytest.mark.parametrize("blocked", BLOCKED_PATHS)
def test_agentx_withdraws_values_once_older_than_refresh_plus_grace_then_recovers(server, tmp_path, blocked):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    agent = run_agent(snmpd, server, tmp_path, REFRESH, "--statement-timeout", str(AGENT_STATEMENT_TIMEOUT),
                      "--stale-grace", str(STALE_GRACE))
    user = settings_from_my_cnf(agent.my_cnf).user
    try:
        snmp = SnmpLiveness(snmpd)
        before = snmp.read()
        assert before["up"] == 1 and before["legacy"] is not None
        if blocked == "connect":
            cut_agent_connection(server, user)
        with frozen(server) as stopped_at:
            readings = []
            while time.monotonic() - stopped_at < FREEZE_SECONDS:
                readings.append((time.monotonic() - stopped_at, snmp.read()))
                time.sleep(0.2)
            frozen_for = time.monotonic() - stopped_at
        # The values on show are at most one refresh old at the freeze; they go once they are
        # REFRESH + STALE_GRACE old.  The age is served in whole seconds, and a reading takes a while.
        for at, values in readings:
            if values["up"] == 1:
                assert values["legacy"] is not None and values["age"] <= REFRESH + STALE_GRACE + 1, \
                    (readings, agent.log_text()[-3000:])
            else:
                assert values["legacy"] is None and values["uptime"] is None, readings
            if at > REFRESH + STALE_GRACE + READ_SLACK:
                assert values["up"] == 0, (at, readings, agent.log_text()[-3000:])
        ages = [values["age"] for _, values in readings]
        assert ages == sorted(ages) and ages[-1] >= frozen_for - REFRESH - 1, readings
        assert "the collection in flight is overdue" in agent.log_text()
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
    last_up = max((at for at, values in readings if values["up"] == 1), default=0.0)
    record_fault(f"mysqld SIGSTOP {frozen_for:.0f}s ({blocked} blocked), SIGCONT", "agentx",
                 f"myAgentMysqlUp 1 last read {last_up:.1f}s into the freeze (bound: refresh + grace = "
                 f"{REFRESH + STALE_GRACE:g}s), then 0 with values absent; data age up to {max(ages)}s", recovery)
    assert recovery <= 2 * REFRESH
