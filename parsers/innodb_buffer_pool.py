"""BUFFER POOL AND MEMORY and INDIVIDUAL BUFFER POOL INFO sections of SHOW ENGINE INNODB STATUS.

The totals go to ``innodb_bp_*`` / ``innodb_mem_*`` values; each ``---BUFFER POOL n`` instance gets the
same lines as ``innodb_pool_*`` values in its own dict, so an instance never overwrites the totals.
"""
from __future__ import annotations

from .innodb_numbers import to_float, to_int
from .innodb_scan import ScanState, floats_before, ints_after, store


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


def _per_second_after(line: str, label: str) -> float | None:
    """The ``0.00/s`` rate printed after ``label`` (None when the docs wrapped the line before it)."""
    pos = line.find(label)
    if pos < 0:
        return None
    words = line[pos + len(label):].split(None, 1)
    return to_float(words[0].split("/s")[0]) if words else None


def _pool_line(target: dict, prefix: str, line: str) -> bool:
    """Lines shared by the totals and each INDIVIDUAL BUFFER POOL INFO instance."""
    first = line[:1]
    if first.isdigit():
        if " youngs/s, " in line:
            store(target, (prefix + "youngs_per_second", prefix + "non_youngs_per_second"),
                  floats_before(line, (" youngs/s", " non-youngs/s")))
        elif " creates/s, " in line:
            store(target, (prefix + "reads_per_second", prefix + "creates_per_second", prefix + "writes_per_second"),
                  floats_before(line, (" reads/s", " creates/s", " writes/s")))
        else:
            return False
        return True
    if line.startswith("Pages "):
        if line.startswith("Pages read ahead "):
            # "Pages read ahead 0.00/s, evicted without access 0.00/s, Random read ahead 0.00/s"
            for label, field in (("read ahead ", "read_ahead_per_second"),
                                 ("evicted without access ", "evicted_without_access_per_second"),
                                 ("Random read ahead ", "random_read_ahead_per_second")):
                number = _per_second_after(line, label)
                if number is not None:
                    target[prefix + field] = number
        elif line.startswith("Pages read "):
            store(target, (prefix + "pages_read", prefix + "pages_created", prefix + "pages_written"),
                  ints_after(line, ("Pages read", "created", "written")))
        elif line.startswith("Pages made young "):
            store(target, (prefix + "pages_made_young", prefix + "pages_not_made_young"),
                  ints_after(line, ("made young", "not young")))
        else:
            return False
        return True
    if line.startswith("Pending writes:"):
        store(target, (prefix + "pending_writes_lru", prefix + "pending_writes_flush_list",
                       prefix + "pending_writes_single_page"),
              ints_after(line, ("LRU", "flush list", "single page")))
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
        store(target, (prefix + "lru_length_pages", prefix + "unzip_lru_length_pages"),
              ints_after(line, ("LRU len:", "unzip_LRU len:")))
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
            store(values, ("innodb_mem_read_views_bytes",), [to_int(line.rsplit(None, 1)[-1])])
        elif line.startswith("Total memory allocated "):
            # "Total memory allocated 20634452; in additional pool allocated 675584"
            store(values, ("innodb_mem_total_allocated_bytes", "innodb_mem_additional_pool_bytes"),
                  ints_after(line, ("Total memory allocated", "additional pool allocated")))
        elif line.startswith("Total large memory allocated "):
            store(values, ("innodb_mem_total_large_allocated_bytes",), [to_int(line.rsplit(None, 1)[-1])])
        return
    if line.startswith("Dictionary memory allocated "):
        store(values, ("innodb_mem_dictionary_bytes",), [to_int(line.rsplit(None, 1)[-1])])
    elif line.startswith("Percent of dirty pages"):
        store(values, ("innodb_bp_dirty_pages_percent",), [to_float(line.rsplit(None, 1)[-1])])
    elif line.startswith("Max dirty pages percent:"):
        store(values, ("innodb_bp_max_dirty_pages_percent",), [to_float(line.rsplit(None, 1)[-1])])
    else:
        _pool_line(values, "innodb_bp_", line)


def individual_buffer_pools(state: ScanState, line: str) -> None:
    if line.startswith("---BUFFER POOL "):
        pool_id = line[len("---BUFFER POOL "):].strip()
        if pool_id.isascii() and pool_id.isdigit():
            state.pool = state.pools.setdefault(pool_id, {})
        else:
            state.pool = None
    elif state.pool is not None:
        _pool_line(state.pool, "innodb_pool_", line)
