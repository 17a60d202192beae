"""parse_innodb_status on the shared corpus: every file parses, and values read by hand from the text.

Each expected number below is copied from the file (the comment quotes the line it comes from).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mysql_snmp.parsers.innodb import InnodbStatus, parse_innodb_status

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
INNODB_DIR = SHARED / "fixtures" / "innodb"
LIVE_DIR = SHARED / "fixtures" / "live" / "mariadb-10.11"


def corpus_files() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(INNODB_DIR.glob("*/*.txt")) + sorted(LIVE_DIR.glob("show-engine-innodb-status-*.txt"))


def read_corpus(name: str) -> str:
    """A corpus file by name, searched under fixtures/innodb/*/ and fixtures/live/mariadb-10.11/."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED} holds the InnoDB status corpus")
    for path in (*INNODB_DIR.glob(f"*/{name}"), LIVE_DIR / name):
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    raise FileNotFoundError(name)


def parse(name: str) -> InnodbStatus:
    return parse_innodb_status(read_corpus(name))


def test_corpus_is_present():
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED}")
    assert len(corpus_files()) == 49


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_file_parses(path: Path):
    status = parse_innodb_status(path.read_text(encoding="utf-8", errors="replace"))
    assert status.sections, "no section found"
    for name, value in status.values.items():
        assert name.startswith("innodb_")
        assert isinstance(value, (int, float, str))
    for pool in status.buffer_pools.values():
        assert all(name.startswith("innodb_pool_") for name in pool)


def expect(values: dict, expected: dict) -> None:
    got = {name: values.get(name, "ABSENT") for name in expected}
    assert got == expected


def test_mysql_50_two_word_ids_and_lsn():
    status = parse("percona-toolkit-lib-samples-is001.txt")
    expect(status.values, {
        "innodb_monitor_timestamp_seconds": 1246972718,  # "090707 13:18:38 INNODB MONITOR OUTPUT" (2009-07-07 UTC)
        "innodb_monitor_averages_interval_seconds": 37,  # "Per second averages calculated from the last 37 seconds"
        "innodb_sem_os_wait_array_reservations": 7,  # "OS WAIT ARRAY INFO: reservation count 7, signal count 7"
        "innodb_sem_mutex_spin_rounds": 2,  # "Mutex spin waits 0, rounds 2, OS waits 0"
        "innodb_sem_rw_shared_spin_waits": 14,  # "RW-shared spins 14, OS waits 7; RW-excl spins 0, OS waits 0"
        "innodb_sem_rw_shared_os_waits": 7,
        "innodb_sem_rw_shared_spin_rounds": "ABSENT",  # the one-line form prints no rounds
        "innodb_sem_spin_waits": 14, "innodb_sem_spin_rounds": 2, "innodb_sem_os_waits": 7,
        "innodb_trx_id_counter": 769,  # "Trx id counter 0 769"
        "innodb_trx_purged_up_to": 0,  # "Purge done for trx's n:o < 0 0 undo n:o < 0 0"
        "innodb_trx_unpurged": 769,
        "innodb_trx_current": 1,  # one "---TRANSACTION 0 0, not started" line
        "innodb_io_os_file_writes": 38,  # "0 OS file reads, 38 OS file writes, 16 OS fsyncs"
        "innodb_io_os_fsyncs": 16,
        "innodb_io_writes_per_second": 0.14,  # "0.00 reads/s, 0 avg bytes/read, 0.14 writes/s, 0.08 fsyncs/s"
        "innodb_ahi_hash_table_size_cells": 17393,  # "Hash table size 17393, used cells 0, node heap has 1 buffer(s)"
        "innodb_ahi_used_cells": 0, "innodb_ahi_node_heap_buffers": 1, "innodb_ahi_partitions": 1,
        "innodb_log_sequence_number_bytes": 43655,  # "Log sequence number 0 43655"
        "innodb_log_ios_done": 11,  # "11 log i/o's done, 0.03 log i/o's/second"
        "innodb_mem_total_allocated_bytes": 20634452,  # "Total memory allocated 20634452; in additional pool allocated 675584"
        "innodb_mem_additional_pool_bytes": 675584,
        "innodb_mem_dictionary_bytes": "ABSENT",  # 5.0 prints no "Dictionary memory allocated"
        "innodb_bp_size_pages": 512, "innodb_bp_free_pages": 333,  # "Buffer pool size   512", "Free buffers       333"
        "innodb_bp_pages_created": 178, "innodb_bp_pages_written": 189,  # "Pages read 0, created 178, written 189"
        "innodb_bp_hit_rate_ratio": 1.0,  # "Buffer pool hit rate 1000 / 1000"
        "innodb_row_read_views_open": 1,  # "1 read views open inside InnoDB"
        "innodb_row_main_thread_state": "waiting for server activity",
        "innodb_bg_master_loops_active": "ABSENT",  # no BACKGROUND THREAD section in 5.0
    })


def test_mysql_51_builtin_hi_lo():
    status = parse("percona-toolkit-pt-mysql-summary-temp003-innodb-status.txt")
    expect(status.values, {
        "innodb_sem_mutex_spin_rounds": 140,  # "Mutex spin waits 0, rounds 140, OS waits 7"
        "innodb_sem_os_waits": 7,
        "innodb_trx_id_counter": 769,  # "Trx id counter 0 769"
        "innodb_log_sequence_number_bytes": 44233,  # "Log sequence number 0 44233"
        "innodb_ibuf_old_inserts": 0, "innodb_ibuf_old_merged_records": 0,  # "0 inserts, 0 merged recs, 0 merges"
        "innodb_ahi_hash_table_size_cells": 69257,  # "Hash table size 69257, node heap has 1 buffer(s)"
        "innodb_ahi_used_cells": "ABSENT",
        "innodb_mem_dictionary_bytes": 20888,  # "Dictionary memory allocated 20888"
        "innodb_bp_size_pages": 1024, "innodb_bp_free_pages": 845,
    })
    big = parse("percona-toolkit-pt-mysql-summary-innodb-status.004.txt").values
    # "Trx id counter 0 94997420" / "Purge done for trx's n:o < 0 94888010 undo n:o < 0 0"
    assert big["innodb_trx_id_counter"] == 94997420
    assert big["innodb_trx_unpurged"] == 94997420 - 94888010


def test_percona_51_xtradb_hex_ids_and_internal_hash_tables():
    status = parse("innotop-innodb-status-001.txt")
    expect(status.values, {
        "innodb_monitor_timestamp_seconds": 1283595891,  # "100904 10:24:51 INNODB MONITOR OUTPUT"
        "innodb_bg_master_loops_one_second": 15,  # "srv_master_thread loops: 15 1_second, 15 sleeps, 1 10_second, 6 background, 6 flush"
        "innodb_bg_master_loops_ten_second": 1, "innodb_bg_master_loops_background": 6,
        "innodb_bg_master_log_flush_and_writes": 16,
        "innodb_sem_rw_shared_spin_waits": 4,  # "RW-shared spins 4, OS waits 4; RW-excl spins 0, OS waits 0"
        "innodb_sem_spin_rounds_per_wait_rw_shared": 30.0,
        # "Trx id counter 908": a pre-5.6 header, so hexadecimal
        "innodb_trx_id_counter": 0x908, "innodb_trx_purged_up_to": 0x905, "innodb_trx_unpurged": 3,
        "innodb_trx_history_list_length": 11,
        "innodb_log_max_checkpoint_age_bytes": 7782360,  # "Max checkpoint age    7782360"
        "innodb_log_checkpoint_age_target_bytes": 7539162,
        "innodb_mem_adaptive_hash_index_bytes": 2233316,  # "Adaptive hash index 2233316 	(2212772 + 20544)"
        "innodb_mem_page_hash_bytes": 69556,
        "innodb_mem_dictionary_cache_bytes": 576800,  # "Dictionary cache    576800 	(553912 + 22888)"
        "innodb_mem_dictionary_cache_constant_bytes": 553912,
        "innodb_mem_dictionary_cache_variable_bytes": 22888,
        "innodb_mem_file_system_bytes": 41896, "innodb_mem_lock_system_bytes": 166756,
        "innodb_mem_recovery_system_bytes": 0, "innodb_mem_threads_bytes": 41612,
        "innodb_mem_dictionary_bytes": 22888,
        "innodb_bp_size_bytes": 134201344,  # "Buffer pool size, bytes 134201344"
        "innodb_bp_size_pages": 8191,
        "innodb_row_ops_inserted": 2, "innodb_row_ops_read": 6,  # "Number of rows inserted 2, updated 0, deleted 0, read 6"
        "innodb_trx_lock_structs": 2, "innodb_trx_row_locks": 3,  # "2 lock struct(s), heap size 320, 3 row lock(s)"
    })
    # TRANSACTIONS is printed last by XtraDB
    assert status.sections[-1] == "TRANSACTIONS"


def test_percona_55_hex_and_split_rw_lines():
    status = parse("innotop-innodb-status-002.txt")
    expect(status.values, {
        "innodb_sem_spin_waits": 86 + 68 + 6,  # "Mutex spin waits 86, rounds 623, OS waits 19", RW-shared 68, RW-excl 6
        "innodb_sem_spin_rounds": 623 + 1578 + 332,
        "innodb_sem_os_waits": 19 + 51 + 10,
        "innodb_trx_id_counter": 0x2804F389,  # "Trx id counter 2804F389"
        "innodb_trx_purged_up_to": 0x2804F16D,
        "innodb_trx_history_list_length": 1067,
        "innodb_io_pending_normal_aio_reads": 0,  # "Pending normal aio reads: 0 [0, 0, 0, 0] , aio writes: 0 [0, 0, 0, 0] ,"
        "innodb_ibuf_page_merges": 176,  # "Ibuf: size 1, free list len 19223, seg size 19225, 176 merges"
        "innodb_ibuf_free_list_length_pages": 19223, "innodb_ibuf_segment_size_pages": 19225,
        "innodb_ibuf_ops_merged_inserts": 194,  # " insert 194, delete mark 0, delete 0" after "merged operations:"
        "innodb_ibuf_ops_discarded_inserts": 0,
        "innodb_ibuf_ops_merged_all": 194,
        "innodb_log_sequence_number_bytes": 1577147154821,
        "innodb_log_checkpoint_age_bytes": 1577147154821 - 1577147154244,  # "Last checkpoint at  1577147154244"
        "innodb_mem_dictionary_cache_bytes": 25456106,  # "    Dictionary cache    25456106        (24903856 + 552250)"
        "innodb_bp_size_pages": 383999,
    })


def test_mysql_55_individual_buffer_pools_do_not_overwrite_totals():
    status = parse("innotop-innodb-status-003.txt")
    expect(status.values, {
        "innodb_trx_id_counter": 0x1F69D1888,  # "Trx id counter 1F69D1888"
        "innodb_trx_unpurged": 0x1F69D1888 - 0x1F69D12D8,
        "innodb_bp_size_pages": 1310715,  # "Buffer pool size 1310715" (totals)
        "innodb_bp_free_pages": 2,  # "Free buffers 2"
        "innodb_bp_modified_pages": 37825,
        "innodb_bp_pages_read": 26577530,  # "Pages read 26577530, created 1212937, written 165977879"
        "innodb_log_unflushed_bytes": 14488682912398 - 14488681979708,
    })
    assert len(status.buffer_pools) == 10
    expect(status.buffer_pools["0"], {
        "innodb_pool_size_pages": 131072, "innodb_pool_free_pages": 1, "innodb_pool_modified_pages": 4044,
        "innodb_pool_pages_read": 2694671, "innodb_pool_pages_created": 122120, "innodb_pool_pages_written": 16823308,
    })
    expect(status.buffer_pools["3"], {"innodb_pool_size_pages": 131071, "innodb_pool_modified_pages": 3637})


def test_mysql_56_decimal_ids():
    status = parse("innotop-innodb-status-008.txt")
    expect(status.values, {
        "innodb_monitor_timestamp_seconds": 1371649657,  # "2013-06-19 13:47:37 7f684c638700 INNODB MONITOR OUTPUT"
        "innodb_trx_id_counter": 2822,  # "Trx id counter 2822": decimal on 5.6
        "innodb_trx_unpurged": 0,
        "innodb_trx_purge_state": "running but idle",
        "innodb_trx_history_list_length": 18,
        "innodb_trx_tables_in_use": 0,  # the "mysql tables in use 1" line belongs to the FK error block
        "innodb_fk_error_present": 1, "innodb_deadlock_present": 0,
        "innodb_fk_error_latest_timestamp_seconds": 1371649653,  # "2013-06-19 13:47:33 7f684c638700 Transaction:"
        "innodb_sem_spin_waits": 4 + 3 + 0,
        "innodb_bp_pages_read": 188, "innodb_row_ops_read": 1,
        "innodb_row_main_thread_state": "sleeping",
    })


def test_mysql_57_rw_sx_and_ibuf_operations():
    status = parse("innotop-innodb-status-009.txt")  # a "\\G" capture of 5.7.7
    expect(status.values, {
        "innodb_monitor_timestamp_seconds": 1433857925,  # "2015-06-09 13:52:05 0x7f8ff8aab700 INNODB MONITOR OUTPUT"
        "innodb_monitor_averages_interval_seconds": 27,
        "innodb_bg_master_loops_active": 292405,  # "srv_master_thread loops: 292405 srv_active, 0 srv_shutdown, 6576913 srv_idle"
        "innodb_bg_master_loops_idle": 6576913, "innodb_bg_master_loops_shutdown": 0,
        "innodb_bg_master_log_flush_and_writes": 6869318,
        "innodb_sem_os_wait_array_reservations": 242326408,  # "OS WAIT ARRAY INFO: reservation count 242326408"
        "innodb_sem_os_wait_array_signals": 195748281,
        "innodb_sem_rw_excl_spin_rounds": 85549627786,  # "RW-excl spins 7253812, rounds 85549627786, OS waits 23564"
        "innodb_sem_rw_sx_os_waits": 338,  # "RW-sx spins 342, rounds 10537, OS waits 338"
        "innodb_sem_spin_waits": 0 + 326628200 + 7253812 + 342,
        "innodb_sem_os_waits": 0 + 233780815 + 23564 + 338,
        "innodb_sem_spin_rounds_per_wait_rw_excl": 11793.75,
        "innodb_trx_id_counter": 849068, "innodb_trx_unpurged": 9, "innodb_trx_history_list_length": 2401,
        "innodb_io_os_file_reads": 9733128594,  # "9733128594 OS file reads, 2591643 OS file writes, 1650929 OS fsyncs"
        "innodb_ibuf_page_merges": 56536,  # "Ibuf: size 1, free list len 41, seg size 43, 56536 merges"
        "innodb_ibuf_ops_merged_inserts": 59517,  # " insert 59517, delete mark 11353, delete 711"
        "innodb_ibuf_ops_merged_delete_marks": 11353, "innodb_ibuf_ops_merged_deletes": 711,
        "innodb_ibuf_ops_merged_all": 59517 + 11353 + 711,
        "innodb_ahi_node_heap_buffers": 62,  # "Hash table size 276671, node heap has 62 buffer(s)"
        "innodb_ahi_non_hash_searches_per_second": 0.07,
        "innodb_log_pending_flushes": 0,  # "0 pending log flushes, 0 pending chkp writes"
        "innodb_log_ios_done": 591790,
        "innodb_bp_old_database_pages": 2997,  # "Old database pages 2997"
        "innodb_bp_pages_not_made_young": 37037400168,  # "Pages made young 1302245307, not young 37037400168"
        "innodb_bp_pages_read": 9733136338,
        "innodb_bp_reads_per_second": 1.01,  # "1.01 reads/s, 0.05 creates/s, 0.05 writes/s"
        "innodb_bp_random_read_ahead_per_second": 0.0,
        "innodb_bp_lru_length_pages": 8129,  # "LRU len: 8129, unzip_LRU len: 0"
        "innodb_row_ops_updated": 340319,  # "Number of rows inserted 59188, updated 340319, deleted 12993, read 14288311800"
        "innodb_row_ops_read": 14288311800,
        "innodb_trx_current": 1, "innodb_trx_active": 0,
    })


def test_percona_57_exporter_sample():
    status = parse("mysqld-exporter-collector-engine_innodb_test.go-sample.txt")
    expect(status.values, {
        "innodb_trx_id_counter": 67843,  # "Trx id counter 67843"
        "innodb_trx_unpurged": 67843 - 55764,  # "Purge done for trx's n:o < 55764 undo n:o < 0 state: running but idle"
        "innodb_sem_spin_rounds": 4,  # "RW-shared spins 0, rounds 4, OS waits 2"
        "innodb_ahi_partitions": 8, "innodb_ahi_hash_table_size_cells": 8 * 34673,
        "innodb_log_checkpoint_age_bytes": 37771171 - 37771162,
        "innodb_mem_total_large_allocated_bytes": 139722752,
        "innodb_mem_page_hash_bytes": 139112,  # "    Page hash           139112 (buffer pool 0 only)"
        "innodb_mem_dictionary_cache_bytes": 922589,  # "    Dictionary cache    922589 	(554768 + 367821)"
        "innodb_mem_dictionary_cache_variable_bytes": 367821,
        "innodb_mem_dictionary_bytes": 367821,
        "innodb_bp_size_bytes": 0,  # "Buffer pool size, bytes 0"
        "innodb_row_ops_read": 12,
    })


def test_mysql_80_eight_ahi_partitions_and_redo_positions():
    status = parse("innotop-innodb-status-010.txt")
    expect(status.values, {
        "innodb_sem_rw_excl_spin_rounds": 60,  # "RW-excl spins 2, rounds 60, OS waits 1"
        "innodb_sem_spin_waits": 2, "innodb_sem_os_waits": 1, "innodb_sem_mutex_spin_waits": "ABSENT",
        "innodb_trx_tables_in_use": 1,  # "mysql tables in use 1, locked 1"
        "innodb_io_pending_normal_aio_reads": 0,  # "Pending normal aio reads: [0, 0, 0, 0] , aio writes: [0, 0, 0, 0] ,"
        "innodb_io_pending_ibuf_aio_reads": "ABSENT",  # " ibuf aio reads:, log i/o's:, sync i/o's:"
        "innodb_ahi_partitions": 8,
        "innodb_ahi_hash_table_size_cells": 8 * 34679,  # eight "Hash table size 34679" lines
        "innodb_ahi_node_heap_buffers": 0 + 1 + 3 + 1,
        "innodb_log_buffer_assigned_up_to_bytes": 23102842,  # "Log buffer assigned up to    23102842"
        "innodb_log_checkpoint_age_bytes": 23102842 - 22702156,
        "innodb_mem_total_large_allocated_bytes": 137428992,
        "innodb_mem_total_allocated_bytes": "ABSENT",
        "innodb_row_ops_inserted": 1444, "innodb_row_ops_read": 413711,
    })


def test_mysql_81_debug_semaphore_waits_and_used_cells():
    status = parse("innotop-innodb-status-011.txt")  # a "\G" capture
    expect(status.values, {
        "innodb_monitor_timestamp_seconds": 1692656751,  # "2023-08-21 22:25:51 139784548730624 INNODB MONITOR OUTPUT"
        "innodb_sem_os_wait_array_reservations": 8133,  # "OS WAIT ARRAY INFO: reservation count 8133"
        "innodb_sem_os_wait_array_signals": 6750,
        "innodb_sem_waiting_threads": 9,  # nine "--Thread ... has waited at ... for 0 seconds" lines
        "innodb_sem_wait_time_milliseconds": 0,
        "innodb_ahi_used_cells": 537 + 64,  # "used cells 537" and "used cells 64" among 8 partitions
        "innodb_ahi_node_heap_buffers": 3 + 1,
        "innodb_log_min_file_id": 5, "innodb_log_max_file_id": 6,
        "innodb_log_pages_flushed_up_to_bytes": 19699957,
        "innodb_trx_id_counter": 5163,
    })


def test_mysql_92():
    status = parse("innotop-innodb-status-012.txt")
    expect(status.values, {
        "innodb_trx_id_counter": 6175, "innodb_trx_unpurged": 6175 - 6158,
        "innodb_trx_history_list_length": 297,
        "innodb_log_unflushed_bytes": 21228847 - 21228599,
        "innodb_mem_total_large_allocated_bytes": 0,  # "Total large memory allocated 0"
        "innodb_mem_dictionary_bytes": 850670,
        "innodb_row_ops_read": 1262095,
        "innodb_io_os_file_writes": 8995,
    })


def test_mariadb_105_without_adaptive_hash_index():
    status = parse("datadog-integrations-core-innodb_status_mariadb_105.txt")
    expect(status.values, {
        "innodb_sem_rw_sx_spin_waits": 21,  # "RW-sx spins 21, rounds 130, OS waits 0"
        "innodb_sem_spin_waits": 94 + 5 + 21, "innodb_sem_spin_rounds": 285 + 47 + 130,
        "innodb_trx_id_counter": 63624,  # "Trx id counter 63624" (decimal: MariaDB 10)
        "innodb_trx_tables_in_use": 5 + 2 + 5 + 1 + 5 + 5 + 1,  # the seven "mysql tables in use" lines
        "innodb_trx_tables_locked": 5 + 2 + 5 + 0 + 5 + 5 + 0,
        "innodb_io_pending_fsyncs_log": 1,  # "Pending flushes (fsync) log: 1; buffer pool: 0"
        "innodb_log_pending_flushes": 1,  # "1 pending log flushes, 0 pending chkp writes"
        "innodb_log_pending_writes": "ABSENT",
        "innodb_bp_dirty_pages_percent": 40.184,  # "Percent of dirty pages(LRU & free pages): 40.184"
        "innodb_row_ops_read": 4256957713,
        "innodb_row_main_thread_state": "sleeping",  # "Process ID=0, Main thread ID=0, state: sleeping"
        # AHI disabled: no "Hash table size" line, so no AHI size (not a made-up 0)
        "innodb_ahi_hash_table_size_cells": "ABSENT", "innodb_ahi_partitions": "ABSENT",
    })


def test_mariadb_106_and_111():
    v106 = parse("datadog-integrations-core-innodb_status_mariadb_106.txt").values
    assert v106["innodb_trx_id_counter"] == 106555  # "Trx id counter 106555"
    assert v106["innodb_trx_unpurged"] == 106555 - 106508
    v111 = parse("datadog-integrations-core-innodb_status_mariadb_111.txt").values
    assert v111["innodb_trx_id_counter"] == 125588
    assert v111["innodb_io_pending_fsyncs"] == 0  # "Pending flushes (fsync): 0"
    assert "innodb_ibuf_size_pages" not in v111  # 11.1 has no insert buffer section


def test_mariadb_1011_lock_wait_in_microseconds_and_blocks():
    status = parse("show-engine-innodb-status-deadlock-fkerror-lockwait.txt")
    expect(status.values, {
        "innodb_trx_id_counter": 43,
        "innodb_trx_lock_wait": 1,
        "innodb_trx_lock_wait_seconds_max": 4.007707,  # "------- TRX HAS BEEN WAITING 4007707 us FOR THIS LOCK TO BE GRANTED:"
        "innodb_trx_tables_in_use": 1,  # only line 95 is in TRANSACTIONS (19, 43, 66 are FK/deadlock)
        "innodb_fk_error_latest_timestamp_seconds": 1795939934,  # "2026-11-29 08:12:14 0x7f2e480eb6c0 Transaction:"
        "innodb_deadlock_latest_timestamp_seconds": 1795939936,  # "2026-11-29 08:12:16 0x7f2e480a06c0"
        "innodb_ahi_hash_table_size_cells": 8 * 34679,
        "innodb_log_checkpoint_age_bytes": 54626 - 44760,
        "innodb_bp_dirty_pages_percent": 0.641,
        "innodb_status_truncated": 0,
    })


def test_fake_section_headers_inside_deadlock_query_are_ignored():
    status = parse("show-engine-innodb-status-deadlock-with-fake-section-headers-in-query.txt")
    values = status.values
    assert values["innodb_trx_id_counter"] == 51  # the real "Trx id counter 51", not 123456789
    assert values["innodb_trx_history_list_length"] == 0  # not 424242
    assert status.truncated is False
    assert status.sections.count("TRANSACTIONS") == 1
    assert status.sections[-1] == "ROW OPERATIONS"
    assert values["innodb_log_sequence_number_bytes"] == 56132


def test_truncated_1mb_output():
    status = parse("show-engine-innodb-status-truncated-1MB.txt")
    assert status.truncated is True  # "... truncated..." marker in the middle
    assert status.values["innodb_status_truncated"] == 1
    assert status.values["innodb_trx_id_counter"] == 34697  # "Trx id counter 34697"
    assert status.values["innodb_log_sequence_number_bytes"] == 71749953
    assert status.sections[-1] == "ROW OPERATIONS"


def test_percona_51_cut_without_end_line():
    status = parse("percona-toolkit-pt-mysql-summary-innodb-status.002.txt")
    assert status.truncated is True
    assert status.values["innodb_trx_id_counter"] == 0x7C6E3DD1  # "Trx id counter 7C6E3DD1"


def test_percona_51_semaphore_waits():
    values = parse("percona-toolkit-pt-mysql-summary-innodb-status.001.txt").values
    text = read_corpus("percona-toolkit-pt-mysql-summary-innodb-status.001.txt")
    waits = [line for line in text.splitlines() if line.startswith("--Thread ") and " has waited at " in line]
    assert values["innodb_sem_waiting_threads"] == len(waits) > 0
    seconds = sum(int(float(line.rsplit(" for ", 1)[1].split()[0])) for line in waits)
    assert values["innodb_sem_wait_time_milliseconds"] == seconds * 1000


def test_vertical_form_matches_plain_capture_of_same_server():
    plain = parse("show-engine-innodb-status-fresh.txt")
    vertical = parse("show-engine-innodb-status-fresh.G.txt")
    assert vertical.sections == plain.sections
    assert vertical.values["innodb_trx_id_counter"] == plain.values["innodb_trx_id_counter"] == 17
    assert vertical.values["innodb_bp_size_pages"] == 8112


def test_fragment_with_only_a_deadlock_block():
    status = parse("percona-toolkit-pt-deadlock-logger-bug_1195034.txt")
    assert status.sections == ("LATEST DETECTED DEADLOCK",)
    assert status.truncated is True
    # "130624 17:39:24TOO DEEP OR LONG SEARCH ..." (2013-06-24)
    assert status.values["innodb_deadlock_latest_timestamp_seconds"] == 1372095564
    assert "innodb_trx_id_counter" not in status.values


def test_empty_and_garbage_text():
    assert parse_innodb_status("").values == {}
    assert parse_innodb_status("not innodb\n").sections == ()
    assert parse_innodb_status("------------\nTRANSACTIONS\n------------\nTrx id counter x\n").values.get(
        "innodb_trx_id_counter") is None


def test_quoted_statement_that_never_ends_falls_back_to_headers():
    filler = "".join(f"-- comment line {n} {'x' * 80}\n" for n in range(120))
    text = ("------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n"
            "2026-11-29 08:12:51 0x7f\nMySQL thread id 1, query id 2 localhost root\n"
            "------------\nTRANSACTIONS\n------------\nTrx id counter 99\n" + filler +
            "----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n")
    status = parse_innodb_status(text)
    assert status.values["innodb_trx_id_counter"] == 99
    assert status.truncated is False


def test_names_never_equal_a_lowercased_show_status_variable():
    """innodb_rows_read is SHOW STATUS's Innodb_rows_read; the parser's names must not collide with any."""
    status_files = [*(SHARED / "fixtures" / "status").glob("**/*global_status*"),
                    *LIVE_DIR.glob("show-global-status*")]
    if not status_files:
        pytest.skip(f"../shared absent: {SHARED}")
    status_names = set()
    for path in status_files:
        for line in path.read_text(errors="replace").splitlines():
            words = line.replace("|", " ").split()
            if words and words[0].lower().startswith("innodb_"):
                status_names.add(words[0].lower())
    assert "innodb_rows_read" in status_names and len(status_names) > 100
    produced = set()
    for path in corpus_files():
        status = parse_innodb_status(path.read_text(encoding="utf-8", errors="replace"))
        produced.update(status.values)
        for pool in status.buffer_pools.values():
            produced.update(pool)
    assert not produced & status_names


def test_headerless_55_text_is_still_read_as_hex():
    text = read_corpus("innotop-innodb-status-005.txt")  # Percona 5.5: "Trx id counter 506"
    body = text[text.index("-----------------\nBACKGROUND THREAD"):]  # without the "yymmdd" header line
    assert parse_innodb_status(body).values["innodb_trx_id_counter"] == 0x506
    assert parse_innodb_status(text).values["innodb_trx_id_counter"] == 0x506


def test_statement_without_end_marker_in_short_complete_text_keeps_sections():
    # An unknown block layout: nothing after the quoted statement ends it, and the rest is short.
    text = ("------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n"
            "2026-11-29 08:12:51 0x7f\nMySQL thread id 1, query id 2 localhost root\nUPDATE t SET v=1\n"
            "------------\nTRANSACTIONS\n------------\nTrx id counter 99\nHistory list length 7\n"
            + "".join(f"---TRANSACTION {n}, not started\n" for n in range(40)) +
            "---\nLOG\n---\nLog sequence number 5000\n"
            "----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n")
    status = parse_innodb_status(text)
    assert status.values["innodb_trx_id_counter"] == 99
    assert status.values["innodb_trx_current"] == 40
    assert status.values["innodb_log_sequence_number_bytes"] == 5000
    assert status.sections == ("LATEST DETECTED DEADLOCK", "TRANSACTIONS", "LOG")
    assert status.truncated is False


def test_text_cut_right_after_a_fake_end_inside_a_statement_yields_no_fake_values():
    text = read_corpus("show-engine-innodb-status-deadlock-with-fake-section-headers-in-query.txt")
    fake_end = text.index("============================\n*/ WHERE id=1")
    for cut in (fake_end, fake_end + len("============================\n")):
        values = parse_innodb_status(text[:cut]).values
        assert "innodb_trx_id_counter" not in values and "innodb_trx_history_list_length" not in values


def test_mysql_client_batch_output_with_escaped_newlines():
    plain = read_corpus("show-engine-innodb-status-deadlock-fkerror-lockwait.txt")
    escaped = plain.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    batch = f"Type\tName\tStatus\nInnoDB\t\t{escaped}\n"  # what `mysql -e 'SHOW ENGINE INNODB STATUS'` prints
    assert parse_innodb_status(batch) == parse_innodb_status(plain)


def test_non_ascii_digits_are_not_numbers():
    # str.isdigit() is true for "¹" (int() then raises) and for "٣" (int() reads 3): neither is
    # something the server prints, so a garbled line must give no value, not a crash or a number.
    text = (
        "=====================================\n"
        "¹41027 ٣:28:45 INNODB MONITOR OUTPUT\n"
        "=====================================\n"
        "------------\nTRANSACTIONS\n------------\n"
        "Trx id counter ٣٤\n"
        "History list length ¹7\n"
        "----------------------------\nEND OF INNODB MONITOR OUTPUT\n"
        "============================\n"
    )
    parsed = parse_innodb_status(text)
    assert "innodb_trx_id_counter" not in parsed.values
    assert "innodb_history_list_length" not in parsed.values
    assert not any(name.endswith("timestamp_seconds") for name in parsed.values)


def test_float_tokens_must_be_plain_ascii_decimals():
    from mysql_snmp.parsers.innodb_numbers import to_float

    assert to_float("0.57,") == 0.57 and to_float("12") == 12.0
    assert to_float("1\u0662") is None  # Arabic-Indic digit two: float() would read 12.0
    assert to_float("1_000") is None  # float() would read 1000.0


def test_a_whole_transaction_list_without_a_waiting_transaction_is_a_lock_wait_of_0():
    # Every waiting transaction prints "TRX HAS BEEN WAITING"; none in a complete list is a real 0.
    for name in ("show-engine-innodb-status-fresh.txt", "datadog-integrations-core-innodb_status_mysql_80.txt",
                 "innotop-innodb-status-001.txt"):
        values = parse(name).values
        assert "TRX HAS BEEN WAITING" not in read_corpus(name)
        assert values["innodb_trx_lock_wait_seconds_sum"] == values["innodb_trx_lock_wait_seconds_max"] == 0, name
    # A list the server cut short proves nothing: absent, not 0.
    text = read_corpus("show-engine-innodb-status-fresh.txt")
    cut = text[: text.index("LIST OF TRANSACTIONS FOR EACH SESSION") + 60]
    assert "innodb_trx_lock_wait_seconds_sum" not in parse_innodb_status(cut).values
    assert parse("datadog-integrations-core-innodb_status_mysql_84.txt").values["innodb_trx_lock_wait_seconds_sum"] == 23
