"""Line handlers for each section of SHOW ENGINE INNODB STATUS.

parsers/innodb.py finds the real section headers and calls, for every line of a section, the
handler registered for that section title in HANDLERS. A handler recognises its lines by prefix
(str.startswith, no regular expressions) and stores typed values in ``state.values`` under catalog
names. A line it does not recognise is ignored. Values that are sums over many lines (transactions,
AHI partitions, semaphore waits) are accumulated in ``state.sums`` and published by
parsers/innodb.py at the end, only when at least one contributing line was seen.
"""
from __future__ import annotations

from .innodb_numbers import bracket_sum, to_float, to_int, two_word, parse_server_timestamp


class ScanState:
    """Mutable scratch space of one parse; never escapes parse_innodb_status."""

    __slots__ = (
        "values", "sums", "pools", "pool", "raw_trx", "in_trx_list", "ibuf_ops", "rows_line",
        "section_first_line", "hex_evidence",
    )

    def __init__(self) -> None:
        self.values: dict[str, int | float | str] = {}
        self.sums: dict[str, int | float] = {}
        self.pools: dict[str, dict[str, int | float]] = {}
        self.pool: dict[str, int | float] | None = None  # current INDIVIDUAL BUFFER POOL INFO instance
        self.raw_trx: dict[str, list[str]] = {}  # trx-id tokens, decoded once hex/decimal is known
        self.in_trx_list = False
        self.ibuf_ops = ""  # "merged" / "discarded": which operations list the next line belongs to
        self.rows_line = ""  # "user" / "system": which row counter line the next rates line follows
        self.section_first_line = True
        self.hex_evidence = False  # a trx id printed with hex letters was seen

    def add(self, name: str, amount: int | float) -> None:
        self.sums[name] = self.sums.get(name, 0) + amount


def _ints_before(line: str, labels: tuple[str, ...]) -> list[int | None]:
    """For ``"N label, N label"`` lines: the integer printed just before each label."""
    out = []
    for label in labels:
        pos = line.find(label)
        if pos <= 0:
            out.append(None)
            continue
        head = line[:pos].rstrip().rsplit(None, 1)
        out.append(to_int(head[-1]) if head else None)
    return out


def _floats_before(line: str, labels: tuple[str, ...]) -> list[float | None]:
    out = []
    for label in labels:
        pos = line.find(label)
        if pos <= 0:
            out.append(None)
            continue
        head = line[:pos].rstrip().rsplit(None, 1)
        out.append(to_float(head[-1]) if head else None)
    return out


def _ints_after(line: str, labels: tuple[str, ...]) -> list[int | None]:
    """For ``"label N, label N"`` lines: the integer printed just after each label."""
    out = []
    for label in labels:
        pos = line.find(label)
        if pos < 0:
            out.append(None)
            continue
        tail = line[pos + len(label):].split(None, 1)
        out.append(to_int(tail[0]) if tail else None)
    return out


def _store(target: dict, names: tuple[str, ...], numbers: list) -> None:
    for name, number in zip(names, numbers):
        if number is not None:
            target[name] = number


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
            _store(state.values, _LOOPS_56_NAMES, _ints_before(line, _LOOPS_56))
        else:  # 5.1 plugin / XtraDB / 5.5: "15 1_second, 15 sleeps, 1 10_second, 6 background, 6 flush"
            _store(state.values, _LOOPS_OLD_NAMES, _ints_before(line, _LOOPS_OLD))
    elif line.startswith("srv_master_thread log flush and writes:"):
        _store(state.values, ("innodb_bg_master_log_flush_and_writes",), [to_int(line.rsplit(None, 1)[-1])])


# --- SEMAPHORES --------------------------------------------------------------------------------

_RW_KINDS = {"RW-shared": "rw_shared", "RW-excl": "rw_excl", "RW-sx": "rw_sx"}
_PER_WAIT = {"mutex": "mutex", "RW-shared": "rw_shared", "RW-excl": "rw_excl", "RW-sx": "rw_sx"}


def _spin_line(state: ScanState, kind: str, spins, rounds, os_waits) -> None:
    values = state.values
    for field, number in (("spin_waits", spins), ("spin_rounds", rounds), ("os_waits", os_waits)):
        if number is not None:
            values[f"innodb_sem_{kind}_{field}"] = number
            # The original summed every mutex/RW line into spin_waits, spin_rounds and os_waits.
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
        _store(state.values, ("innodb_sem_os_wait_array_reservations", "innodb_sem_os_wait_array_signals"),
               _ints_after(line, ("reservation count", "signal count")))
    elif line.startswith("Mutex spin waits"):
        spins, rounds, os_waits = _ints_after(line, ("spin waits", "rounds", "OS waits"))
        _spin_line(state, "mutex", spins, rounds, os_waits)
    elif line.startswith("RW-"):
        if ";" in line:
            # 5.0/5.1: "RW-shared spins 14, OS waits 7; RW-excl spins 0, OS waits 0" (no rounds)
            for part in line.split(";"):
                part = part.strip()
                kind = _RW_KINDS.get(part.split(None, 1)[0]) if part else None
                if kind:
                    spins, os_waits = _ints_after(part, ("spins", "OS waits"))
                    _spin_line(state, kind, spins, None, os_waits)
        else:
            kind = _RW_KINDS.get(line.split(None, 1)[0])
            if kind and " spins " in line:
                spins, rounds, os_waits = _ints_after(line, ("spins", "rounds", "OS waits"))
                _spin_line(state, kind, spins, rounds, os_waits)
    elif line.startswith("Spin rounds per wait:"):
        # "Spin rounds per wait: 0.00 mutex, 2.00 RW-shared, 4691857.50 RW-excl, 0.00 RW-sx"
        for item in line[len("Spin rounds per wait:"):].split(","):
            words = item.split()
            if len(words) == 2 and words[1] in _PER_WAIT:
                number = to_float(words[0])
                if number is not None:
                    state.values[f"innodb_sem_spin_rounds_per_wait_{_PER_WAIT[words[1]]}"] = number


# --- TRANSACTIONS ------------------------------------------------------------------------------

def transactions(state: ScanState, line: str) -> None:
    if state.in_trx_list:
        _transaction_list_line(state, line)
        return
    # The scalar lines come before the list; a query quoted in the list may repeat them, so they
    # are only read before "LIST OF TRANSACTIONS" / the first "---TRANSACTION", and only once.
    if line.startswith("Trx id counter "):
        state.raw_trx.setdefault("counter", line[len("Trx id counter "):].split())
    elif line.startswith("Purge done for trx's n:o < "):
        rest = line[len("Purge done for trx's n:o < "):]
        trx_part, _, undo_part = rest.partition(" undo n:o < ")
        undo_part, _, purge_state = undo_part.partition(" state:")
        state.raw_trx.setdefault("purged", trx_part.split())
        state.raw_trx.setdefault("undo", undo_part.split())
        purge_state = purge_state.strip()
        if purge_state and "innodb_trx_purge_state" not in state.values:
            state.values["innodb_trx_purge_state"] = purge_state
    elif line.startswith("History list length "):
        number = to_int(line[len("History list length "):].strip())
        if number is not None:
            state.values.setdefault("innodb_trx_history_list_length", number)
    elif line.startswith("Total number of lock structs in row lock hash table "):
        number = to_int(line.rsplit(None, 1)[-1])
        if number is not None:
            state.values.setdefault("innodb_trx_lock_hash_structs", number)
    elif line.startswith("LIST OF TRANSACTIONS FOR EACH SESSION"):
        state.in_trx_list = True
    elif line.startswith("---TRANSACTION"):
        # "LIST OF TRANSACTIONS" can be lost when the server truncates the middle of the output
        state.in_trx_list = True
        _transaction_list_line(state, line)


def _transaction_list_line(state: ScanState, line: str) -> None:
    first = line[:1]
    if first == "-":
        if line.startswith("---TRANSACTION"):
            state.add("innodb_trx_current", 1)
            if "ACTIVE" in line:
                state.add("innodb_trx_active", 1)
        elif line.startswith("------- TRX HAS BEEN WAITING "):
            # "... WAITING 32 SEC FOR THIS LOCK" (MySQL) or "... WAITING 4007707 us FOR" (MariaDB 10.6+)
            words = line[len("------- TRX HAS BEEN WAITING "):].split(None, 2)
            if len(words) >= 2:
                number = to_int(words[0])
                if number is not None:
                    seconds = number / 1_000_000 if words[1] == "us" else number
                    state.add("innodb_trx_lock_wait_seconds_sum", seconds)
                    if seconds >= state.sums.get("innodb_trx_lock_wait_seconds_max", -1):
                        state.sums["innodb_trx_lock_wait_seconds_max"] = seconds
    elif first.isdigit() or line.startswith("LOCK WAIT "):
        if " lock struct(s)" not in line:
            return
        # "LOCK WAIT 2 lock struct(s), heap size 368, 1 row lock(s), undo log entries 5"
        waiting = line.startswith("LOCK WAIT ")
        body = line[len("LOCK WAIT "):] if waiting else line
        structs, row_locks = _ints_before(body, (" lock struct(s)", " row lock(s)"))
        if structs is None:
            return
        if waiting:
            state.add("innodb_trx_lock_wait", 1)
        state.add("innodb_trx_lock_structs", structs)
        if row_locks is not None:
            state.add("innodb_trx_row_locks", row_locks)
        if "undo log entries " in body:
            undo = to_int(body.rsplit(None, 1)[-1])
            if undo is not None:
                state.add("innodb_trx_undo_log_entries", undo)
    elif first == "m":
        if line.startswith("mysql tables in use "):
            in_use, locked = _ints_after(line, ("in use", "locked"))
            if in_use is not None and locked is not None:
                state.add("innodb_trx_tables_in_use", in_use)
                state.add("innodb_trx_tables_locked", locked)
    elif first == "T":
        if line.startswith("Trx read view will not see trx"):
            state.add("innodb_trx_read_views", 1)


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
        _store(values, ("innodb_io_pending_normal_aio_reads", "innodb_io_pending_normal_aio_writes"),
               [_aio_count(reads), _aio_count(writes) if writes else None])
    elif line.startswith(" ibuf aio reads:"):
        # 8.0 prints the labels with no numbers (" ibuf aio reads:, log i/o's:, sync i/o's:"): absent.
        _store(values, ("innodb_io_pending_ibuf_aio_reads", "innodb_io_pending_log_ios", "innodb_io_pending_sync_ios"),
               _ints_after(line, ("ibuf aio reads:", "log i/o's:", "sync i/o's:")))
    elif line.startswith("Pending flushes (fsync)"):
        if line.startswith("Pending flushes (fsync):"):  # MariaDB 10.6+: one total
            _store(values, ("innodb_io_pending_fsyncs",), [to_int(line.rsplit(None, 1)[-1])])
        else:
            _store(values, ("innodb_io_pending_fsyncs_log", "innodb_io_pending_fsyncs_buffer_pool"),
                   _ints_after(line, ("log:", "buffer pool:")))
    elif line[:1].isdigit():
        if " OS file reads, " in line:
            _store(values, ("innodb_io_os_file_reads", "innodb_io_os_file_writes", "innodb_io_os_fsyncs"),
                   _ints_before(line, (" OS file reads", " OS file writes", " OS fsyncs")))
        elif " reads/s, " in line and "avg bytes/read" in line:
            _store(values, ("innodb_io_reads_per_second", "innodb_io_avg_bytes_per_read",
                            "innodb_io_writes_per_second", "innodb_io_fsyncs_per_second"),
                   _floats_before(line, (" reads/s", " avg bytes/read", " writes/s", " fsyncs/s")))
        elif " pending preads, " in line:
            _store(values, ("innodb_io_pending_preads", "innodb_io_pending_pwrites"),
                   _ints_before(line, (" pending preads", " pending pwrites")))


# --- INSERT BUFFER AND ADAPTIVE HASH INDEX ------------------------------------------------------

_IBUF_OPS = ("inserts", "delete_marks", "deletes")


def insert_buffer_and_ahi(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("Hash table size "):
        # one line per AHI partition (8 on 5.7+/MariaDB); the totals are sums over the partitions
        cells, used = _ints_after(line, ("Hash table size", "used cells"))
        if cells is None:
            return
        state.add("innodb_ahi_partitions", 1)
        state.add("innodb_ahi_hash_table_size_cells", cells)
        if used is not None:
            state.add("innodb_ahi_used_cells", used)
        heap = _ints_after(line, ("node heap has",))[0]
        if heap is not None:
            state.add("innodb_ahi_node_heap_buffers", heap)
    elif line.startswith("Ibuf: size ") or line.startswith("Ibuf for space 0: size "):
        _store(values, ("innodb_ibuf_size_pages", "innodb_ibuf_free_list_length_pages", "innodb_ibuf_segment_size_pages"),
               _ints_after(line, (" size", "free list len", "seg size")))
        if line.rstrip().endswith(" merges"):  # 5.5+: "Ibuf: size 1, free list len 0, seg size 2, 0 merges"
            _store(values, ("innodb_ibuf_page_merges",), _ints_before(line, (" merges",)))
    elif line.startswith("merged operations:"):
        state.ibuf_ops = "merged"
    elif line.startswith("discarded operations:"):
        state.ibuf_ops = "discarded"
    elif line.startswith(" insert ") and state.ibuf_ops:
        # " insert 0, delete mark 0, delete 0" under "merged operations:" / "discarded operations:"
        numbers = _ints_after(line, (" insert ", "delete mark ", "delete "))
        # "delete " also matches inside "delete mark": take the last "delete N"
        numbers[2] = to_int(line.rsplit(None, 1)[-1])
        _store(values, tuple(f"innodb_ibuf_ops_{state.ibuf_ops}_{op}" for op in _IBUF_OPS), numbers)
        if state.ibuf_ops == "merged" and None not in numbers:
            values["innodb_ibuf_ops_merged_all"] = sum(numbers)
        state.ibuf_ops = ""
    elif line[:1].isdigit():
        if " merged recs, " in line:
            # 5.0/5.1 built-in: "19817685 inserts, 19817684 merged recs, 3552620 merges"
            _store(values, ("innodb_ibuf_old_inserts", "innodb_ibuf_old_merged_records", "innodb_ibuf_page_merges"),
                   _ints_before(line, (" inserts", " merged recs", " merges")))
        elif " hash searches/s, " in line:
            _store(values, ("innodb_ahi_hash_searches_per_second", "innodb_ahi_non_hash_searches_per_second"),
                   _floats_before(line, (" hash searches/s", " non-hash searches/s")))


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
            _store(values, ("innodb_log_pending_writes", "innodb_log_pending_checkpoint_writes"),
                   _ints_before(line, (" pending log writes", " pending chkp writes")))
        elif " pending log flushes, " in line:  # MariaDB 10.5+
            _store(values, ("innodb_log_pending_flushes", "innodb_log_pending_checkpoint_writes"),
                   _ints_before(line, (" pending log flushes", " pending chkp writes")))
        elif " log i/o's done, " in line:
            _store(values, ("innodb_log_ios_done",), _ints_before(line, (" log i/o's done",)))
            _store(values, ("innodb_log_ios_per_second",), _floats_before(line, (" log i/o's/second",)))
        return
    for label, name in _LOG_POSITIONS:
        if line.startswith(label):
            tokens = line[len(label):].split()
            # "Log sequence number 0 43655": hi and lo words before the 5.1 plugin
            number = two_word(tokens) if len(tokens) <= 2 else None
            if number is not None:
                values[name] = number
            return


# --- BUFFER POOL AND MEMORY / INDIVIDUAL BUFFER POOL INFO ----------------------------------------

_MEMORY_LINES = (  # Percona/XtraDB "Internal hash tables (constant factor + variable factor)"
    ("Adaptive hash index", "innodb_mem_adaptive_hash_index_bytes"),
    ("Page hash", "innodb_mem_page_hash_bytes"),
    ("Dictionary cache", "innodb_mem_dictionary_cache_bytes"),
    ("File system", "innodb_mem_file_system_bytes"),
    ("Lock system", "innodb_mem_lock_system_bytes"),
    ("Recovery system", "innodb_mem_recovery_system_bytes"),
    ("Threads", "innodb_mem_threads_bytes"),
    ("innodb_io_pattern", "innodb_mem_io_pattern_bytes"),
)

# label -> field; numbers follow the label ("Free buffers       7791")
_POOL_SCALARS = (
    ("Buffer pool size, bytes", "size_bytes"),
    ("Buffer pool size", "size_pages"),
    ("Free buffers", "free_pages"),
    ("Database pages", "database_pages"),
    ("Old database pages", "old_database_pages"),
    ("Modified db pages", "modified_pages"),
    ("Pending reads", "pending_reads"),
)


def _pool_line(target: dict, prefix: str, line: str) -> bool:
    """Lines shared by the totals and each INDIVIDUAL BUFFER POOL INFO instance."""
    first = line[:1]
    if first.isdigit():
        if " youngs/s, " in line:
            _store(target, (prefix + "youngs_per_second", prefix + "non_youngs_per_second"),
                   _floats_before(line, (" youngs/s", " non-youngs/s")))
        elif " creates/s, " in line:
            _store(target, (prefix + "reads_per_second", prefix + "creates_per_second", prefix + "writes_per_second"),
                   _floats_before(line, (" reads/s", " creates/s", " writes/s")))
        else:
            return False
        return True
    if line.startswith("Pages "):
        if line.startswith("Pages read ahead "):
            for label, field in (("read ahead ", "read_ahead_per_second"),
                                 ("evicted without access ", "evicted_without_access_per_second"),
                                 ("Random read ahead ", "random_read_ahead_per_second")):
                pos = line.find(label)
                if pos >= 0:
                    number = to_float(line[pos + len(label):].split(None, 1)[0].split("/s")[0]) \
                        if line[pos + len(label):].strip() else None
                    if number is not None:
                        target[prefix + field] = number
        elif line.startswith("Pages read "):
            _store(target, (prefix + "pages_read", prefix + "pages_created", prefix + "pages_written"),
                   _ints_after(line, ("Pages read", "created", "written")))
        elif line.startswith("Pages made young "):
            _store(target, (prefix + "pages_made_young", prefix + "pages_not_made_young"),
                   _ints_after(line, ("made young", "not young")))
        else:
            return False
        return True
    if line.startswith("Pending writes:"):
        _store(target, (prefix + "pending_writes_lru", prefix + "pending_writes_flush_list",
                        prefix + "pending_writes_single_page"),
               _ints_after(line, ("LRU", "flush list", "single page")))
        return True
    if line.startswith("Buffer pool hit rate "):
        # "Buffer pool hit rate 997 / 1000, young-making rate 2 / 1000 not 10 / 1000"
        for label, field in (("hit rate ", "hit_rate_ratio"), ("young-making rate ", "young_making_rate_ratio"),
                             (" not ", "not_young_making_rate_ratio")):
            pos = line.find(label)
            if pos < 0:
                continue
            words = line[pos + len(label):].split(None, 3)
            if len(words) >= 3 and words[1] == "/":
                num, den = to_int(words[0]), to_int(words[2].rstrip(","))
                if num is not None and den:
                    target[prefix + field] = num / den
        return True
    if line.startswith("LRU len:"):
        _store(target, (prefix + "lru_length_pages", prefix + "unzip_lru_length_pages"),
               _ints_after(line, ("LRU len:", "unzip_LRU len:")))
        return True
    for label, field in _POOL_SCALARS:
        if line.startswith(label):
            rest = line[len(label):].split()
            if len(rest) == 1:
                number = to_int(rest[0])
                if number is not None:
                    target[prefix + field] = number
            return True
    return False


def buffer_pool_and_memory(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("    ") or line.startswith("\t"):
        stripped = line.strip()
        for label, name in _MEMORY_LINES:
            if stripped.startswith(label):
                words = stripped[len(label):].split()
                number = to_int(words[0]) if words else None
                if number is not None:
                    values[name] = number
                    if name == "innodb_mem_dictionary_cache_bytes" and len(words) >= 4:
                        # "Dictionary cache    576800 	(553912 + 22888)"
                        const, var = to_int(words[1].lstrip("(")), to_int(words[3].rstrip(")"))
                        if const is not None and var is not None:
                            values["innodb_mem_dictionary_cache_constant_bytes"] = const
                            values["innodb_mem_dictionary_cache_variable_bytes"] = var
                return
        return
    if line.startswith("Total "):
        if line.startswith("Total memory allocated by read views "):  # Percona 5.5
            _store(values, ("innodb_mem_read_views_bytes",), [to_int(line.rsplit(None, 1)[-1])])
        elif line.startswith("Total memory allocated "):
            # "Total memory allocated 20634452; in additional pool allocated 675584"
            _store(values, ("innodb_mem_total_allocated_bytes", "innodb_mem_additional_pool_bytes"),
                   _ints_after(line, ("Total memory allocated", "additional pool allocated")))
        elif line.startswith("Total large memory allocated "):
            _store(values, ("innodb_mem_total_large_allocated_bytes",), [to_int(line.rsplit(None, 1)[-1])])
        return
    if line.startswith("Dictionary memory allocated "):
        _store(values, ("innodb_mem_dictionary_bytes",), [to_int(line.rsplit(None, 1)[-1])])
    elif line.startswith("Percent of dirty pages"):
        _store(values, ("innodb_bp_dirty_pages_percent",), [to_float(line.rsplit(None, 1)[-1])])
    elif line.startswith("Max dirty pages percent:"):
        _store(values, ("innodb_bp_max_dirty_pages_percent",), [to_float(line.rsplit(None, 1)[-1])])
    else:
        _pool_line(values, "innodb_bp_", line)


def individual_buffer_pools(state: ScanState, line: str) -> None:
    if line.startswith("---BUFFER POOL "):
        pool_id = line[len("---BUFFER POOL "):].strip()
        if pool_id.isdigit():
            state.pool = state.pools.setdefault(pool_id, {})
        else:
            state.pool = None
    elif state.pool is not None:
        _pool_line(state.pool, "innodb_pool_", line)


# --- ROW OPERATIONS ----------------------------------------------------------------------------

_ROW_OPS = ("inserted", "updated", "deleted", "read")


def row_operations(state: ScanState, line: str) -> None:
    values = state.values
    if line.startswith("Number of "):
        if line.startswith("Number of rows inserted "):
            state.rows_line = "user"
            _store(values, tuple(f"innodb_row_ops_{op}" for op in _ROW_OPS),
                   _ints_after(line, ("inserted", "updated", "deleted", "read")))
        elif line.startswith("Number of system rows inserted "):  # 8.0 / Percona 8.0
            state.rows_line = "system"
            _store(values, tuple(f"innodb_row_ops_system_{op}" for op in _ROW_OPS),
                   _ints_after(line, ("inserted", "updated", "deleted", "read")))
    elif line[:1].isdigit():
        if " inserts/s, " in line:
            if state.rows_line == "user":  # the rates after the system rows line are not the user rows'
                _store(values, tuple(f"innodb_row_ops_{op}_per_second" for op in ("inserts", "updates", "deletes", "reads")),
                       _floats_before(line, (" inserts/s", " updates/s", " deletes/s", " reads/s")))
            state.rows_line = ""
        elif " queries inside InnoDB, " in line:
            _store(values, ("innodb_row_queries_inside", "innodb_row_queries_queued"),
                   _ints_before(line, (" queries inside InnoDB", " queries in queue")))
        elif line.endswith(" read views open inside InnoDB"):
            _store(values, ("innodb_row_read_views_open",), [to_int(line.split(None, 1)[0])])
        elif line.endswith(" RW transactions active inside InnoDB"):
            _store(values, ("innodb_row_rw_transactions_active_inside",), [to_int(line.split(None, 1)[0])])
        elif line.endswith(" transactions active inside InnoDB"):
            _store(values, ("innodb_row_transactions_active_inside",), [to_int(line.split(None, 1)[0])])
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


def ignore(state: ScanState, line: str) -> None:
    pass


DEADLOCK = "LATEST DETECTED DEADLOCK"
FK_ERROR = "LATEST FOREIGN KEY ERROR"
TRANSACTIONS = "TRANSACTIONS"
INDIVIDUAL_BUFFER_POOL_INFO = "INDIVIDUAL BUFFER POOL INFO"

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
    INDIVIDUAL_BUFFER_POOL_INFO: individual_buffer_pools,
    "ROW OPERATIONS": row_operations,
}
