"""Collection pieces without a server: catalog mapping, derivations, statement choice, locality."""

from __future__ import annotations

import os

import pytest

from mysql_snmp.agents.catalog import parse_catalog
from mysql_snmp.agents.collection import Collector, map_to_catalog
from mysql_snmp.agents.config.settings import ConnectionSettings
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.server_version import server_info_from_version
from mysql_snmp.agents.derived import apply_derivations
from mysql_snmp.agents.snapshot import Snapshot, labels_of
from mysql_snmp.agents.sources import SourceResult, default_source_names, scraper_classes
from mysql_snmp.agents.sources.binlog import status_statement
from mysql_snmp.agents.sources.heartbeat import HeartbeatOptions
from mysql_snmp.agents.sources.innodb_metrics import metrics_statement
from mysql_snmp.agents.sources.local_mysqld import LocalMysqld, _confirmed
from mysql_snmp.agents.sources.replication import replica_status_statement
from mysql_snmp.agents.sources.slave_hosts import slave_hosts_statement

MARIADB_10_11 = server_info_from_version("10.11.19-MariaDB-0+deb12u1-log", "Debian 12")
MARIADB_10_4 = server_info_from_version("10.4.32-MariaDB", "")
MYSQL_5_7 = server_info_from_version("5.7.44-log", "MySQL Community Server (GPL)")
MYSQL_8_0_36 = server_info_from_version("8.0.36", "MySQL Community Server - GPL")
MYSQL_8_4 = server_info_from_version("8.4.3", "MySQL Community Server - GPL")


def small_catalog(*metrics):
    return parse_catalog({
        "module": "TEST-MIB", "enterprise_oid": "1.3.6.1.4.1.20267", "legacy_root": "1.3.6.1.4.1.20267.200.1",
        "new_root": "1.3.6.1.4.1.20267.200.2", "metrics": list(metrics),
    })


def metric(name, kind, key, labels=(), status_override=None):
    source = {"from": kind, "key": key}
    if status_override:
        source["status_override"] = status_override
    return {"name": name, "help": name, "kind": "gauge", "source": source, "labels": list(labels)}


def test_mapping_by_key_case_insensitive_by_name_and_series():
    catalog = small_catalog(
        metric("status_uptime", "global_status", "Uptime"),
        metric("status_innodb_buffer_pool_reads", "global_status", "innodb_buffer_pool_reads"),
        metric("status_absent", "global_status", "Not_printed"),
        metric("replica_channels", "replication", "channels"),
        metric("replica_io_running", "replication", "io_running", labels=["channel"]),
    )
    snapshot = Snapshot(target="t")
    map_to_catalog(catalog, {
        "global_status": [SourceResult(values={"Uptime": 42, "Innodb_buffer_pool_reads": 7})],
        "replication": [SourceResult(values={"replica_channels": 1},
                                     series={"replica_io_running": {labels_of(channel=""): 1}})],
    }, snapshot)
    assert snapshot.values == {"status_uptime": 42, "status_innodb_buffer_pool_reads": 7, "replica_channels": 1}
    assert snapshot.series == {"replica_io_running": {(("channel", ""),): 1}}



def test_mapping_plan_follows_the_names_each_collection_prints():
    catalog = small_catalog(
        metric("status_uptime", "global_status", "Uptime"),
        metric("status_questions", "global_status", "questions"),
        metric("status_new", "global_status", "Brand_new"),
    )
    plans = {}

    def mapped(values):
        snapshot = Snapshot(target="t")
        map_to_catalog(catalog, {"global_status": [SourceResult(values=values)]}, snapshot, plans)
        return snapshot.values

    assert mapped({"Uptime": 1, "Questions": 5}) == {"status_uptime": 1, "status_questions": 5}
    # Same names, new values: the remembered plan reads the new values.
    assert mapped({"Uptime": 2, "Questions": 9}) == {"status_uptime": 2, "status_questions": 9}
    assert len(plans) == 1
    # A name appears (a plugin loaded) or goes away: a new plan, never a stale one.
    assert mapped({"Uptime": 3, "Questions": 9, "Brand_new": 4}) == {
        "status_uptime": 3, "status_questions": 9, "status_new": 4}
    assert mapped({"Uptime": 4}) == {"status_uptime": 4}
    assert len(plans) == 3

def test_status_override_wins_and_pages_read_is_deterministic():
    # The original mapped both Innodb_buffer_pool_reads and Innodb_pages_read to pages_read;
    # the catalog names one override per value: Innodb_pages_read.
    catalog = small_catalog(
        metric("innodb_bp_pages_read", "innodb", "innodb_bp_pages_read", status_override="Innodb_pages_read"),
        metric("innodb_bp_pages_created", "innodb", "innodb_bp_pages_created",
               status_override="Innodb_pages_created"),
    )
    snapshot = Snapshot(target="t", values={"innodb_bp_pages_read": 10, "innodb_bp_pages_created": 5})
    snapshot.raw["global_status"] = {"Innodb_pages_read": 999, "Innodb_buffer_pool_reads": 3}
    apply_derivations(catalog, snapshot, {})
    # Overridden when SHOW STATUS has the variable; the parsed value stays when it has not.
    assert snapshot.values == {"innodb_bp_pages_read": 999, "innodb_bp_pages_created": 5}


def test_key_buffer_and_table_cache_derivations():
    catalog = small_catalog(
        metric("key_buffer_bytes_used", "derived", "key_buffer_bytes_used"),
        metric("key_buffer_bytes_unflushed", "derived", "key_buffer_bytes_unflushed"),
        metric("table_cache", "derived", "table_cache"),
    )
    snapshot = Snapshot(target="t")
    snapshot.raw["global_status"] = {"Key_blocks_unused": 100, "Key_blocks_not_flushed": 3}
    snapshot.raw["global_variables"] = {"key_buffer_size": 8388608, "key_cache_block_size": 1024,
                                        "table_cache": 64}  # a pre-5.1.3 server
    apply_derivations(catalog, snapshot, {})
    assert snapshot.values == {"key_buffer_bytes_used": 8388608 - 100 * 1024,
                               "key_buffer_bytes_unflushed": 3 * 1024, "table_cache": 64}


def test_ibuf_merged_operations_add_up_the_three_merged_kinds():
    catalog = small_catalog(metric("ibuf_merged_operations", "derived", "ibuf_merged_operations"))
    snapshot = Snapshot(target="t")
    snapshot.raw["global_status"] = {"Innodb_ibuf_merged_inserts": 7, "Innodb_ibuf_merged_delete_marks": 5,
                                     "Innodb_ibuf_merged_deletes": 2, "Innodb_ibuf_merges": 4}
    apply_derivations(catalog, snapshot, {})
    assert snapshot.values == {"ibuf_merged_operations": 14}
    del snapshot.raw["global_status"]["Innodb_ibuf_merged_deletes"]  # MySQL: no such variables
    snapshot.values.clear()
    apply_derivations(catalog, snapshot, {})
    assert snapshot.values == {}


def test_derivations_absent_when_an_input_is_missing():
    catalog = small_catalog(metric("key_buffer_bytes_used", "derived", "key_buffer_bytes_used"),
                            metric("table_cache", "derived", "table_cache"))
    snapshot = Snapshot(target="t")
    snapshot.raw["global_status"] = {"Key_blocks_unused": 100}
    snapshot.raw["global_variables"] = {"key_buffer_size": 8388608}  # no key_cache_block_size
    apply_derivations(catalog, snapshot, {})
    assert snapshot.values == {}


def test_heartbeat_lag_replaces_the_legacy_lag_on_a_replica_only():
    catalog = small_catalog(metric("replica_slave_lag_seconds", "replication", "slave_lag"))
    heartbeat = {"heartbeat": SourceResult(values={"heartbeat_lag_seconds": 7.6})}
    replica = Snapshot(target="t", values={"replica_slave_lag_seconds": None})
    replica.raw["replica_status"] = [{"Seconds_Behind_Master": None}]
    apply_derivations(catalog, replica, heartbeat)
    assert replica.values["replica_slave_lag_seconds"] == 6  # the original: floor(age - 1)
    primary = Snapshot(target="t")
    primary.raw["replica_status"] = []
    apply_derivations(catalog, primary, heartbeat)
    assert "replica_slave_lag_seconds" not in primary.values


@pytest.mark.parametrize("lag, legacy", [(4.6, 3), (0.4, 0)])
def test_heartbeat_lag_rounds_like_the_original_and_leaves_the_channel_series(lag, legacy):
    from mysql_snmp.agents.sources.replication import replication_result

    catalog = small_catalog(
        metric("replica_slave_lag_seconds", "replication", "slave_lag"),
        metric("replica_seconds_behind_source", "replication", "seconds_behind_source", labels=["channel"]),
    )
    replica = replication_result([{"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes",
                                   "Seconds_Behind_Master": "12"}])
    snapshot = Snapshot(target="t")
    map_to_catalog(catalog, {"replication": [replica]}, snapshot)
    snapshot.raw.update(replica.raw)
    apply_derivations(catalog, snapshot, {"heartbeat": SourceResult(values={"heartbeat_lag_seconds": lag})})
    assert snapshot.values["replica_slave_lag_seconds"] == legacy
    # The per-channel Seconds_Behind_Source series stays as the server printed it.
    assert snapshot.series["replica_seconds_behind_source"] == {labels_of(channel=""): 12}


@pytest.mark.parametrize("server, expected", [
    (MARIADB_10_11, "SHOW ALL SLAVES STATUS"),
    (MYSQL_5_7, "SHOW SLAVE STATUS"),
    (MYSQL_8_0_36, "SHOW REPLICA STATUS"),
])
def test_replica_status_statement(server, expected):
    assert replica_status_statement(server) == expected


@pytest.mark.parametrize("server, expected", [
    (MARIADB_10_11, "SHOW MASTER STATUS"),
    (MYSQL_8_0_36, "SHOW MASTER STATUS"),
    (MYSQL_8_4, "SHOW BINARY LOG STATUS"),
])
def test_binlog_status_statement(server, expected):
    assert status_statement(server) == expected


@pytest.mark.parametrize("server, expected", [
    (MARIADB_10_11, "SHOW REPLICA HOSTS"),
    (MARIADB_10_4, "SHOW SLAVE HOSTS"),
    (MYSQL_5_7, "SHOW SLAVE HOSTS"),
    (MYSQL_8_4, "SHOW REPLICAS"),
])
def test_slave_hosts_statement(server, expected):
    assert slave_hosts_statement(server) == expected


def test_innodb_metrics_enabled_column_differs():
    assert metrics_statement(MARIADB_10_11).endswith("WHERE ENABLED = 1")
    assert metrics_statement(MYSQL_8_0_36).endswith("WHERE STATUS = 'enabled'")


def test_grant_hints_follow_the_server():
    classes = scraper_classes()
    replication = classes["replication"]()
    assert replication.privilege_hint(MARIADB_10_11, "") == "SLAVE MONITOR"
    assert replication.privilege_hint(MARIADB_10_4, "") == "REPLICATION CLIENT"
    assert replication.privilege_hint(MYSQL_8_4, "") == "REPLICATION CLIENT"
    perf_schema = classes["perf_schema_memory"]()
    assert perf_schema.unsupported_reason(MARIADB_10_4) and not perf_schema.unsupported_reason(MARIADB_10_11)


def test_heartbeat_statement_quotes_identifiers():
    statement = HeartbeatOptions(database="percona", table="heart`beat").statement()
    assert "FROM `percona`.`heart``beat`" in statement


def test_default_sources_leave_out_opt_in_ones():
    defaults = set(default_source_names())
    assert {"global_status", "global_variables", "innodb_status", "replication", "binlog",
            "processlist", "innodb_metrics", "perf_schema_memory", "host", "process"} == defaults
    catalog = small_catalog(metric("status_uptime", "global_status", "Uptime"))
    settings = ConnectionSettings(host="127.0.0.1")
    with_heartbeat = Collector(settings, catalog, heartbeat=HeartbeatOptions(), host_metrics="off")
    assert "heartbeat" in with_heartbeat.source_names and "host" not in with_heartbeat.source_names
    with pytest.raises(ValueError, match="unknown source") as refused:
        Collector(settings, catalog, sources={"global_status", "nonsense"})
    assert "known: global_status, global_variables," in str(refused.value)
    with pytest.raises(ValueError) as typo:
        Collector(settings, catalog, sources={"global_staus", "replicaton"})
    message = str(typo.value)
    assert message.startswith("unknown source(s) global_staus (did you mean global_status?), "
                              "replicaton (did you mean replication?); known: ")
    assert "\n" not in message


def test_local_target_detection():
    assert LocalMysqld(ConnectionSettings(socket="/run/mysqld/mysqld.sock")).target_is_local()
    assert LocalMysqld(ConnectionSettings(host="127.0.0.1")).target_is_local()
    # TEST-NET-1 (RFC 5737) is never an address of this machine.
    remote = LocalMysqld(ConnectionSettings(host="192.0.2.10"))
    assert not remote.target_is_local()
    assert "not on this host" in remote.host_metrics_wanted()
    assert remote.pid({"pid_file": "/nonexistent"}) is None
    forced = LocalMysqld(ConnectionSettings(host="192.0.2.10"), mode="on")
    assert forced.host_metrics_wanted() is None
    assert forced.pid({}) is None  # never a local mysqld that happens to run for a remote target


def test_a_pid_file_naming_some_other_process_is_not_trusted():
    # The pid of this test run: alive, but not a mysqld/mariadbd.
    assert _confirmed(os.getpid(), None, 3306) is None


def test_a_mysqld_that_exits_while_being_found_is_no_process(monkeypatch):
    # The pid was confirmed, then the process exited before its start time was read: that is
    # "no local mysqld" (source not_local), not an exception counted as a parse failure.
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    monkeypatch.setattr("mysql_snmp.agents.sources.local_mysqld._confirmed", lambda pid, datadir, port: child.pid)
    local = LocalMysqld(ConnectionSettings(socket="/run/mysqld/mysqld.sock"))
    assert local.pid({"pid_file": "/nonexistent.pid"}) is None


class _FakeCursor:
    def __init__(self, answers):
        self.answers, self.description, self.rows = answers, None, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, statement):
        answer = self.answers(statement)
        if isinstance(answer, Exception):
            raise answer
        columns, self.rows = answer
        self.description = [(c,) for c in columns] or None

    def fetchall(self):
        return self.rows


class _FakeConnection:
    def __init__(self, answers):
        self.answers = answers

    def cursor(self):
        return _FakeCursor(self.answers)

    def thread_id(self):
        return 1

    def close(self):
        pass


def test_a_statement_over_the_read_timeout_fails_its_source_not_the_collection():
    # On MySQL, max_execution_time does not stop SHOW statements; pymysql's read_timeout then
    # closes the socket ("Lost connection ... (timed out)").  The server is still up: that source
    # fails with reason timeout, the others keep their values, the next statement reconnects.
    import pymysql

    connects = []

    def answers(statement):
        if statement.startswith("SELECT @@version"):
            return ("@@version", "@@version_comment"), [("8.0.36", "MySQL Community Server - GPL")]
        if statement.startswith("SET "):
            return (), []
        if statement == "SHOW ENGINE INNODB STATUS":
            return pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query (timed out)")
        if statement == "SHOW GLOBAL STATUS":
            return ("Variable_name", "Value"), [("Uptime", "42")]
        if statement == "SHOW REPLICA STATUS":
            return ("Channel_Name",), []
        raise AssertionError(statement)

    def connector(**kwargs):
        connects.append(kwargs)
        return _FakeConnection(answers)

    settings = ConnectionSettings(host="192.0.2.10")
    catalog = small_catalog(metric("status_uptime", "global_status", "Uptime"))
    connection = MySQLConnection(settings, connector=connector)
    collector = Collector(settings, catalog, sources={"global_status", "innodb_status", "replication"}, host_metrics="off",
                          connection=connection)
    snapshot = collector.collect()
    assert snapshot.up and snapshot.values["status_uptime"] == 42
    assert snapshot.sources["global_status"].ok and snapshot.sources["replication"].ok
    innodb = snapshot.sources["innodb_status"]
    assert not innodb.ok and innodb.reason == "timeout" and "timed out" in innodb.error
    assert len(connects) == 2  # the timed-out connection was dropped and a new one opened
