"""mysqld_exporter-compatible families built from real captures in ../shared.

Everything goes through the projection the catalog declares (agents/exporter/projection.py),
fed as the sources feed it: global status and variables as parsed, typed rows; replica status,
INNODB_METRICS and the processlist as the named values their parsers make of the rows.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter import projection
from mysql_snmp.agents.exporter.encoding import encode
from mysql_snmp.agents.exporter.families import catalog_families
from mysql_snmp.agents.collection import map_to_catalog
from mysql_snmp.agents.snapshot import Snapshot
from mysql_snmp.agents.sources import SourceResult
from mysql_snmp.parsers.perf_schema_memory import memory_series
from mysql_snmp.parsers.engine_tokudb import tokudb_status_rows
from mysql_snmp.parsers.innodb_metrics import innodb_metric_rows
from mysql_snmp.parsers.processlist import upstream_processlist_rows
from mysql_snmp.parsers.replication import legacy_replication_name, upstream_channel_rows
from mysql_snmp.parsers.slave_hosts import replica_host_series
from mysql_snmp.agents.sources.global_status import GlobalStatus
from mysql_snmp.parsers.status import parse_status_rows, sample_number
from mysql_snmp.parsers.userstat import client_statistics_series
from mysql_snmp.parsers.tabular import parse_table_text
from mysql_snmp.parsers.values import typed

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
LIVE = SHARED / "fixtures" / "live" / "mariadb-10.11"
STATUS = SHARED / "fixtures" / "status"


def rows(path: Path) -> list[dict]:
    if not SHARED.is_dir():
        pytest.skip("../shared absent: captures of a real MariaDB are not available")
    return parse_table_text(path.read_text())


def name_values(path: Path) -> dict[str, str | None]:
    return {row["Variable_name"]: row["Value"] for row in rows(path)}


def status_families(status: dict) -> list:
    parsed = GlobalStatus().refine(parse_status_rows(status.items()))
    return (projection.rows_families(load_catalog(), "global_status", parsed)
            + projection.status_info_families(parsed))


def variables_families(variables: dict) -> list:
    parsed = parse_status_rows(variables.items())
    return (projection.rows_families(load_catalog(), "global_variables", parsed)
            + projection.variables_info_families(parsed))


def memory_families(table: list[dict]) -> list:
    """The catalog's perf_schema_memory families, as the exporter serves them by default."""
    series = memory_series({k.lower(): v for k, v in row.items()} for row in table)
    snapshot = Snapshot(target="capture", up=True)
    map_to_catalog(load_catalog(), {"perf_schema_memory": [SourceResult(series=series)]}, snapshot)
    return catalog_families(load_catalog(), snapshot, {"perf_schema_memory"},
                            relabel={"event_name": lambda name: name.removeprefix("memory/")})


def slave_status_families(channels: list[dict]) -> list:
    return projection.named_families(load_catalog(), "replica_status", upstream_channel_rows(channels))


def innodb_metrics_families(table: list[dict]) -> list:
    return projection.named_families(load_catalog(), "innodb_metrics", innodb_metric_rows(table))


def processlist_families(threads: list[dict], min_time: int = 0) -> list:
    return projection.named_families(load_catalog(), "processlist", upstream_processlist_rows(threads, None, min_time))


def status_number(value):
    """A status, variable or column value as the exporter reads it (parsers/status.py)."""
    return sample_number(typed(value))


def samples(families) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}


def family(families, name):
    matches = [f for f in families if f.name == name]
    assert len(matches) == 1, f"{name}: {len(matches)} families"
    return matches[0]


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("text, expected", [
    ("ON", 1.0), ("off", 0.0), ("Yes", 1.0), ("No", 0.0), ("Connecting", 0.0), ("DISABLED", 0.0),
    ("Primary", 1.0), ("non-Primary", 0.0), ("Disconnected", 0.0),
    ("42", 42.0), ("-1", -1.0), ("30.000", 30.0), ("1.5e3", 1500.0),
    ("Nov 29 09:00:00 2036 GMT", 2111562000.0), ("2024-01-02 03:04:05", 1704164645.0),
])
def test_status_number_reads_what_mysqld_exporter_reads(text, expected):
    assert status_number(text) == expected


@pytest.mark.parametrize("text", [None, "", "mysql-bin.000002", "REPEATABLE-READ", "1_000", "AUTH_MASTER"])
def test_status_number_skips_what_mysqld_exporter_skips(text):
    assert status_number(text) is None


def test_typed_values_pass_through():
    assert status_number(7) == 7.0
    assert status_number(2.5) == 2.5
    assert status_number(True) == 1.0


# --------------------------------------------------------------------------- global status


def test_global_status_groups_match_the_capture():
    status = name_values(LIVE / "show-global-status.tsv")
    families = status_families(status)
    got = samples(families)
    assert got[("mysql_global_status_commands_total", (("command", "select"),))] == float(status["Com_select"])
    assert got[("mysql_global_status_handlers_total", (("handler", "read_rnd_next"),))] == \
        float(status["Handler_read_rnd_next"])
    assert got[("mysql_global_status_buffer_pool_pages", (("state", "free"),))] == \
        float(status["Innodb_buffer_pool_pages_free"])
    assert got[("mysql_global_status_buffer_pool_dirty_pages", ())] == float(status["Innodb_buffer_pool_pages_dirty"])
    assert got[("mysql_global_status_buffer_pool_page_changes_total", (("operation", "flushed"),))] == \
        float(status["Innodb_buffer_pool_pages_flushed"])
    assert got[("mysql_global_status_connection_errors_total", (("error", "max_connections"),))] == \
        float(status["Connection_errors_max_connections"])
    assert got[("mysql_global_status_uptime", ())] == float(status["Uptime"])
    # ON/OFF and Galera words are numbers; free text and file names are not exported.
    assert got[("mysql_global_status_innodb_have_punch_hole", ())] == 1.0
    names = {name for name, _ in got}
    # Galera is off on this server: none of the wsrep_* rows MariaDB prints anyway.
    assert "wsrep_ready" in status and not [n for n in names if "wsrep" in n]
    assert "mysql_global_status_binlog_snapshot_file" not in names
    assert "mysql_global_status_innodb_buffer_pool_load_status" not in names
    # The sum of the page states is dropped, as mysqld_exporter does.
    assert ("mysql_global_status_buffer_pool_pages", (("state", "total"),)) not in got
    assert ("mysql_global_status_buffer_pool_page_changes_total", (("operation", "total"),)) not in got


def test_innodb_row_operations_on_mysql_8():
    # MariaDB 10.11 no longer prints Innodb_rows_*; MySQL 8.0 does.
    status = name_values(STATUS / "netdata-go.d.plugin" / "netdata-go.d.plugin-mysql-v8.0.30-global_status.txt")
    got = samples(status_families(status))
    for operation in ("read", "inserted", "updated", "deleted"):
        assert got[("mysql_global_status_innodb_row_ops_total", (("operation", operation),))] == \
            float(status[f"Innodb_rows_{operation}"])


def test_global_status_types():
    families = status_families(name_values(LIVE / "show-global-status.tsv"))
    assert family(families, "mysql_global_status_commands").type == "counter"
    assert family(families, "mysql_global_status_buffer_pool_pages").type == "gauge"
    assert family(families, "mysql_global_status_uptime").type == "unknown"  # "untyped" on the wire


def test_performance_schema_lost_is_labelled():
    status = name_values(LIVE / "show-global-status.tsv")
    lost = {k: v for k, v in status.items() if k.lower().startswith("performance_schema_") and v is not None}
    assert lost, "the capture has Performance_schema_*_lost rows"
    got = samples(status_families(status))
    for key, value in lost.items():
        label = key.lower().removeprefix("performance_schema_")
        assert got[("mysql_global_status_performance_schema_lost_total", (("instrumentation", label),))] == float(value)


# --------------------------------------------------------------------------- global variables


def test_global_variables_gauges_and_info():
    variables = name_values(LIVE / "show-global-variables.tsv")
    families = variables_families(variables)
    got = samples(families)
    assert got[("mysql_global_variables_max_connections", ())] == float(variables["max_connections"])
    assert got[("mysql_global_variables_innodb_buffer_pool_size", ())] == float(variables["innodb_buffer_pool_size"])
    assert got[("mysql_global_variables_autocommit", ())] == (1.0 if variables["autocommit"] == "ON" else 0.0)
    version = family(families, "mysql_version_info").samples[0]
    assert version.labels == {"innodb_version": variables.get("innodb_version") or "",
                              "version": variables["version"], "version_comment": variables["version_comment"]}
    level = variables.get("transaction_isolation") or variables["tx_isolation"]
    assert got[("mysql_transaction_isolation", (("level", level),))] == 1.0
    assert all(f.type == "gauge" for f in families)


# --------------------------------------------------------------------------- replication


def test_mariadb_multi_source_slave_status():
    channels = rows(STATUS / "netdata-go.d.plugin" / "netdata-go.d.plugin-mariadb-v10.8.4-all_slaves_status_multi_source.txt")
    got = samples(slave_status_families(channels))
    for row in channels:
        labels = (("channel_name", ""), ("connection_name", row["Connection_name"]),
                  ("master_host", row["Master_Host"]), ("master_uuid", ""))
        assert got[("mysql_slave_status_seconds_behind_master", labels)] == float(row["Seconds_Behind_Master"])
        assert got[("mysql_slave_status_slave_io_running", labels)] == 1.0
        assert got[("mysql_slave_status_read_master_log_pos", labels)] == float(row["Read_Master_Log_Pos"])
        # Text columns and NULLs give no sample.
        assert ("mysql_slave_status_master_log_file", labels) not in got
        assert ("mysql_slave_status_sql_remaining_delay", labels) not in got


def test_mysql_8_replica_status_also_has_the_old_names():
    channels = rows(STATUS / "netdata-go.d.plugin" / "netdata-go.d.plugin-mysql-v8.0.30-replica_status_multi_source.txt")
    got = samples(slave_status_families(channels))
    for row in channels:
        labels = (("channel_name", row["Channel_Name"]), ("connection_name", ""),
                  ("master_host", row["Source_Host"]), ("master_uuid", row["Master_UUID"]))
        lag = float(row["Seconds_Behind_Source"])
        assert got[("mysql_slave_status_seconds_behind_source", labels)] == lag
        assert got[("mysql_slave_status_seconds_behind_master", labels)] == lag
        assert got[("mysql_slave_status_slave_sql_running", labels)] == 1.0
        assert got[("mysql_slave_status_exec_master_log_pos", labels)] == float(row["Exec_Source_Log_Pos"])


def test_null_lag_gives_no_sample_as_upstream():
    row = {"Master_Host": "db1", "Slave_SQL_Running": "No", "Seconds_Behind_Master": None, "Last_Errno": "0",
           "SQL_Remaining_Delay": None}
    got = samples(slave_status_families([row]))
    labels = (("channel_name", ""), ("connection_name", ""), ("master_host", "db1"), ("master_uuid", ""))
    assert ("mysql_slave_status_seconds_behind_master", labels) not in got
    assert got[("mysql_slave_status_slave_sql_running", labels)] == 0.0
    assert ("mysql_slave_status_sql_remaining_delay", labels) not in got


def test_null_lag_on_8_4_gives_no_sample_under_either_name():
    row = {"Source_Host": "db1", "Replica_SQL_Running": "No", "Seconds_Behind_Source": None}
    got = samples(slave_status_families([row]))
    labels = (("channel_name", ""), ("connection_name", ""), ("master_host", "db1"), ("master_uuid", ""))
    assert ("mysql_slave_status_seconds_behind_source", labels) not in got
    assert ("mysql_slave_status_seconds_behind_master", labels) not in got
    assert got[("mysql_slave_status_slave_sql_running", labels)] == 0.0


@pytest.mark.parametrize("column, legacy", [
    ("Seconds_Behind_Source", "seconds_behind_master"), ("Replica_SQL_Running", "slave_sql_running"),
    ("Relay_Source_Log_File", "relay_master_log_file"), ("Get_Source_public_key", "get_master_public_key"),
    ("Last_Errno", "last_errno"),
])
def test_legacy_replication_name(column, legacy):
    assert legacy_replication_name(column) == legacy


# --------------------------------------------------------------------------- information_schema, perf_schema, binlog


def test_innodb_metrics_enabled_rows_only():
    table = rows(LIVE / "information_schema-innodb_metrics.tsv")
    families = innodb_metrics_families(table)
    got = samples(families)
    by_name = {r["NAME"]: r for r in table}
    pages = by_name["buffer_pool_pages_free"]
    assert got[("mysql_info_schema_innodb_metrics_buffer_pool_pages", (("state", "free"),))] == float(pages["COUNT"])
    assert got[("mysql_info_schema_innodb_metrics_buffer_pool_dirty_pages", ())] == \
        float(by_name["buffer_pool_pages_dirty"]["COUNT"])
    reads = by_name["buffer_pool_reads"]
    assert reads["TYPE"] == "status_counter" and reads["ENABLED"] == "1"
    assert got[("mysql_info_schema_innodb_metrics_buffer_buffer_pool_reads_total", ())] == float(reads["COUNT"])
    # Case is kept, as mysqld_exporter keeps it.
    flushed = by_name["buffer_LRU_batch_flush_total_pages"]
    assert got[("mysql_info_schema_innodb_metrics_buffer_buffer_LRU_batch_flush_total_pages_total", ())] == \
        float(flushed["COUNT"])
    deadlocks = by_name["lock_deadlocks"]
    assert deadlocks["TYPE"] == "value"
    assert got[("mysql_info_schema_innodb_metrics_lock_lock_deadlocks", ())] == float(deadlocks["COUNT"])
    disabled = by_name["lock_rec_lock_waits"]
    assert disabled["ENABLED"] == "0"
    assert not any("lock_rec_lock_waits" in name for name, _ in got)
    enabled = sum(1 for r in table if r["ENABLED"] == "1")
    total_rows = sum(1 for r in table if r["ENABLED"] == "1" and r["NAME"] == "buffer_pool_pages_total")
    assert len(got) == enabled - total_rows


def test_memory_events_strip_the_prefix():
    table = rows(LIVE / "performance_schema-memory_summary_global_by_event_name-innodb.tsv")
    got = samples(memory_families(table))
    mem0mem = next(r for r in table if r["EVENT_NAME"] == "memory/innodb/mem0mem")
    labels = (("event_name", "innodb/mem0mem"),)
    assert got[("mysql_perf_schema_memory_events_alloc_bytes_total", labels)] == float(mem0mem["SUM_NUMBER_OF_BYTES_ALLOC"])
    assert got[("mysql_perf_schema_memory_events_free_bytes_total", labels)] == float(mem0mem["SUM_NUMBER_OF_BYTES_FREE"])
    assert got[("mysql_perf_schema_memory_events_used_bytes", labels)] == float(mem0mem["CURRENT_NUMBER_OF_BYTES_USED"])


def test_processlist_groups_and_sanitises():
    threads = [
        {"id": 1, "user": "app", "host": "10.0.0.5:51234", "command": "Query", "time": 3, "state": "Sending data"},
        {"id": 2, "user": "app", "host": "10.0.0.5:51240", "command": "Sleep", "time": 10, "state": ""},
        {"id": 3, "user": "system user", "host": "", "command": "Daemon", "time": 0, "state": "InnoDB purge worker"},
    ]
    got = samples(processlist_families(threads))
    assert got[("mysql_info_schema_processlist_threads", (("command", "query"), ("state", "sending_data")))] == 1
    assert got[("mysql_info_schema_processlist_seconds", (("command", "sleep"), ("state", "unknown")))] == 10
    assert got[("mysql_info_schema_processlist_processes_by_host", (("client_host", "10.0.0.5"),))] == 2
    assert got[("mysql_info_schema_processlist_processes_by_host", (("client_host", "unknown"),))] == 1
    assert got[("mysql_info_schema_processlist_processes_by_user", (("mysql_user", "app"),))] == 2
    only_old = samples(processlist_families(threads, min_time=5))
    assert ("mysql_info_schema_processlist_threads", (("command", "query"), ("state", "sending_data"))) not in only_old


def test_tokudb_lines_untyped_under_upstream_names():
    lines = [("db opens", "6574"), ("locktree: time spent ending the STO early (seconds)", "9115.904484"),
             ("memory: mallocator version", "3.6.0-0-g46c0196"), ("time of engine startup", "Mon Apr 17 14:24:08 2017"),
             ("cachetable: evictions, 10% of misses", "3"),  # '%' survives upstream's rule: made '_' here
             ("db opens", "1")]  # a line printed twice: served once, the first
    named = tokudb_status_rows([{"Type": "TokuDB", "Name": name, "Status": status} for name, status in lines])
    families = projection.named_families(load_catalog(), "engine_tokudb_status", named)
    assert {f.name: f.type for f in families} == {
        "mysql_engine_tokudb_db_opens": "unknown",
        "mysql_engine_tokudb_locktree_time_spent_ending_the_sto_early_seconds": "unknown",
        "mysql_engine_tokudb_cachetable_evictions_10__of_misses": "unknown"}
    assert samples(families) == {
        ("mysql_engine_tokudb_db_opens", ()): 6574.0,
        ("mysql_engine_tokudb_locktree_time_spent_ending_the_sto_early_seconds", ()): 9115.904484,
        ("mysql_engine_tokudb_cachetable_evictions_10__of_misses", ()): 3.0}
    assert family(families, "mysql_engine_tokudb_db_opens").documentation == \
        "One SHOW ENGINE TOKUDB STATUS line under its own name, untyped."


def test_userstat_columns_the_catalog_does_not_list_are_untyped_under_upstream_names():
    row = {"CLIENT": "10.0.0.1", "TOTAL_CONNECTIONS": 3, "KEY_READ_HITS": 7}
    series = client_statistics_series([row])
    families = projection.unlisted_series_families(load_catalog(), "client_statistics", series)
    assert [(f.name, f.type) for f in families] == [("mysql_info_schema_client_statistics_key_read_hits", "unknown")]
    assert samples(families) == {("mysql_info_schema_client_statistics_key_read_hits", (("client", "10.0.0.1"),)): 7}


# --------------------------------------------------------------------------- exposition


def test_promtool_accepts_the_compatible_families(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    families = (
        status_families(name_values(LIVE / "show-global-status.tsv"))
        + variables_families(name_values(LIVE / "show-global-variables.tsv"))
        + innodb_metrics_families(rows(LIVE / "information_schema-innodb_metrics.tsv"))
        + memory_families(rows(LIVE / "performance_schema-memory_summary_global_by_event_name-innodb.tsv"))
    )
    text, _ = encode(families, "text/plain;version=0.0.4")
    result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True)
    # Exit 3 is promtool's naming lint (mysql_global_variables_max_error_count "should not
    # have _count"): those names are mysqld_exporter's and must stay.  Exit 1 is a parse error.
    assert result.returncode in (0, 3), result.stderr.decode()[-2000:]
    problems = [line for line in result.stderr.decode().splitlines() if line]
    naming = ("should not have", "should not include type", "use base unit")
    assert [p for p in problems if not any(n in p for n in naming)] == []


@pytest.mark.parametrize("row", [
    {"Server_id": 2, "Host": "replica1", "Port": 3306, "Master_id": 1},  # MariaDB SHOW REPLICA HOSTS
    {"Server_Id": 2, "Host": "replica1", "Port": 3306, "Source_Id": 1,
     "Replica_UUID": "6151d979-1ef3-11ed-a509-0242ac120003"},  # MySQL 8 SHOW REPLICAS
])
def test_slave_hosts_info_under_mysqld_exporter_name(row):
    snapshot = Snapshot(target="capture", up=True)
    map_to_catalog(load_catalog(), {"slave_hosts": [SourceResult(series=replica_host_series([row]))]}, snapshot)
    (info,) = catalog_families(load_catalog(), snapshot, {"slave_hosts"})
    assert info.name == "mysql_heartbeat_mysql_slave_hosts_info"
    (sample,) = info.samples
    assert sample.value == 1
    assert sample.labels == {"server_id": "2", "slave_host": "replica1", "port": "3306", "master_id": "1",
                             "slave_uuid": row.get("Replica_UUID", "")}

def test_engine_innodb_status_gauges():
    values = {"innodb_row_queries_inside": 2, "innodb_row_queries_queued": 0, "innodb_row_read_views_open": 5}
    got = samples(projection.value_families(load_catalog(), values))
    assert got == {("mysql_engine_innodb_queries_inside_innodb", ()): 2.0,
                   ("mysql_engine_innodb_queries_in_queue", ()): 0.0,
                   ("mysql_engine_innodb_read_views_open_inside_innodb", ()): 5.0}
    # A value the parser did not find is absent, not 0.
    assert projection.value_families(load_catalog(), {}) == []
