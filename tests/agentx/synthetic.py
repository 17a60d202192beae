"""A small catalog and snapshot built in the test itself, so view/session tests do not depend
on the real catalog's content (and can serve values a real server never reaches, like 2^64-1)."""

from __future__ import annotations

from mysql_snmp.agents.catalog import parse_catalog
from mysql_snmp.agents.snapshot import Snapshot, labels_of

ROOT = "1.3.6.1.4.1.20267.200"
LEGACY = (1, 3, 6, 1, 4, 1, 20267, 200, 1)
NEW = (1, 3, 6, 1, 4, 1, 20267, 200, 2)


def _metric(name, kind, snmp, source="global_status", labels=(), unit=""):
    return {"name": name, "help": f"{name} help.", "unit": unit, "kind": kind,
            "source": {"from": source, "key": name}, "labels": list(labels), "snmp": snmp}


def synthetic_catalog():
    return parse_catalog({
        "module": "MYSQL-SERVER-MIB",
        "enterprise_oid": "1.3.6.1.4.1.20267",
        "legacy_root": f"{ROOT}.1",
        "new_root": f"{ROOT}.2",
        "tables": [
            {"name": "myPoolTable", "oid": f"{ROOT}.2.3", "index": ["pool"], "integer_index": ["pool"],
             "description": "Pools."},
            {"name": "myStateTable", "oid": f"{ROOT}.2.4", "index": ["state"], "description": "States."},
        ],
        "metrics": [
            _metric("status_com_select", "counter", {
                "name": "myComSelect64", "oid": f"{ROOT}.2.1.1", "type": "Counter64",
                "legacy": {"n": 1, "name": "myComSelect", "type": "Counter32"}}),
            _metric("variable_key_buffer_size", "gauge", {
                "name": "myKeyBufferSize64", "oid": f"{ROOT}.2.1.2", "type": "Counter64",
                "legacy": {"n": 2, "name": "myKeyBufferSize", "type": "Gauge32"}}),
            _metric("status_wsrep_ready", "string", {
                "name": "myWsrepReadyText", "oid": f"{ROOT}.2.1.3", "type": "OCTET STRING",
                "legacy": {"n": 3, "name": "myWsrepReady", "type": "OCTET STRING"}}),
            _metric("agent_mysql_up", "gauge", {"name": "myAgentMysqlUp", "oid": f"{ROOT}.2.2.1", "type": "Integer32"},
                    source="agent"),
            _metric("agent_data_age_seconds", "gauge",
                    {"name": "myAgentDataAge", "oid": f"{ROOT}.2.2.2", "type": "Gauge32"}, source="agent",
                    unit="seconds"),
            _metric("agent_last_error", "string",
                    {"name": "myAgentLastError", "oid": f"{ROOT}.2.2.3", "type": "OCTET STRING"}, source="agent"),
            _metric("innodb_pool_pages", "gauge", {"name": "myPoolPages", "table": "myPoolTable", "column": 2,
                                                   "type": "Gauge32"}, source="innodb", labels=["pool"]),
            _metric("processlist_threads", "gauge", {"name": "myStateThreads", "table": "myStateTable",
                                                     "column": 2, "type": "Gauge32"},
                    source="processlist", labels=["state"]),
        ],
    })


def synthetic_snapshot(com_select=2**64 - 1, up=True, timestamp=None):
    snapshot = Snapshot(target="synthetic", up=up)
    # The Collector adds the agent's own status to every snapshot, up or down.
    error = None if up else "MySQLUnavailable: Can't connect to MySQL server on '127.0.0.1' (111)"
    snapshot.values.update({"agent_mysql_up": int(up), "agent_last_error": error or ""})
    if timestamp is not None:
        snapshot.timestamp = timestamp
    if up:
        snapshot.values.update({
            "status_com_select": com_select,
            "variable_key_buffer_size": 2**40,
            "status_wsrep_ready": "ON",
        })
        for pool, pages in ((1, 11), (0, 10), (10, 20)):
            snapshot.add_series("innodb_pool_pages", labels_of(pool=str(pool)), pages)
        for state, threads in (("Sending data", 3), ("Locked", 1), ("", 5), ("init", 2)):
            snapshot.add_series("processlist_threads", labels_of(state=state), threads)
    snapshot.error = error
    return snapshot
