"""Line handlers for each section of SHOW ENGINE INNODB STATUS.

parsers/innodb.py finds the real section headers and calls, for every line of a section, the
handler registered for that section title in HANDLERS. A handler recognises its lines by prefix
(str.startswith, no regular expressions) and stores typed values in ``state.values`` under catalog
names. A line it does not recognise is ignored. Values that are sums over many lines (transactions,
AHI partitions, semaphore waits) are accumulated in ``state.sums`` and published by
parsers/innodb.py at the end, only when at least one contributing line was seen.
"""
from __future__ import annotations

from .innodb_buffer_pool import buffer_pool_and_memory, individual_buffer_pools
from .innodb_numbers import bracket_sum, parse_server_timestamp, to_float, to_int, two_word
from .innodb_scan import ScanState, floats_before, ints_after, ints_before, store
from .innodb_transactions import transactions

# --- BACKGROUND THREAD -------------------------------------------------------------------------

_LOOPS_56 = ("srv_active", "srv_shutdown", "srv_idle")
_LOOPS_56_NAMES = ("innodb_bg_master_loops_active", "innodb_bg_master_loops_shutdown", "innodb_bg_master_loops_idle")
_LOOPS_OLD = (" 1_second", " sleeps", " 10_second", " background", " flush")
_LOOPS_OLD_NAMES = (
    "innodb_bg_master_loops_one_second", "innodb_bg_master_loops_sleeps", "innodb_bg_master_loops_ten_second",
    "innodb_bg_master_loops_background", "innodb_bg_master_loops_flush",
)


def background_thread(state: ScanState, line: str) -> None:
    if line.startswith("srv_master_thread loops:"):
        if "srv_active" in line:
            store(state.values, _LOOPS_56_NAMES, ints_before(line, _LOOPS_56))
        else:  # 5.1 plugin / XtraDB / 5.5: "15 1_second, 15 sleeps, 1 10_second, 6 background, 6 flush"
            state.pre56_loops = True
            store(state.values, _LOOPS_OLD_NAMES, ints_before(line, _LOOPS_OLD))
    elif line.startswith("srv_master_thread log flush and writes:"):
        store(state.values, ("innodb_bg_master_log_flush_and_writes",), [to_int(line.rsplit(None, 1)[-1])])


# --- SEMAPHORES --------------------------------------------------------------------------------

_RW_KINDS = {"RW-shared": "rw_shared", "RW-excl": "rw_excl", "RW-sx": "rw_sx"}
_PER_WAIT = {"mutex": "mutex", "RW-shared": "rw_shared", "RW-excl": "rw_excl", "RW-sx": "rw_sx"}


def _spin_line(state: ScanState, kind: str, spins, rounds, os_waits) -> None:
    values = state.values
    for field, number in (("spin_waits", spins), ("spin_rounds", rounds), ("os_waits", os_waits)):
        if number is not None:
            values[f"innodb_sem_{kind}_{field}"] = number
            # Totals over the mutex line and every RW line, in both the 5.0/5.1 and the 5.5+ forms
            # (the original agent missed the 5.5+ RW lines: legacy fix (d)).
            state.add(f"innodb_sem_{field}", number)


def semaphores(state: ScanState, line: str) -> None:
    if line.startswith("--Thread "):
        # "--Thread 907205 has waited at ha_innodb.cc line 7156 for 1.00 seconds the semaphore:"
        if " has waited at " in line:
            state.add("innodb_sem_waiting_threads", 1)
            tail = line.rsplit(" for ", 1)
            if len(tail) == 2:
                seconds = to_float(tail[1].split(None, 1)[0])
                if seconds is not None:
                    # Whole seconds as printed x 1000, like the original agent (the server rounds).
                    state.add("innodb_sem_wait_time_milliseconds", int(seconds) * 1000)
    elif line.startswith("OS WAIT ARRAY INFO:"):
        # one line up to 5.6 ("reservation count 7, signal count 7"), two lines later
        store(state.values, ("innodb_sem_os_wait_array_reservations", "innodb_sem_os_wait_array_signals"),
              ints_after(line, ("reservation count", "signal count")))
    elif line.startswith("Mutex spin waits"):
        spins, rounds, os_waits = ints_after(line, ("spin waits", "rounds", "OS waits"))
        _spin_line(state, "mutex", spins, rounds, os_waits)
    elif line.startswith("RW-"):
        if ";" in line:
            # 5.0/5.1: "RW-shared spins 14, OS waits 7; RW-excl spins 0, OS waits 0" (no rounds)
            for part in line.split(";"):
                part = part.strip()
                kind = _RW_KINDS.get(part.split(None, 1)[0]) if part else None
                if kind:
                    spins, os_waits = ints_after(part, ("spins", "OS waits"))
                    _spin_line(state, kind, spins, None, os_waits)
        else:
            kind = _RW_KINDS.get(line.split(None, 1)[0])
            if kind and " spins " in line:
                spins, rounds, os_waits = ints_after(line, ("spins", "rounds", "OS waits"))
                _spin_line(state, kind, spins, rounds, os_waits)
    elif line.startswith("Spin rounds per wait:"):
        # "Spin rounds per wait: 0.00 mutex, 2.00 RW-shared, 4691857.50 RW-excl, 0.00 RW-sx"
        for item in line[len("Spin rounds per wait:"):].split(","):
            words = item.split()
            if len(words) == 2 and words[1] in _PER_WAIT:
                number = to_float(words[0])
                if number is not None:
                    state.values[f"innodb_sem_spin_rounds_per_wait_{_PER_WAIT[words[1]]}"] = number


# --- FILE I/O ----------------------------------------------------------------------------------

def _aio_count(text: str) -> int | None:
    """``" 0 [0, 0, 0, 0] "`` (5.5+: total then per-thread), ``" 0"`` (5.0) or ``" [0, 0] "`` (8.0: no total)."""
    words = text.split(None, 1)
    if not words:
        return None
    total = to_int(words[0])
    if total is not None:
        return total
    return bracket_sum(text)


def file_io(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("Pending normal aio reads:"):
        reads, _, writes = line[len("Pending normal aio reads:"):].partition("aio writes:")
        store(values, ("innodb_io_pending_normal_aio_reads", "innodb_io_pending_normal_aio_writes"),
              [_aio_count(reads), _aio_count(writes) if writes else None])
    elif line.startswith(" ibuf aio reads:"):
        # 8.0 prints the labels with no numbers (" ibuf aio reads:, log i/o's:, sync i/o's:"): absent.
        store(values, ("innodb_io_pending_ibuf_aio_reads", "innodb_io_pending_log_ios", "innodb_io_pending_sync_ios"),
              ints_after(line, ("ibuf aio reads:", "log i/o's:", "sync i/o's:")))
    elif line.startswith("Pending flushes (fsync)"):
        if line.startswith("Pending flushes (fsync):"):  # MariaDB 10.6+: one total
            store(values, ("innodb_io_pending_fsyncs",), [to_int(line.rsplit(None, 1)[-1])])
        else:
            store(values, ("innodb_io_pending_fsyncs_log", "innodb_io_pending_fsyncs_buffer_pool"),
                  ints_after(line, ("log:", "buffer pool:")))
    elif line[:1].isdigit():
        if " OS file reads, " in line:
            store(values, ("innodb_io_os_file_reads", "innodb_io_os_file_writes", "innodb_io_os_fsyncs"),
                  ints_before(line, (" OS file reads", " OS file writes", " OS fsyncs")))
        elif " reads/s, " in line and "avg bytes/read" in line:
            store(values, ("innodb_io_reads_per_second", "innodb_io_avg_bytes_per_read",
                           "innodb_io_writes_per_second", "innodb_io_fsyncs_per_second"),
                  floats_before(line, (" reads/s", " avg bytes/read", " writes/s", " fsyncs/s")))
        elif " pending preads, " in line:
            store(values, ("innodb_io_pending_preads", "innodb_io_pending_pwrites"),
                  ints_before(line, (" pending preads", " pending pwrites")))


# --- INSERT BUFFER AND ADAPTIVE HASH INDEX ------------------------------------------------------

_IBUF_OPS = ("inserts", "delete_marks", "deletes")


def insert_buffer_and_ahi(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("Hash table size "):
        # one line per AHI partition (8 on 5.7+/MariaDB); the totals are sums over the partitions
        cells, used = ints_after(line, ("Hash table size", "used cells"))
        if cells is None:
            return
        state.add("innodb_ahi_partitions", 1)
        state.add("innodb_ahi_hash_table_size_cells", cells)
        if used is not None:
            state.add("innodb_ahi_used_cells", used)
        heap = ints_after(line, ("node heap has",))[0]
        if heap is not None:
            state.add("innodb_ahi_node_heap_buffers", heap)
    elif line.startswith("Ibuf: size ") or line.startswith("Ibuf for space 0: size "):
        store(values, ("innodb_ibuf_size_pages", "innodb_ibuf_free_list_length_pages", "innodb_ibuf_segment_size_pages"),
              ints_after(line, (" size", "free list len", "seg size")))
        if line.rstrip().endswith(" merges"):  # 5.5+: "Ibuf: size 1, free list len 0, seg size 2, 0 merges"
            store(values, ("innodb_ibuf_page_merges",), ints_before(line, (" merges",)))
    elif line.startswith("merged operations:"):
        state.ibuf_ops = "merged"
    elif line.startswith("discarded operations:"):
        state.ibuf_ops = "discarded"
    elif line.startswith(" insert ") and state.ibuf_ops:
        # " insert 0, delete mark 0, delete 0" under "merged operations:" / "discarded operations:"
        numbers = ints_after(line, (" insert ", "delete mark ", "delete "))
        # "delete " also matches inside "delete mark": take the last "delete N"
        numbers[2] = to_int(line.rsplit(None, 1)[-1])
        store(values, tuple(f"innodb_ibuf_ops_{state.ibuf_ops}_{op}" for op in _IBUF_OPS), numbers)
        if state.ibuf_ops == "merged" and None not in numbers:
            values["innodb_ibuf_ops_merged_all"] = sum(numbers)
        state.ibuf_ops = ""
    elif line[:1].isdigit():
        if " merged recs, " in line:
            # 5.0/5.1 built-in: "19817685 inserts, 19817684 merged recs, 3552620 merges"
            store(values, ("innodb_ibuf_old_inserts", "innodb_ibuf_old_merged_records", "innodb_ibuf_page_merges"),
                  ints_before(line, (" inserts", " merged recs", " merges")))
        elif " hash searches/s, " in line:
            store(values, ("innodb_ahi_hash_searches_per_second", "innodb_ahi_non_hash_searches_per_second"),
                  floats_before(line, (" hash searches/s", " non-hash searches/s")))


# --- LOG ---------------------------------------------------------------------------------------

_LOG_POSITIONS = (
    ("Log sequence number", "innodb_log_sequence_number_bytes"),
    ("Log flushed up to", "innodb_log_flushed_up_to_bytes"),
    ("Pages flushed up to", "innodb_log_pages_flushed_up_to_bytes"),
    ("Last checkpoint at", "innodb_log_last_checkpoint_bytes"),
    ("Log buffer assigned up to", "innodb_log_buffer_assigned_up_to_bytes"),
    ("Log buffer completed up to", "innodb_log_buffer_completed_up_to_bytes"),
    ("Log written up to", "innodb_log_written_up_to_bytes"),
    ("Added dirty pages up to", "innodb_log_added_dirty_pages_up_to_bytes"),
    # Percona/XtraDB extras
    ("Max checkpoint age", "innodb_log_max_checkpoint_age_bytes"),
    ("Checkpoint age target", "innodb_log_checkpoint_age_target_bytes"),
    ("Modified age no less than", "innodb_log_modified_age_bytes"),
    ("Modified age", "innodb_log_modified_age_bytes"),
    ("Checkpoint age", "innodb_log_printed_checkpoint_age"),
    ("Log minimum file id is", "innodb_log_min_file_id"),
    ("Log maximum file id is", "innodb_log_max_file_id"),
)


def log(state: ScanState, line: str) -> None:
    values = state.values
    if line[:1].isdigit():
        if " pending log writes, " in line:
            store(values, ("innodb_log_pending_writes", "innodb_log_pending_checkpoint_writes"),
                  ints_before(line, (" pending log writes", " pending chkp writes")))
        elif " pending log flushes, " in line:  # MariaDB 10.5+
            store(values, ("innodb_log_pending_flushes", "innodb_log_pending_checkpoint_writes"),
                  ints_before(line, (" pending log flushes", " pending chkp writes")))
        elif " log i/o's done, " in line:
            store(values, ("innodb_log_ios_done",), ints_before(line, (" log i/o's done",)))
            store(values, ("innodb_log_ios_per_second",), floats_before(line, (" log i/o's/second",)))
        return
    for label, name in _LOG_POSITIONS:
        if line.startswith(label):
            tokens = line[len(label):].split()
            # "Log sequence number 0 43655": hi and lo words before the 5.1 plugin
            number = two_word(tokens) if len(tokens) <= 2 else None
            if number is not None:
                values[name] = number
            return


# --- ROW OPERATIONS ----------------------------------------------------------------------------

_ROW_OPS = ("inserted", "updated", "deleted", "read")


def row_operations(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("Number of "):
        if line.startswith("Number of rows inserted "):
            state.rows_line = "user"
            store(values, tuple(f"innodb_row_ops_{op}" for op in _ROW_OPS),
                  ints_after(line, ("inserted", "updated", "deleted", "read")))
        elif line.startswith("Number of system rows inserted "):  # 8.0 / Percona 8.0
            state.rows_line = "system"
            store(values, tuple(f"innodb_row_ops_system_{op}" for op in _ROW_OPS),
                  ints_after(line, ("inserted", "updated", "deleted", "read")))
    elif line[:1].isdigit():
        if " inserts/s, " in line:
            if state.rows_line == "user":  # the rates after the system rows line are not the user rows'
                store(values, tuple(f"innodb_row_ops_{op}_per_second" for op in ("inserts", "updates", "deletes", "reads")),
                      floats_before(line, (" inserts/s", " updates/s", " deletes/s", " reads/s")))
            state.rows_line = ""
        elif " queries inside InnoDB, " in line:
            store(values, ("innodb_row_queries_inside", "innodb_row_queries_queued"),
                  ints_before(line, (" queries inside InnoDB", " queries in queue")))
        elif line.endswith(" read views open inside InnoDB"):
            store(values, ("innodb_row_read_views_open",), [to_int(line.split(None, 1)[0])])
        elif line.endswith(" RW transactions active inside InnoDB"):
            store(values, ("innodb_row_rw_transactions_active_inside",), [to_int(line.split(None, 1)[0])])
        elif line.endswith(" transactions active inside InnoDB"):
            store(values, ("innodb_row_transactions_active_inside",), [to_int(line.split(None, 1)[0])])
    elif "state" in line and (line.startswith("Main thread ") or line.startswith("Process ID=")
                              or line.startswith("state:")):
        # "Main thread process no. 4257, id 1402..., state: waiting for server activity",
        # "Process ID=1, Main thread ID=2758... , state=sleeping", MariaDB 10.5+: "state: sleeping"
        for marker in ("state: ", "state="):
            pos = line.rfind(marker)
            if pos >= 0:
                main_state = line[pos + len(marker):].strip()
                if main_state:
                    values["innodb_row_main_thread_state"] = main_state
                return


# --- LATEST DETECTED DEADLOCK / LATEST FOREIGN KEY ERROR ----------------------------------------

def _latest_event(state: ScanState, line: str, name: str) -> None:
    if not state.section_first_line or not line.strip():
        return
    state.section_first_line = False
    seconds, _ = parse_server_timestamp(line)
    if seconds is not None:
        state.values[name] = seconds


def latest_deadlock(state: ScanState, line: str) -> None:
    _latest_event(state, line, "innodb_deadlock_latest_timestamp_seconds")


def latest_fk_error(state: ScanState, line: str) -> None:
    _latest_event(state, line, "innodb_fk_error_latest_timestamp_seconds")


DEADLOCK = "LATEST DETECTED DEADLOCK"
FK_ERROR = "LATEST FOREIGN KEY ERROR"
TRANSACTIONS = "TRANSACTIONS"

HANDLERS = {
    "BACKGROUND THREAD": background_thread,
    "SEMAPHORES": semaphores,
    FK_ERROR: latest_fk_error,
    DEADLOCK: latest_deadlock,
    TRANSACTIONS: transactions,
    "FILE I/O": file_io,
    "INSERT BUFFER AND ADAPTIVE HASH INDEX": insert_buffer_and_ahi,
    "ADAPTIVE HASH INDEX": insert_buffer_and_ahi,  # MariaDB 10.6+ title (no insert buffer any more)
    "INSERT BUFFER": insert_buffer_and_ahi,
    "LOG": log,
    "BUFFER POOL AND MEMORY": buffer_pool_and_memory,
    "INDIVIDUAL BUFFER POOL INFO": individual_buffer_pools,
    "ROW OPERATIONS": row_operations,
}
