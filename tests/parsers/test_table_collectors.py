"""Parsers of mysqld_exporter's table collectors, on rows shaped as pymysql returns them."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from mysql_snmp.parsers.auto_increment import auto_increment_series
from mysql_snmp.parsers.info_schema_tables import info_schema_tables_series
from mysql_snmp.parsers.innodb_cmp import innodb_cmp_series
from mysql_snmp.parsers.innodb_cmpmem import innodb_cmpmem_series
from mysql_snmp.parsers.innodb_tablespaces import innodb_tablespaces_series
from mysql_snmp.parsers.mysql_user import PRIVILEGE_COLUMNS, mysql_user_series
from mysql_snmp.parsers.perf_schema_files import file_events_series, file_instances_series
from mysql_snmp.parsers.perf_schema_replication import (
    applier_workers_series,
    group_member_stats_values,
    group_members_series,
    timestamp_seconds,
)
from mysql_snmp.parsers.perf_schema_statements import events_statements_series, events_statements_sum_values
from mysql_snmp.parsers.perf_schema_waits import (
    events_waits_series,
    index_io_waits_series,
    table_io_waits_series,
    table_lock_waits_series,
)
from mysql_snmp.parsers.query_response_time import response_time_histogram
from mysql_snmp.parsers.replica_host import replica_host_series
from mysql_snmp.parsers.sys_user_summary import sys_user_summary_series
from mysql_snmp.parsers.table_rows import Field, series_from_rows
from mysql_snmp.parsers.table_statistics import schema_statistics_series, table_statistics_series
from mysql_snmp.parsers.userstat import client_statistics_series, user_statistics_series


def labels(**pairs: str) -> tuple:
    return tuple(sorted(pairs.items()))


def test_null_and_text_values_give_no_sample_and_later_rows_win():
    rows = [{"K": "a", "V": None}, {"K": "b", "V": "n/a"}, {"K": "c", "V": Decimal("2.5")}, {"K": "c", "V": 3}]
    series = series_from_rows(rows, {"k": "k"}, (Field("x", "v", 2.0),))
    assert series == {"x": {labels(k="c"): 6.0}}
    assert series_from_rows([], {"k": "k"}, (Field("x", "v"),)) == {}


def test_innodb_cmp_and_cmpmem():
    cmp = innodb_cmp_series([{"page_size": 8192, "compress_ops": 10, "compress_ops_ok": 9, "compress_time": 2,
                              "uncompress_ops": 4, "uncompress_time": 1}])
    assert cmp["innodb_cmp_compress_ops_ok"] == {labels(page_size="8192"): 9}
    assert cmp["innodb_cmp_uncompress_time_seconds"] == {labels(page_size="8192"): 1}
    mem = innodb_cmpmem_series([{"page_size": 1024, "buffer_pool_instance": 0, "pages_used": 5, "pages_free": 2,
                                 "relocation_ops": 7, "relocation_time": 1500}])
    key = labels(page_size="1024", buffer_pool="0")
    assert mem["innodb_cmpmem_pages_used"] == {key: 5}
    assert mem["innodb_cmpmem_relocation_time_seconds"] == {key: pytest.approx(1.5)}  # upstream's / 1000


def test_auto_increment_and_tables():
    series = auto_increment_series([{"table_schema": "shop", "table_name": "t", "column_name": "id",
                                     "auto_increment": 7, "max_int": 65535.0}])
    assert series["auto_increment_column_max"] == {labels(schema="shop", table="t", column="id"): 65535.0}
    tables = info_schema_tables_series([{
        "TABLE_SCHEMA": "shop", "TABLE_NAME": "t", "TABLE_TYPE": "BASE TABLE", "ENGINE": "InnoDB", "VERSION": 10,
        "ROW_FORMAT": "Dynamic", "TABLE_ROWS": 6, "DATA_LENGTH": 16384, "INDEX_LENGTH": 16384, "DATA_FREE": 0,
        "CREATE_OPTIONS": ""}])
    assert tables["info_schema_table_rows"] == {labels(schema="shop", table="t"): 6}
    assert tables["info_schema_table_size_bytes"][labels(schema="shop", table="t", component="index_length")] == 16384
    assert tables["info_schema_table_version"] == {
        labels(schema="shop", table="t", type="BASE TABLE", engine="InnoDB", row_format="Dynamic",
               create_options=""): 10}


def test_tablespaces():
    series = innodb_tablespaces_series([{"SPACE": 5, "NAME": "shop/t", "FILE_FORMAT": "NONE", "ROW_FORMAT": "Dynamic",
                                         "SPACE_TYPE": "", "FILE_SIZE": 98304, "ALLOCATED_SIZE": 65536}])
    assert series["innodb_tablespace_space_info"] == {
        labels(tablespace_name="shop/t", file_format="NONE", row_format="Dynamic", space_type=""): 5}
    assert series["innodb_tablespace_allocated_size_bytes"] == {labels(tablespace_name="shop/t"): 65536}


def test_userstat_tables():
    row = {"USER": "app", "ROWS_READ": 5, "BUSY_TIME": 0.25, "KEY_READ_MISSES": Decimal(2), "NOTE": "text",
           "ODD_COLUMN": None}
    # Every numeric column, keyed as printed but lower-cased: the catalog's source.key names them.
    assert user_statistics_series([row, {"USER": None, "KEY_READ_HITS": "11"}]) == {
        "rows_read": {labels(user="app"): 5}, "busy_time": {labels(user="app"): 0.25},
        "key_read_misses": {labels(user="app"): 2}, "key_read_hits": {labels(user=""): 11}}
    clients = client_statistics_series([{"CLIENT": "10.0.0.1", "TOTAL_CONNECTIONS": 3}])
    assert clients == {"total_connections": {labels(client="10.0.0.1"): 3}}
    tables = table_statistics_series([{"TABLE_SCHEMA": "s", "TABLE_NAME": "t", "ROWS_READ": 4, "ROWS_CHANGED": 1,
                                       "ROWS_CHANGED_X_INDEXES": 2}])
    assert tables["table_statistics_rows_changed_x_indexes"] == {labels(schema="s", table="t"): 2}
    schemas = schema_statistics_series([{"TABLE_SCHEMA": "s", "ROWS_READ": Decimal(9), "ROWS_CHANGED": Decimal(0),
                                         "ROWS_CHANGED_X_INDEXES": Decimal(0)}])
    assert schemas["schema_statistics_rows_read"] == {labels(schema="s"): 9}


def test_replica_host_scales_to_seconds():
    series = replica_host_series([{"SERVER_ID": "db-1", "ROLE": "reader", "CPU": 12.5,
                                   "MASTER_SLAVE_LATENCY_IN_MICROSECONDS": 2500000,
                                   "REPLICA_LAG_IN_MILLISECONDS": 30.0, "LOG_STREAM_SPEED_IN_KiB_PER_SECOND": 4.0,
                                   "CURRENT_REPLAY_LATENCY_IN_MICROSECONDS": 500}])
    key = labels(server_id="db-1", role="reader")
    assert series["replica_host_replica_latency_seconds"] == {key: pytest.approx(2.5)}
    assert series["replica_host_lag_seconds"] == {key: pytest.approx(0.03)}
    assert series["replica_host_replay_latency_seconds"] == {key: pytest.approx(0.0005)}


def test_sys_user_summary_timers_are_picoseconds():
    series = sys_user_summary_series([{"user": "background", "statements": Decimal(0),
                                       "statement_latency": Decimal("8171904000"), "table_scans": Decimal(3),
                                       "file_ios": Decimal(86), "file_io_latency": Decimal("842946480"),
                                       "current_connections": Decimal(1), "total_connections": Decimal(5),
                                       "unique_hosts": 1, "current_memory": Decimal(3812672),
                                       "total_memory_allocated": Decimal(6190688)}])
    assert series["sys_user_statement_latency_seconds"] == {labels(user="background"): pytest.approx(0.008171904)}
    assert series["sys_user_memory_allocated_bytes"] == {labels(user="background"): 6190688}


def test_mysql_user_limits_and_privileges():
    row = {"user": "app", "host": "10.%", "max_questions": 7, "max_updates": 8, "max_connections": 9,
           "max_user_connections": 3, **{column: "N" for column in PRIVILEGE_COLUMNS}}
    row["Select_priv"] = "Y"
    row["Process_priv"] = b"Y"
    row["Super_priv"] = "?"
    account = labels(mysql_user="app", hostmask="10.%")
    without = mysql_user_series([row])
    assert set(without) == {"mysql_user_max_questions", "mysql_user_max_updates", "mysql_user_max_connections",
                            "mysql_user_max_user_connections"}
    series = mysql_user_series([row], privileges=True)
    assert series["mysql_user_select_priv"] == {account: 1}
    assert series["mysql_user_process_priv"] == {account: 1}
    assert series["mysql_user_insert_priv"] == {account: 0}
    assert "mysql_user_super_priv" not in series  # neither Y nor N: no sample
    assert series["mysql_user_max_user_connections"] == {account: 3}


def test_table_and_index_io_waits():
    row = {"OBJECT_SCHEMA": "s", "OBJECT_NAME": "t", "COUNT_FETCH": 5, "COUNT_INSERT": 2, "COUNT_UPDATE": 1,
           "COUNT_DELETE": 0, "SUM_TIMER_FETCH": 3 * 10**12, "SUM_TIMER_INSERT": 10**6, "SUM_TIMER_UPDATE": 0,
           "SUM_TIMER_DELETE": 0}
    table = table_io_waits_series([row])
    assert table["perf_schema_table_io_waits"][labels(schema="s", name="t", operation="insert")] == 2
    assert table["perf_schema_table_io_waits_seconds"][labels(schema="s", name="t", operation="fetch")] == 3.0
    index = index_io_waits_series([{**row, "INDEX_NAME": "PRIMARY"}, {**row, "INDEX_NAME": None}])
    counts = index["perf_schema_index_io_waits"]
    assert labels(schema="s", name="t", index="NONE", operation="insert") in counts
    assert labels(schema="s", name="t", index="PRIMARY", operation="insert") not in counts
    assert counts[labels(schema="s", name="t", index="PRIMARY", operation="update")] == 1
    assert len(counts) == 4 + 3


def test_table_lock_waits():
    row = {"OBJECT_SCHEMA": "s", "OBJECT_NAME": "t", "COUNT_READ_NORMAL": 4, "COUNT_READ_EXTERNAL": 6,
           "COUNT_WRITE_EXTERNAL": 1, "SUM_TIMER_WRITE_EXTERNAL": 2 * 10**12}
    series = table_lock_waits_series([row])
    assert series["perf_schema_sql_lock_waits"] == {labels(schema="s", name="t", operation="read_normal"): 4}
    assert series["perf_schema_external_lock_waits"] == {labels(schema="s", name="t", operation="read"): 6,
                                                         labels(schema="s", name="t", operation="write"): 1}
    assert series["perf_schema_external_lock_waits_seconds"] == {labels(schema="s", name="t", operation="write"): 2.0}


def test_events_waits_and_files():
    waits = events_waits_series([{"EVENT_NAME": "wait/io/table/sql/handler", "COUNT_STAR": 10,
                                  "SUM_TIMER_WAIT": 5 * 10**11}])
    assert waits["perf_schema_events_waits_seconds"] == {labels(event_name="wait/io/table/sql/handler"): 0.5}
    files = file_events_series([{"EVENT_NAME": "wait/io/file/innodb/innodb_data_file", "COUNT_READ": 3,
                                 "SUM_TIMER_READ": 10**12, "SUM_NUMBER_OF_BYTES_READ": 49152, "COUNT_WRITE": 1,
                                 "SUM_TIMER_WRITE": 0, "SUM_NUMBER_OF_BYTES_WRITE": 16384, "COUNT_MISC": 9,
                                 "SUM_TIMER_MISC": 0}])
    event = "wait/io/file/innodb/innodb_data_file"
    assert files["perf_schema_file_events"][labels(event_name=event, mode="misc")] == 9
    assert files["perf_schema_file_events_bytes"] == {labels(event_name=event, mode="read"): 49152,
                                                      labels(event_name=event, mode="write"): 16384}
    instances = file_instances_series([
        {"FILE_NAME": "/var/lib/mysql/ibdata1", "EVENT_NAME": event, "COUNT_READ": 2, "COUNT_WRITE": 1,
         "SUM_NUMBER_OF_BYTES_READ": 32768, "SUM_NUMBER_OF_BYTES_WRITE": 16384},
        {"FILE_NAME": "/usr/share/mysql/charsets/Index.xml", "EVENT_NAME": "wait/io/file/mysys/charset",
         "COUNT_READ": 1, "COUNT_WRITE": 0, "SUM_NUMBER_OF_BYTES_READ": 100, "SUM_NUMBER_OF_BYTES_WRITE": 0},
    ], remove_prefix="/var/lib/mysql/")
    assert instances["perf_schema_file_instances_bytes"][labels(file_name="ibdata1", event_name=event,
                                                                mode="read")] == 32768
    assert labels(file_name="/usr/share/mysql/charsets/Index.xml", event_name="wait/io/file/mysys/charset",
                  mode="write") in instances["perf_schema_file_instances"]


def test_events_statements_by_digest_and_summed():
    row = {"SCHEMA_NAME": None, "DIGEST": "ab12", "DIGEST_TEXT": "SELECT ?", "COUNT_STAR": 4,
           "SUM_TIMER_WAIT": 2 * 10**12, "SUM_LOCK_TIME": 10**9, "SUM_ERRORS": 0, "SUM_WARNINGS": 1,
           "SUM_ROWS_AFFECTED": 0, "SUM_ROWS_SENT": 4, "SUM_ROWS_EXAMINED": 8, "SUM_CREATED_TMP_DISK_TABLES": 0,
           "SUM_CREATED_TMP_TABLES": 1, "SUM_SORT_MERGE_PASSES": 0, "SUM_SORT_ROWS": 0, "SUM_NO_INDEX_USED": 4}
    series = events_statements_series([row])
    key = labels(schema="NONE", digest="ab12", digest_text="SELECT ?")
    assert series["perf_schema_events_statements"] == {key: 4}
    assert series["perf_schema_events_statements_seconds"] == {key: 2.0}
    assert series["perf_schema_events_statements_lock_time_seconds"] == {key: 0.001}
    assert "perf_schema_events_statements_cpu_time_seconds" not in series  # MySQL 8.0.28+ only
    sums = events_statements_sum_values([{"COUNT_STAR": Decimal(243), "SUM_TIMER_WAIT": Decimal(1.5e12),
                                          "SUM_LOCK_TIME": Decimal(62454000000), "SUM_ERRORS": Decimal(2),
                                          "SUM_SELECT_SCAN": None}])
    assert sums == {"perf_schema_events_statements_sum_count": 243,
                    "perf_schema_events_statements_sum_timer_wait_seconds": 1.5,
                    "perf_schema_events_statements_sum_lock_time_picoseconds": 62454000000,
                    "perf_schema_events_statements_sum_errors": 2}


def test_query_response_time_buckets_are_cumulative():
    rows = [{"TIME": "      0.000001", "COUNT": 0, "TOTAL": "      0.000000"},
            {"TIME": "      0.000010", "COUNT": 2, "TOTAL": "      0.000015"},
            {"TIME": "      0.000100", "COUNT": 7, "TOTAL": "      0.000300"},
            {"TIME": "1000000.000000", "COUNT": 1, "TOTAL": "      2.000000"},
            {"TIME": "TOO LONG", "COUNT": 3, "TOTAL": "TOO LONG"}]
    histogram = response_time_histogram(rows)
    assert histogram.count == 13
    assert histogram.sum == pytest.approx(2.000315)
    assert histogram.buckets == ((1e-06, 0), (1e-05, 2), (0.0001, 9), (1e6, 10))
    assert response_time_histogram([]).count == 0


def test_group_replication_and_applier_workers():
    members = group_members_series([{"CHANNEL_NAME": "group_replication_applier", "MEMBER_ID": "u1",
                                     "MEMBER_HOST": "db1", "MEMBER_PORT": 3306, "MEMBER_STATE": "ONLINE",
                                     "MEMBER_ROLE": "PRIMARY", "MEMBER_VERSION": "8.0.36"}])
    (key,) = members["group_replication_member_info"]
    assert dict(key)["member_state"] == "ONLINE" and dict(key)["member_communication_stack"] == ""
    assert group_member_stats_values([{"MEMBER_ID": "u1", "COUNT_TRANSACTIONS_IN_QUEUE": 2,
                                       "COUNT_CONFLICTS_DETECTED": 1}]) == {
        "group_replication_transactions_in_queue": 2, "group_replication_conflicts_detected": 1}
    moment = datetime(2024, 5, 1, 12, 0, 0, 500000)
    workers = applier_workers_series([{"CHANNEL_NAME": "", "WORKER_ID": 1,
                                       "LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP": moment,
                                       "APPLYING_TRANSACTION_START_APPLY_TIMESTAMP": "0000-00-00 00:00:00.000000"}])
    key = labels(channel_name="", member_id="1")
    expected = moment.replace(tzinfo=timezone.utc).timestamp()
    assert workers["applier_worker_last_applied_transaction_original_commit_timestamp_seconds"] == {key: expected}
    assert workers["applier_worker_applying_transaction_start_apply_timestamp_seconds"] == {key: 0.0}
    assert timestamp_seconds("2024-05-01 12:00:00.500000") == expected
    assert timestamp_seconds(None) == 0.0 and timestamp_seconds("garbage") == 0.0
    assert not math.isnan(timestamp_seconds(moment))


def test_rocksdb_perf_context_keeps_the_known_counters():
    from mysql_snmp.parsers.rocksdb_perf_context import rocksdb_perf_context_series

    rows = [{"TABLE_SCHEMA": "r", "TABLE_NAME": "t", "PARTITION_NAME": "", "STAT_TYPE": "IO_BYTES_READ", "VALUE": 512},
            {"TABLE_SCHEMA": "r", "TABLE_NAME": "t", "PARTITION_NAME": "p1", "STAT_TYPE": "BLOCK_READ_COUNT",
             "VALUE": 3},
            {"TABLE_SCHEMA": "r", "TABLE_NAME": "t", "PARTITION_NAME": "", "STAT_TYPE": "BLOCK_READ_TIME", "VALUE": 9},
            {"TABLE_SCHEMA": "r", "TABLE_NAME": "t", "PARTITION_NAME": "", "STAT_TYPE": "KEY_LOCK_WAIT_COUNT",
             "VALUE": None}]
    assert rocksdb_perf_context_series(rows) == {
        "rocksdb_perf_context_io_bytes_read": {labels(schema="r", table="t", part=""): 512},
        "rocksdb_perf_context_block_read_count": {labels(schema="r", table="t", part="p1"): 3},
    }


def test_events_statements_latency_summary_on_mysql_8_0_28():
    from mysql_snmp.parsers.perf_schema_statements import Summary

    row = {"SCHEMA_NAME": "shop", "DIGEST": "cd34", "DIGEST_TEXT": "SELECT ?", "COUNT_STAR": 10,
           "SUM_TIMER_WAIT": 5 * 10**12, "SUM_CPU_TIME": 10**12, "QUANTILE_95": 10**9, "QUANTILE_99": 2 * 10**9,
           "QUANTILE_999": 3 * 10**9}
    series = events_statements_series([row])
    key = labels(schema="shop", digest="cd34", digest_text="SELECT ?")
    assert series["perf_schema_events_statements_cpu_time_seconds"] == {key: 1.0}
    assert series["perf_schema_events_statements_latency_seconds"] == {
        key: Summary(10, 5.0, (("95", 0.001), ("99", 0.002), ("999", 0.003)))}
    without = {k: v for k, v in row.items() if not k.startswith("QUANTILE")}
    assert "perf_schema_events_statements_latency_seconds" not in events_statements_series([without])
