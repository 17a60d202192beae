"""legacy_innodb_values: the original mysql-snmp InnoDB keys, with the documented fixes.

Expected numbers are read by hand from the corpus files (the comment quotes the line).
"""
from __future__ import annotations

import csv

import pytest

from mysql_snmp.parsers.innodb import parse_innodb_status
from mysql_snmp.parsers.innodb_legacy import legacy_innodb_values
from tests.parsers.test_innodb import SHARED, read_corpus

EXTRA_KEYS = {"unpurged_txns", "last_checkpoint", "queries_inside", "queries_queued", "innodb_io_pattern_memory"}


def legacy(name: str) -> dict[str, int]:
    return legacy_innodb_values(read_corpus(name))


def test_keys_are_the_original_innodb_keys():
    tsv = SHARED / "reference" / "mysql-snmp-legacy-objects.tsv"
    if not tsv.is_file():
        pytest.skip(f"../shared absent: {tsv}")
    rows = csv.DictReader((line for line in tsv.open() if not line.startswith("#")), delimiter="\t")
    original = {row["legacy_key"] for row in rows if row["source"].startswith("InnoDB status")}
    assert len(original) == 60
    assert set(legacy("innotop-innodb-status-001.txt")) == original | EXTRA_KEYS


def test_mysql_50_values():
    values = legacy("percona-toolkit-lib-samples-is001.txt")
    expected = {
        "innodb_transactions": 769, "unpurged_txns": 769,  # "Trx id counter 0 769", "Purge done ... < 0 0"
        "spin_waits": 0 + 14 + 0,  # "Mutex spin waits 0, ...", "RW-shared spins 14, OS waits 7; RW-excl spins 0, OS waits 0"
        "spin_rounds": 2, "os_waits": 0 + 7 + 0,
        "current_transactions": 1, "read_views": 1,
        "file_writes": 38, "file_fsyncs": 16, "log_writes": 11,
        "ibuf_used_cells": 1, "ibuf_free_cells": 0, "ibuf_cell_count": 2,  # "Ibuf: size 1, free list len 0, seg size 2,"
        "hash_index_cells_total": 17393, "hash_index_cells_used": 0,
        "log_bytes_written": 43655, "log_bytes_flushed": 43655, "last_checkpoint": 43655,
        "unflushed_log": 0, "uncheckpointed_bytes": 0,
        "total_mem_alloc": 20634452, "additional_pool_alloc": 675584,
        "pool_size": 512, "free_pages": 333, "database_pages": 178, "pages_created": 178, "pages_written": 189,
        # absent from 5.0 text: 0, as the original printed
        "dictionary_cache_memory": 0, "adaptive_hash_memory": 0, "thread_hash_memory": 0, "innodb_sem_waits": 0,
    }
    assert {key: values[key] for key in expected} == expected


def test_fix_a_one_token_trx_ids_are_hex_only_before_56():
    assert legacy("innotop-innodb-status-001.txt")["innodb_transactions"] == 0x908  # Percona 5.1: "Trx id counter 908"
    assert legacy("innotop-innodb-status-008.txt")["innodb_transactions"] == 2822  # MySQL 5.6: "Trx id counter 2822"
    mariadb = legacy("show-engine-innodb-status-fresh.txt")  # MariaDB 10.11: "Trx id counter 17"
    assert mariadb["innodb_transactions"] == 17  # the original read 0x17 = 23
    assert mariadb["unpurged_txns"] == 17  # "Purge done for trx's n:o < 0 undo n:o < 0"


def test_fix_b_dictionary_cache_from_dictionary_memory_without_percona_block():
    assert legacy("innotop-innodb-status-010.txt")["dictionary_cache_memory"] == 433020  # "Dictionary memory allocated 433020"
    # with the Percona block: "    Dictionary cache    25456106        (24903856 + 552250)"
    assert legacy("innotop-innodb-status-002.txt")["dictionary_cache_memory"] == 25456106


def test_fix_c_pending_normal_aio_from_the_totals_or_per_thread_sums():
    block = "--------\nFILE I/O\n--------\n{}\n"
    v55 = legacy_innodb_values(block.format("Pending normal aio reads: 3 [1, 0, 2, 0] , aio writes: 5 [0, 5, 0, 0] ,"))
    assert (v55["pending_normal_aio_reads"], v55["pending_normal_aio_writes"]) == (3, 5)  # the original: 3 and 2
    v80 = legacy_innodb_values(block.format("Pending normal aio reads: [1, 0, 2, 0] , aio writes: [0, 5, 0, 0] ,"))
    assert (v80["pending_normal_aio_reads"], v80["pending_normal_aio_writes"]) == (3, 5)  # the original: 1 and 0
    # real 5.1 XtraDB line 921: "Pending normal aio reads: 6, aio writes: 0,"
    assert legacy("percona-toolkit-pt-mysql-summary-innodb-status.001.txt")["pending_normal_aio_reads"] == 6
    # real 5.1 built-in line 275: "Pending normal aio reads: 48, aio writes: 0,"
    assert legacy("percona-toolkit-pt-mysql-summary-innodb-status.004.txt")["pending_normal_aio_reads"] == 48


def test_split_rw_lines_are_summed():
    values = legacy("innotop-innodb-status-002.txt")
    # "Mutex spin waits 86, rounds 623, OS waits 19" / "RW-shared spins 68, rounds 1578, OS waits 51"
    # / "RW-excl spins 6, rounds 332, OS waits 10"
    assert (values["spin_waits"], values["spin_rounds"], values["os_waits"]) == (160, 2533, 80)
    assert values["ibuf_inserts"] == 194  # " insert 194, delete mark 0, delete 0" under "merged operations:"


def test_buffer_pool_totals_not_overwritten_by_instances():
    values = legacy("innotop-innodb-status-003.txt")
    assert values["pool_size"] == 1310715  # totals "Buffer pool size 1310715", not the last "---BUFFER POOL 9"
    assert values["pages_read"] == 26577530  # "Pages read 26577530, created 1212937, written 165977879"


def test_mariadb_lock_wait_in_microseconds_and_ahi_sum():
    values = legacy("show-engine-innodb-status-deadlock-fkerror-lockwait.txt")
    assert values["innodb_lock_wait_secs"] == 4  # "TRX HAS BEEN WAITING 4007707 us"
    assert values["locked_transactions"] == 1
    assert values["innodb_tables_in_use"] == 1  # FK/deadlock blocks' "mysql tables in use" lines are history
    assert values["hash_index_cells_total"] == 8 * 34679  # eight "Hash table size 34679" partitions


def test_fake_headers_do_not_reach_legacy_values():
    values = legacy("show-engine-innodb-status-deadlock-with-fake-section-headers-in-query.txt")
    assert values["innodb_transactions"] == 51 and values["history_list"] == 0


def test_absent_values_are_zero_and_status_objects_accepted():
    status = parse_innodb_status(read_corpus("datadog-integrations-core-innodb_status_mariadb_105.txt"))
    values = legacy_innodb_values(status)
    assert "innodb_ahi_hash_table_size_cells" not in status.values
    assert values["hash_index_cells_total"] == 0 and values["additional_pool_alloc"] == 0
    assert values["total_mem_alloc"] == 167772160  # (m) "Total large memory allocated 167772160"
    assert values["rows_read"] == 4256957713  # "Number of rows inserted 365032, updated 0, deleted 26940, read 4256957713"
    assert all(isinstance(v, int) for v in values.values())


def test_fix_l_pending_log_writes_from_renamed_line():
    # MySQL 5.6: "0 pending log writes, 0 pending chkp writes"; 5.7+/MariaDB: "1 pending log flushes, ..."
    assert legacy("datadog-integrations-core-innodb_status_mariadb_105.txt")["pending_log_writes"] == 1
    assert legacy("innotop-innodb-status-009.txt")["pending_log_writes"] == 0


def test_fix_j_lock_waits_are_summed():
    text = ("------------\nTRANSACTIONS\n------------\nTrx id counter 3000\n"
            "LIST OF TRANSACTIONS FOR EACH SESSION:\n"
            "---TRANSACTION 2998, ACTIVE 40 sec starting index read\n"
            "LOCK WAIT 2 lock struct(s), heap size 1136, 1 row lock(s)\n"
            "------- TRX HAS BEEN WAITING 20 SEC FOR THIS LOCK TO BE GRANTED:\n"
            "---TRANSACTION 2999, ACTIVE 15 sec starting index read\n"
            "LOCK WAIT 2 lock struct(s), heap size 1136, 1 row lock(s)\n"
            "------- TRX HAS BEEN WAITING 12 SEC FOR THIS LOCK TO BE GRANTED:\n")
    values = legacy_innodb_values(text)
    assert values["innodb_lock_wait_secs"] == 32  # the original printed the last one, 12
    assert (values["locked_transactions"], values["innodb_lock_structs"]) == (2, 4)
    assert parse_innodb_status(text).values["innodb_trx_lock_wait_seconds_max"] == 20


def test_fix_m_total_memory_from_the_57_line():
    assert legacy("innotop-innodb-status-010.txt")["total_mem_alloc"] == 137428992  # "Total large memory allocated 137428992"
    assert legacy("innotop-innodb-status-010.txt")["additional_pool_alloc"] == 0  # no longer printed
