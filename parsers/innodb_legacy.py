"""The original mysql-snmp InnoDB keys, computed from parse_innodb_status.

``mysql-snmp parse innodb-status FILE --legacy-names`` prints these: one integer per key of the
original agent's InnoDB parser (history_list, spin_waits, pool_size, ...), 0 when the text lacks the
value, as the original printed. Each key is the first present of the catalog values listed in
LEGACY_SOURCES; which line and token the original read is the catalog value's definition.

Where the original misread a format, the fixed value is given (each fix is listed in the README,
"InnoDB legacy values"; the comments below say which):

* (a) a one-token `Trx id counter` / purge id is hexadecimal only on servers before 5.6 (5.1 plugin,
  XtraDB, 5.5); 5.6+ and MariaDB 10 print decimal (the original read every one-token id as hex).
* (b) dictionary_cache_memory falls back to `Dictionary memory allocated` when Percona's internal
  hash tables block is absent (the original gave 0).
* (c) pending_normal_aio_reads/writes come from the `Pending normal aio reads: N [..] , aio writes: N
  [..]` totals, or the sum of the per-thread [..] counts when no total is printed (8.0); the
  original read fixed token positions, which are per-thread entries on 5.5+.
* (d) spin_waits / spin_rounds / os_waits sum the mutex line and every RW-shared/RW-excl/RW-sx line
  in both the one-line (5.0/5.1) and the one-line-per-lock (5.5+) forms; the original counted only
  the RW-shared spins and no RW OS waits or rounds on 5.5+.
* (e) hash_index_cells_total / _used are summed over all adaptive hash index partitions (the
  original kept the last partition's line: 1/8 of the AHI on 5.7+).
* (f) ibuf_inserts / ibuf_merged on 5.5+ come from `merged operations` (insert; insert + delete
  mark + delete); the original's pattern had no capture group, so it stored 0.
* (g) innodb_tables_in_use / innodb_locked_tables / locked_transactions / innodb_lock_structs count
  only the TRANSACTIONS list, not transactions quoted in the deadlock / foreign key error blocks.
* (h) pool_size, free_pages, database_pages, modified_pages, pages_read/created/written are the
  totals; the original let each INDIVIDUAL BUFFER POOL INFO instance overwrite them (the last
  pool won), and its `Pages read` pattern also matched `Pages read ahead ...`, zeroing the page
  counters on 5.5+.
* (i) total_mem_alloc / additional_pool_alloc are not zeroed by Percona's later `Total memory
  allocated by read views N` line.
* (j) innodb_lock_wait_secs: MariaDB 10.6+ prints the wait in microseconds (`WAITING 4007707 us`),
  converted to whole seconds; with several waiting transactions, their sum, as in the Percona parser
  the original was translated from (the original's `=` kept whichever wait was printed last).
* (k) every value is read only inside its own section, so SQL quoted in a deadlock / foreign key
  block (which may contain `Trx id counter ...` or whole fake sections) never overrides it.
* (l) pending_log_writes: MySQL 5.7+ and MariaDB 10.5+ renamed the line to `N pending log flushes`
  (the same log_sys counter); the original only knew `pending log writes` and gave 0.
* (m) total_mem_alloc: MySQL 5.7+ and MariaDB 10.2+ print `Total large memory allocated N` instead of
  `Total memory allocated N; in additional pool allocated M` (the additional pool is gone); the
  original only knew the old line and gave 0.
"""
from __future__ import annotations

from .innodb import InnodbStatus, parse_innodb_status

# legacy key -> catalog names, first present wins
LEGACY_SOURCES: dict[str, tuple[str, ...]] = {
    "history_list": ("innodb_trx_history_list_length",),
    "innodb_transactions": ("innodb_trx_id_counter",),  # (a)
    "unpurged_txns": ("innodb_trx_unpurged",),  # (a)
    "read_views": ("innodb_row_read_views_open",),
    "current_transactions": ("innodb_trx_current",),
    "locked_transactions": ("innodb_trx_lock_wait",),  # (g)
    "active_transactions": ("innodb_trx_active",),
    "innodb_lock_structs": ("innodb_trx_lock_structs",),  # (g)
    "innodb_lock_wait_secs": ("innodb_trx_lock_wait_seconds_sum",),  # (j)
    "innodb_tables_in_use": ("innodb_trx_tables_in_use",),  # (g)
    "innodb_locked_tables": ("innodb_trx_tables_locked",),  # (g)
    "pool_size": ("innodb_bp_size_pages",),  # (h)
    "free_pages": ("innodb_bp_free_pages",),  # (h)
    "database_pages": ("innodb_bp_database_pages",),  # (h)
    "modified_pages": ("innodb_bp_modified_pages",),  # (h)
    "pages_read": ("innodb_bp_pages_read",),  # (h)
    "pages_created": ("innodb_bp_pages_created",),  # (h)
    "pages_written": ("innodb_bp_pages_written",),  # (h)
    "file_fsyncs": ("innodb_io_os_fsyncs",),
    "file_reads": ("innodb_io_os_file_reads",),
    "file_writes": ("innodb_io_os_file_writes",),
    "log_writes": ("innodb_log_ios_done",),
    "pending_aio_log_ios": ("innodb_io_pending_log_ios",),
    "pending_aio_sync_ios": ("innodb_io_pending_sync_ios",),
    "pending_buf_pool_flushes": ("innodb_io_pending_fsyncs_buffer_pool",),
    "pending_chkp_writes": ("innodb_log_pending_checkpoint_writes",),
    "pending_ibuf_aio_reads": ("innodb_io_pending_ibuf_aio_reads",),
    "pending_log_flushes": ("innodb_io_pending_fsyncs_log",),
    "pending_log_writes": ("innodb_log_pending_writes", "innodb_log_pending_flushes"),  # (l)
    "pending_normal_aio_reads": ("innodb_io_pending_normal_aio_reads",),  # (c)
    "pending_normal_aio_writes": ("innodb_io_pending_normal_aio_writes",),  # (c)
    "ibuf_inserts": ("innodb_ibuf_old_inserts", "innodb_ibuf_ops_merged_inserts"),  # (f)
    "ibuf_merged": ("innodb_ibuf_old_merged_records", "innodb_ibuf_ops_merged_all"),  # (f)
    "ibuf_merges": ("innodb_ibuf_page_merges",),
    "ibuf_used_cells": ("innodb_ibuf_size_pages",),
    "ibuf_free_cells": ("innodb_ibuf_free_list_length_pages",),
    "ibuf_cell_count": ("innodb_ibuf_segment_size_pages",),
    "spin_waits": ("innodb_sem_spin_waits",),  # (d)
    "spin_rounds": ("innodb_sem_spin_rounds",),  # (d)
    "os_waits": ("innodb_sem_os_waits",),  # (d)
    "innodb_sem_waits": ("innodb_sem_waiting_threads",),
    "innodb_sem_wait_time_ms": ("innodb_sem_wait_time_milliseconds",),
    "rows_inserted": ("innodb_row_ops_inserted",),
    "rows_updated": ("innodb_row_ops_updated",),
    "rows_deleted": ("innodb_row_ops_deleted",),
    "rows_read": ("innodb_row_ops_read",),
    "queries_inside": ("innodb_row_queries_inside",),
    "queries_queued": ("innodb_row_queries_queued",),
    "unflushed_log": ("innodb_log_unflushed_bytes",),
    "log_bytes_flushed": ("innodb_log_flushed_up_to_bytes",),
    "log_bytes_written": ("innodb_log_sequence_number_bytes",),
    "last_checkpoint": ("innodb_log_last_checkpoint_bytes",),
    "uncheckpointed_bytes": ("innodb_log_checkpoint_age_bytes",),
    "hash_index_cells_total": ("innodb_ahi_hash_table_size_cells",),  # (e)
    "hash_index_cells_used": ("innodb_ahi_used_cells",),  # (e)
    "total_mem_alloc": ("innodb_mem_total_allocated_bytes", "innodb_mem_total_large_allocated_bytes"),  # (i) (m)
    "additional_pool_alloc": ("innodb_mem_additional_pool_bytes",),  # (i)
    "adaptive_hash_memory": ("innodb_mem_adaptive_hash_index_bytes",),
    "page_hash_memory": ("innodb_mem_page_hash_bytes",),
    "dictionary_cache_memory": ("innodb_mem_dictionary_cache_bytes", "innodb_mem_dictionary_bytes"),  # (b)
    "file_system_memory": ("innodb_mem_file_system_bytes",),
    "lock_system_memory": ("innodb_mem_lock_system_bytes",),
    "recovery_system_memory": ("innodb_mem_recovery_system_bytes",),
    "thread_hash_memory": ("innodb_mem_threads_bytes",),
    "innodb_io_pattern_memory": ("innodb_mem_io_pattern_bytes",),
}


def legacy_innodb_values(text_or_status: str | InnodbStatus) -> dict[str, int]:
    """The original mysql-snmp InnoDB keys, 0 where the text lacks the value (as the original printed)."""
    status = text_or_status if isinstance(text_or_status, InnodbStatus) else parse_innodb_status(text_or_status)
    values = status.values
    out: dict[str, int] = {}
    for key, names in LEGACY_SOURCES.items():
        value = 0
        for name in names:
            if name in values:
                value = int(values[name])  # float seconds (j) -> whole seconds, like the original
                break
        out[key] = value
    return out
