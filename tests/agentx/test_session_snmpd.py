"""The subagent behind a real Net-SNMP snmpd, read by two managers (Net-SNMP's command-line
tools and pysnmp), with values checked against what SQL says on the throwaway MariaDB."""

from __future__ import annotations

import asyncio
import time

import pytest

from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.config.settings import settings_from_my_cnf
from mysql_snmp.agents.snapshot import Snapshot, labels_of
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.agentx.agent_process import InProcessAgent, mysql_up, run_agent, stop_agent
from tests.agentx.netsnmp import wait_until

pytestmark = [pytest.mark.snmp, pytest.mark.live]

CATALOG = load_catalog()
LEGACY_ROOT = format_oid(CATALOG.legacy_root)
NEW_ROOT = format_oid(CATALOG.new_root)
# How Net-SNMP's tools print each SMI type.
NET_SNMP_TYPE = {
    "Counter32": "Counter32", "Counter64": "Counter64", "Gauge32": "Gauge32", "Unsigned32": "Gauge32",
    "Integer32": "INTEGER", "INTEGER": "INTEGER", "TimeTicks": "Timeticks",
    "OCTET STRING": "STRING", "DisplayString": "STRING",
}


def instance(name: str) -> str:
    """The instance OID of a scalar, by SNMP name (legacy or new tree)."""
    for metric in CATALOG:
        snmp = metric.snmp
        if snmp and snmp.legacy and snmp.legacy.name == name:
            return format_oid(snmp.legacy.oid) + ".0"
        if snmp and snmp.name == name and snmp.oid:
            return format_oid(snmp.oid) + ".0"
    raise KeyError(name)


def sql_value(server, statement: str):
    return server.execute(statement)[0][-1]


# ------------------------------------------------------------------ live agent, shared snmpd


def test_legacy_objects_one_by_one(snmpd, live_agent, mariadb):
    legacy = CATALOG.legacy()
    assert len(legacy) == 160
    oids = [format_oid(m.snmp.legacy.oid) + ".0" for m in legacy]
    served = []
    for start in range(0, len(oids), 40):
        served += snmpd.get(*oids[start:start + 40])
    reference = Collector(settings_from_my_cnf(live_agent.my_cnf)).collect()
    assert reference.up
    assert [v.oid for v in served] == oids
    for metric, var in zip(legacy, served):
        expected = NET_SNMP_TYPE[metric.snmp.legacy.type]
        # The object's own value, else the catalog's fallback (first present).
        collected = [name for name in (metric.name, *metric.snmp.legacy.fallback) if name in reference.values]
        if var.type == "noSuchInstance":
            # Absent from this server: the collection has no value for it either.
            assert not collected, f"{metric.snmp.legacy.name} missing from the agent"
        else:
            assert var.type == expected or (expected == "STRING" and var.type == "Hex-STRING"), (
                f"{metric.snmp.legacy.name}: {var.type}, catalog says {metric.snmp.legacy.type}")
            assert collected, f"{metric.snmp.legacy.name} served but not collected"
    present = sum(1 for v in served if v.type != "noSuchInstance")
    assert present >= 100, f"only {present} of 160 legacy objects served"


# What MariaDB 10.11 has no value for (README, "Legacy objects the server cannot answer"); a
# primary, not a replica, without Galera.
ABSENT_ON_MARIADB_1011 = {
    "myPendingAIOLogIOs", "myPendingAIOSyncIOs", "myPendingBufPoolFlushes", "myPendingChkpWrites",
    "myPendingIbufAIOReads", "myPendingLogFlushes", "myPendingLogWrites", "mySpinWaits", "mySpinRounds", "myOsWaits",
    "myRowsInserted", "myRowsUpdated", "myRowsDeleted", "myRowsRead", "mySlaveLag",
    "myAdditionalPoolAlloc", "myHashIndexCellsUsed", "myIBufCellCount", "myIBufUsedCells", "myIBufFreeCells",
    "myPageHashMemory", "myFileSystemMemory", "myLockSystemMemory", "myRecoverySystemMemory", "myThreadHashMemory",
    # No wsrep provider: MariaDB still prints wsrep_ready OFF & co., which describe no cluster.
    "myWsrepClusterStateUuid", "myWsrepClusterConfId", "myWsrepClusterSize", "myWsrepClusterStatus", "myWsrepReady",
    "myWsrepConnected", "myWsrepLocalStateComment", "myWsrepFlowControlPaused", "myWsrepReplicatedBytes",
    "myWsrepReceivedBytes",
}


def test_walk_of_the_legacy_tree_serves_the_servers_equivalents(snmpd, live_agent, mariadb):
    status = dict(mariadb.execute("SHOW GLOBAL STATUS LIKE 'Innodb_%'"))
    walked = {v.oid: v for v in snmpd.bulkwalk(LEGACY_ROOT)}
    names = {format_oid(m.snmp.legacy.oid) + ".0": m.snmp.legacy.name for m in CATALOG.legacy()}
    served = {names[oid] for oid in walked}
    assert set(names.values()) - served == ABSENT_ON_MARIADB_1011
    assert len(served) == 160 - len(ABSENT_ON_MARIADB_1011)

    def value(name):
        return walked[instance(name)].number

    # Served from SHOW STATUS where the status text no longer has the line the original read.
    # Counters that can move between the agent's collection and this read are bounded by it.
    assert 0 < value("myLogWrites") <= int(status["Innodb_log_writes"])
    assert value("myIbufMerges") == int(status["Innodb_ibuf_merges"])
    assert value("myIbufInserts") == int(status["Innodb_ibuf_merged_inserts"])
    assert value("myIbufMerged") == sum(int(status[f"Innodb_ibuf_merged_{kind}"])
                                        for kind in ("inserts", "delete_marks", "deletes"))
    assert value("myAdaptiveHashMemory") > 0
    assert walked[instance("myAdaptiveHashMemory")].type == "Counter64"
    # No transaction waits for a lock: a real 0, from a complete TRANSACTIONS list.
    assert value("myInnoDBLockWaitSecs") == 0


def test_values_equal_what_sql_says(snmpd, live_agent, mariadb):
    key_buffer_size = int(sql_value(mariadb, "SELECT @@key_buffer_size"))
    max_connections = int(sql_value(mariadb, "SELECT @@max_connections"))
    got = {v.oid: v for v in snmpd.get(instance("myKeyBufferSize"), instance("myMaxConnections"))}
    assert got[instance("myKeyBufferSize")].number == key_buffer_size
    assert got[instance("myMaxConnections")].number == max_connections == 200
    assert got[instance("myMaxConnections")].type == "Gauge32"


def test_com_select_twin_follows_show_global_status(snmpd, live_agent, mariadb):
    status = "SHOW GLOBAL STATUS LIKE 'Com_select'"  # a SHOW, so it does not count itself
    before = int(sql_value(mariadb, status))
    mariadb.execute(*["SELECT 1"] * 25)
    after_selects = int(sql_value(mariadb, status))
    assert after_selects >= before + 25
    issued = time.time()
    stamp = instance("myAgentLastCollectionTimestampSeconds")
    wait_until(lambda: snmpd.get(stamp)[0].number > issued + 1, what="a collection after the SELECTs")
    twin, legacy = snmpd.get(instance("myComSelect64"), instance("myComSelect"))
    now = int(sql_value(mariadb, status))
    assert (twin.type, legacy.type) == ("Counter64", "Counter32")
    # Only the agent's own SELECTs run in between: the value lies between the two SQL reads.
    assert after_selects <= twin.number <= now
    assert legacy.number == twin.number % 2**32


def test_walk_is_ordered_and_tables_are_indexed(snmpd, live_agent, mariadb):
    walked = snmpd.bulkwalk(NEW_ROOT)
    keys = [tuple(int(p) for p in v.oid.split(".")) for v in walked]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert instance("myAgentMysqlUp") in {v.oid for v in walked}
    table = CATALOG.tables["myMemoryInstrumentTable"]
    column = table.oid + (1, CATALOG.table_columns(table.name)[0].snmp.column)
    rows = [k[len(column):] for k in keys if k[:len(column)] == column]
    assert rows, "no performance_schema memory rows"
    names = []
    for index in rows:
        assert index[0] == len(index) - 1  # OCTET STRING index: length, then the bytes
        names.append(bytes(index[1:]).decode("utf-8"))
    # non-IMPLIED string index order: shorter names first, then byte by byte
    assert names == sorted(names, key=lambda n: (len(n.encode()), n.encode()))
    known = {row[0] for row in mariadb.execute(
        "SELECT EVENT_NAME FROM performance_schema.memory_summary_global_by_event_name")}
    assert set(names) <= known


def test_pysnmp_sees_the_same_tree(snmpd, live_agent):
    from pysnmp.hlapi.v3arch.asyncio import (
        CommunityData, ContextData, ObjectIdentity, ObjectType, SnmpEngine, UdpTransportTarget, bulk_walk_cmd,
        get_cmd,
    )

    async def walk_and_get():
        engine = SnmpEngine()
        target = await UdpTransportTarget.create(("127.0.0.1", snmpd.port), timeout=2, retries=0)
        walked = []
        async for error, status, _, varbinds in bulk_walk_cmd(
            engine, CommunityData("public"), target, ContextData(), 0, 25,
            ObjectType(ObjectIdentity(LEGACY_ROOT)), lexicographicMode=False, lookupMib=False,
        ):
            assert not error and not status, (error, status)
            walked += [(str(name), type(value).__name__) for name, value in varbinds]
        _, _, _, got = await get_cmd(engine, CommunityData("public"), target, ContextData(),
                                     ObjectType(ObjectIdentity(instance("myMaxConnections"))), lookupMib=False)
        engine.close_dispatcher()
        return walked, got

    walked, got = asyncio.run(walk_and_get())
    net_snmp = [(v.oid, v.type) for v in snmpd.bulkwalk(LEGACY_ROOT)]
    assert [oid for oid, _ in walked] == [oid for oid, _ in net_snmp]
    pysnmp_names = {"Counter32": "Counter32", "Counter64": "Counter64", "Gauge32": "Gauge32",
                    "Integer": "INTEGER", "Integer32": "INTEGER", "OctetString": "STRING"}
    for (oid, pysnmp_type), (_, net_snmp_type) in zip(walked, net_snmp):
        assert pysnmp_names[pysnmp_type] == net_snmp_type or net_snmp_type == "Hex-STRING", oid
    assert int(got[0][1]) == 200


def test_snmpv1_cannot_carry_counter64(snmpd, live_agent):
    v1 = snmpd.run("snmpget", instance("myComSelect64"), version="1")
    assert v1.returncode != 0 and "noSuchName" in v1.stderr + v1.stdout
    legacy_v1 = snmpd.get(instance("myComSelect"), version="1")
    assert legacy_v1[0].type == "Counter32"


# ------------------------------------------------------------------ a synthetic snapshot


def synthetic_view(com_select: int, key_buffer_size: int):
    snapshot = Snapshot(target="synthetic", up=True)
    snapshot.values.update({"status_com_select": com_select, "variable_max_connections": key_buffer_size,
                            "agent_mysql_up": 1})
    column = CATALOG.table_columns("myProcesslistStateTable")[0]
    for state in ("sending data", "init", ""):
        snapshot.add_series(column.name, labels_of(state=state), 7)
    return build_view(TreeLayout.from_catalog(CATALOG), snapshot)


def test_counter64_max_counter32_wrap_gauge32_clamp(private_snmpd):
    view = synthetic_view(com_select=2**64 - 1, key_buffer_size=2**40)
    with InProcessAgent(private_snmpd, view, [CATALOG.legacy_root, CATALOG.new_root]):
        twin, legacy, gauge = private_snmpd.get(instance("myComSelect64"), instance("myComSelect"),
                                                instance("myMaxConnections"))
        assert (twin.type, twin.number) == ("Counter64", 2**64 - 1)
        assert (legacy.type, legacy.number) == ("Counter32", 2**32 - 1)
        assert (gauge.type, gauge.number) == ("Gauge32", 2**32 - 1)
        column = CATALOG.table_columns("myProcesslistStateTable")[0]
        table = format_oid(CATALOG.tables["myProcesslistStateTable"].oid + (1, column.snmp.column))
        rows = [v.oid[len(table) + 1:] for v in private_snmpd.bulkwalk(table)]
        assert rows == ["0", "4.105.110.105.116", "12.115.101.110.100.105.110.103.32.100.97.116.97"]
        # Past our last instance we answer endOfMibView and snmpd moves on to the next subtree.
        after = private_snmpd.getnext(format_oid(CATALOG.new_root + (99,)))
        assert not after[0].oid.startswith(format_oid(CATALOG.legacy_root[:-1]) + ".")


# ------------------------------------------------------------------ restarts and outages


def test_snmpd_killed_and_restarted_is_served_again(private_snmpd, mariadb, tmp_path):
    agent = run_agent(private_snmpd, mariadb, tmp_path)
    try:
        private_snmpd.kill()
        time.sleep(0.3)  # the agent notices and starts backing off
        private_snmpd.start()
        restarted = time.monotonic()
        wait_until(lambda: mysql_up(private_snmpd), timeout=10, interval=0.02, what="served after restart")
        print(f"served again {time.monotonic() - restarted:.2f} s after snmpd restarted")
        assert agent.process.poll() is None
    finally:
        stop_agent(agent)
    assert agent.process.returncode == 0, agent.log_text()[-2000:]
    # SIGTERM sent Close(shutdown): snmpd dropped the registration at once.
    assert private_snmpd.get(instance("myAgentMysqlUp"))[0].type == "noSuchObject"


def test_mysql_outage_hides_values_and_status_says_why(private_snmpd, tmp_path):
    with ThrowawayMariaDB() as server:
        agent = run_agent(private_snmpd, server, tmp_path)
        try:
            key_buffer = instance("myKeyBufferSize")
            assert private_snmpd.get(key_buffer)[0].type == "Counter64"
            server.stop()
            wait_until(lambda: not mysql_up(private_snmpd), what="myAgentMysqlUp = 0")
            values, error, up = private_snmpd.get(key_buffer, instance("myAgentLastError"), instance("myAgentMysqlUp"))
            assert values.type == "noSuchInstance"
            assert up.number == 0
            assert "Can't connect" in error.text or "Lost connection" in error.text or "refused" in error.text, error
            # Nothing left to walk under the legacy root (snmpbulkwalk then GETs the root itself).
            walk = private_snmpd.bulkwalk(LEGACY_ROOT)
            assert [v for v in walk if v.oid.startswith(LEGACY_ROOT + ".")] == []
            server.start()
            wait_until(lambda: mysql_up(private_snmpd), what="myAgentMysqlUp = 1 again")
            assert private_snmpd.get(key_buffer)[0].number == int(sql_value(server, "SELECT @@key_buffer_size"))
            assert agent.process.poll() is None
        finally:
            stop_agent(agent)
