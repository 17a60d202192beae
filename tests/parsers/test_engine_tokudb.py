"""SHOW ENGINE TOKUDB STATUS lines as mysqld_exporter names them.

No server here has TokuDB (MariaDB dropped it in 10.6, Percona in 8.0.28): the rows below
are lines of the engine's documented output (Percona Server 5.7 / PerconaFT), with the
kinds of Status it prints: counters, seconds, sizes, dates, versions and sentences.
"""

import pytest

from mysql_snmp.parsers.engine_tokudb import tokudb_metric_name, tokudb_status_rows


@pytest.mark.parametrize("description, name", [
    ("loader: number of calls to loader->close() that failed", "loader_number_of_calls_to_loader_close_that_failed"),
    ("ft: promotion: stopped anyway, after locking the child", "ft_promotion_stopped_anyway_after_locking_the_child"),
    ("ft: basement nodes deserialized with fixed-keysize", "ft_basement_nodes_deserialized_with_fixed_keysize"),
    ("memory: number of bytes used (requested + overhead)", "memory_number_of_bytes_used_requested_and_overhead"),
    ("ft: uncompressed / compressed bytes written (overall)", "ft_uncompressed_and_compressed_bytes_written_overall"),
    ("period, in ms, that recovery log is automatically fsynced",
     "period_in_ms_that_recovery_log_is_automatically_fsynced"),
    ("le: max committed xr", "le_max_committed_xr"),
    ("cachetable: size current", "cachetable_size_current"),
    ("indexer: number of calls to indexer->build() succeeded", "indexer_number_of_calls_to_indexer_build_succeeded"),
])
def test_names_as_upstream_sanitises_them(description, name):
    assert tokudb_metric_name(description) == name


ROWS = [
    ("disk free space", "more than 10 percent of total file system space"),
    ("time of environment creation", "Thu Apr 13 20:15:02 2017"),
    ("time of engine startup", "Mon Apr 17 14:24:08 2017"),
    ("db opens", "6574"),
    ("num open dbs now", "23"),
    ("period, in ms, that recovery log is automatically fsynced", "0"),
    ("dictionary multi inserts", "48202335"),
    ("le: max committed xr", "12"),
    ("checkpoint: period", "60"),
    ("checkpoint: last checkpoint began", "Thu Apr 20 16:28:03 2017"),
    ("checkpoint: last complete checkpoint LSN", "1123574583"),
    ("memory: mallocator version", "3.6.0-0-g46c0196a0d4d2b7e8d3a0c6d4c1e9c6a7d2b5f10"),
    ("memory: number of bytes used (requested + overhead)", "1572864000"),
    ("locktree: time spent ending the STO early (seconds)", "9115.904484"),
    ("ft: uncompressed / compressed bytes written (overall)", "2.9e+10"),
    ("filesystem: most recent disk full", "Thu Jan  1 00:00:00 1970"),
    ("filesystem: ENOSPC redzone state", "0"),
]


def test_numeric_lines_only():
    named = tokudb_status_rows([{"Type": "TokuDB", "Name": name, "Status": status} for name, status in ROWS])
    assert {r.key: r.value for r in named} == {
        "db_opens": 6574.0,
        "num_open_dbs_now": 23.0,
        "period_in_ms_that_recovery_log_is_automatically_fsynced": 0.0,
        "dictionary_multi_inserts": 48202335.0,
        "le_max_committed_xr": 12.0,
        "checkpoint_period": 60.0,
        "checkpoint_last_complete_checkpoint_lsn": 1123574583.0,
        "memory_number_of_bytes_used_requested_and_overhead": 1572864000.0,
        "locktree_time_spent_ending_the_sto_early_seconds": 9115.904484,
        "ft_uncompressed_and_compressed_bytes_written_overall": 2.9e10,
        "filesystem_enospc_redzone_state": 0.0,
    }
    assert all(r.labels == () and not r.counter for r in named)


def test_a_row_without_name_or_status_is_refused_in_one_line():
    with pytest.raises(ValueError, match="TokuDB status row 0: needs Name and Status columns"):
        tokudb_status_rows([{"Type": "TokuDB", "Value": "1"}])
