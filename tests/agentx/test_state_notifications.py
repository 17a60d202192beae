"""mysqlDown/mysqlUp and replicationStopped/replicationStarted: the pure state tracker, and the
real agent process sending them through snmpd to a private snmptrapd (as the leak notifications)."""

import time

import pytest

from mysql_snmp.agents.agentx.notification_varbinds import notification_message
from mysql_snmp.agents.agentx.state_notifications import StateChanges
from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.snapshot import Snapshot, labels_of
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.agentx.agent_process import mysql_up, run_agent, stop_agent
from tests.agentx.netsnmp import need_net_snmp, wait_until
from tests.leak import trap_sink
from tests.leak.trap_sink import TrapForwardingSnmpd, traps, traps_of

CATALOG = load_catalog()
DEFAULT = labels_of(channel="")
OTHER = labels_of(channel="dc2")


def replica(io: dict, sql: dict, up: bool = True) -> Snapshot:
    snapshot = Snapshot("db", time.time(), up)
    for row, value in io.items():
        snapshot.add_series("replica_io_running", row, value)
    for row, value in sql.items():
        snapshot.add_series("replica_sql_running", row, value)
    return snapshot


def test_server_down_and_back_once_each():
    tracker = StateChanges()
    assert tracker.observe(Snapshot("db", 0, True)) == []  # a healthy start is no news
    assert tracker.observe(Snapshot("db", 1, False)) == [("mysqlDown", None)]
    assert tracker.observe(Snapshot("db", 2, False)) == []
    assert tracker.observe(Snapshot("db", 3, True)) == [("mysqlUp", None)]
    assert tracker.observe(Snapshot("db", 4, True)) == []
    assert StateChanges().observe(Snapshot("db", 0, False)) == [("mysqlDown", None)]  # starts down: news


def test_replication_per_channel_once_per_change():
    tracker = StateChanges()
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 1}, {DEFAULT: 1, OTHER: 1})) == []
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 0}, {DEFAULT: 1, OTHER: 0})) == [("replicationStopped", OTHER)]
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 0}, {DEFAULT: 1, OTHER: 0})) == []
    # a MySQL outage says nothing about the threads: no replication notification around it
    assert tracker.observe(Snapshot("db", 0, False)) == [("mysqlDown", None)]
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 0}, {DEFAULT: 1, OTHER: 0})) == [("mysqlUp", None)]
    # IO connecting (2) is a running thread; SQL back: started
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 2}, {DEFAULT: 1, OTHER: 1})) == [("replicationStarted", OTHER)]
    # one thread stops while the other starts: both said
    assert tracker.observe(replica({DEFAULT: 0, OTHER: 1}, {DEFAULT: 1, OTHER: 1})) == [("replicationStopped", DEFAULT)]
    assert tracker.observe(replica({DEFAULT: 1, OTHER: 1}, {DEFAULT: 0, OTHER: 1})) == [
        ("replicationStopped", DEFAULT), ("replicationStarted", DEFAULT)]
    # a channel first seen stopped is news; one that disappears is forgotten
    fresh = StateChanges()
    assert fresh.observe(replica({DEFAULT: 1}, {DEFAULT: 0})) == [("replicationStopped", DEFAULT)]
    assert fresh.observe(replica({}, {})) == []
    assert fresh.observe(replica({DEFAULT: 1}, {DEFAULT: 1})) == []


def test_varbinds_are_the_channels_row_and_leave_absent_values_out():
    snapshot = replica({OTHER: 1}, {OTHER: 0})
    snapshot.add_series("replica_last_sql_errno", OTHER, 1146)
    snapshot.add_series("replica_last_sql_error", OTHER, "Table 'w.t' doesn't exist")
    trap_oid, varbinds = notification_message(CATALOG, "replicationStopped", snapshot, OTHER)
    assert format_oid(trap_oid) == "1.3.6.1.4.1.20267.200.2.0.5"
    table = CATALOG.tables["myReplicationChannelTable"]
    index = encode_index(table, OTHER)
    columns = {CATALOG.by_name(n).snmp.column: n for n in
               ("replica_io_running", "replica_sql_running", "replica_last_sql_errno", "replica_last_sql_error")}
    assert [v.name for v in varbinds] == [table.oid + (1, c) + index for c in sorted(columns)]
    assert [v.value for v in varbinds] == [1, 0, 1146, b"Table 'w.t' doesn't exist"]


# ------------------------------------------------------------------ the real agent, snmpd, snmptrapd


@pytest.fixture
def trap_receiver(tmp_path):
    need_net_snmp()
    with trap_sink.trap_receiver(tmp_path) as receiver:
        yield receiver


@pytest.fixture
def forwarding_snmpd(tmp_path, trap_receiver):
    server = TrapForwardingSnmpd(tmp_path / "snmpd", trap_port=trap_receiver[0])
    server.start()
    try:
        yield server
    finally:
        server.stop()


def trap_oid(name: str) -> str:
    return next(n["oid"] for n in CATALOG.extra["notifications"] if n["name"] == name)


def scalar(name: str) -> str:
    return "." + format_oid(CATALOG.by_name(name).snmp.oid) + ".0"


@pytest.mark.snmp
@pytest.mark.live
def test_mysql_down_and_up_reach_snmptrapd(tmp_path, trap_receiver, forwarding_snmpd):
    _, trap_log = trap_receiver
    with ThrowawayMariaDB(server_id=7) as server:
        agent = run_agent(forwarding_snmpd, server, tmp_path, 0.5)
        try:
            server.stop()
            wait_until(lambda: traps_of(trap_log, trap_oid("mysqlDown")), what="mysqlDown trap")
            time.sleep(1.5)  # three more failing collections: still one mysqlDown
            server.start()
            wait_until(lambda: traps_of(trap_log, trap_oid("mysqlUp")), what="mysqlUp trap")
            wait_until(lambda: mysql_up(forwarding_snmpd), what="agent serving MySQL again")
            time.sleep(1.0)
        finally:
            stop_agent(agent)
    down, up = traps_of(trap_log, trap_oid("mysqlDown")), traps_of(trap_log, trap_oid("mysqlUp"))
    assert len(down) == 1 and len(up) == 1, traps(trap_log)
    assert down[0][scalar("agent_mysql_up")] == "Gauge32: 0"
    assert down[0][scalar("agent_last_error")].startswith("STRING: ")
    assert up[0][scalar("agent_mysql_up")] == "Gauge32: 1"
    assert "MariaDB" in up[0][scalar("agent_server_version")] or "10." in up[0][scalar("agent_server_version")]


@pytest.mark.snmp
@pytest.mark.live
def test_replication_stopped_and_started_per_channel_reach_snmptrapd(tmp_path, trap_receiver, forwarding_snmpd,
                                                                   mariadb_replica):
    _, trap_log = trap_receiver
    agent = run_agent(forwarding_snmpd, mariadb_replica, tmp_path, 0.5)
    try:
        mariadb_replica.execute("STOP SLAVE SQL_THREAD")
        wait_until(lambda: traps_of(trap_log, trap_oid("replicationStopped")), what="replicationStopped trap")
        mariadb_replica.execute("START SLAVE SQL_THREAD")
        wait_until(lambda: traps_of(trap_log, trap_oid("replicationStarted")), what="replicationStarted trap")
        time.sleep(1.0)
    finally:
        mariadb_replica.execute("START SLAVE")
        stop_agent(agent)
    stopped = traps_of(trap_log, trap_oid("replicationStopped"))
    started = traps_of(trap_log, trap_oid("replicationStarted"))
    assert len(stopped) == 1 and len(started) == 1, traps(trap_log)
    table = CATALOG.tables["myReplicationChannelTable"]
    index = "." + format_oid(encode_index(table, DEFAULT))  # the default channel: the empty string
    io = "." + format_oid(table.oid + (1, CATALOG.by_name("replica_io_running").snmp.column)) + index
    sql = "." + format_oid(table.oid + (1, CATALOG.by_name("replica_sql_running").snmp.column)) + index
    assert (stopped[0][io], stopped[0][sql]) == ("Gauge32: 1", "Gauge32: 0")
    assert (started[0][io], started[0][sql]) == ("Gauge32: 1", "Gauge32: 1")
