"""glibc malloc settings for the exporter, set in the process so every way of starting it gets them.

A scrape builds and drops response bodies and result sets of 100 KB to 1 MB.  glibc's dynamic
mmap threshold rises after the first such buffer is freed, so later ones come from the heap, and
the freed space stays resident there as the high-water mark; each thread that allocates also gets
its own arena.  Fixing the mmap threshold, keeping two arenas (request threads and the collector)
and giving free heap pages back after each /metrics response keep 1.3 MB (default collectors) to
2.7 MB (every collector) less resident after 200 scrapes, for no measurable CPU per scrape
(tests/bench/bench_exporter.py).  On a libc without these calls (musl) nothing is changed.
Python's own collector is told the same thing once at start: what start-up built stays.
"""

from __future__ import annotations

import ctypes
import gc
import logging

log = logging.getLogger(__name__)

# mallopt() parameters, from glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

# Buffers from this size up get their own mapping, returned to the kernel when freed.
MMAP_THRESHOLD_BYTES = 64 * 1024
# Free space at the top of the heap beyond this goes back to the kernel at once.
TRIM_THRESHOLD_BYTES = 128 * 1024
ARENAS = 2


def _glibc():
    libc = ctypes.CDLL(None)  # the C library the interpreter already uses
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


_LIBC = _glibc()


def tune_malloc() -> bool:
    """Set the thresholds and the arena count; call before any thread starts.  False when the C
    library is not glibc or refused a setting (mallopt returns 0 on error)."""
    if _LIBC is None:
        return False
    settings = ((M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES), (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES),
                (M_ARENA_MAX, ARENAS))
    refused = [parameter for parameter, value in settings if _LIBC.mallopt(parameter, value) == 0]
    if refused:
        log.debug("mallopt refused parameters %s", refused)
    return not refused


# A response this big (hundreds of thousands of series) is followed by a full garbage collection:
# whatever of its collection sits in a reference cycle is freed before the trim, not at some later
# collection, and the trim then gives its pages back.
BIG_RESPONSE_BYTES = 4 * 1024 * 1024


def release_free_memory(response_bytes: int = 0) -> None:
    """Give the heap's free pages back to the kernel (malloc_trim(0)): after a response, what the
    scrape freed would otherwise stay resident until the next one reuses it."""
    if response_bytes > BIG_RESPONSE_BYTES:
        gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def freeze_startup_objects() -> None:
    """Leave what start-up built out of the cyclic collector's walks, for good.

    The catalog, the parsers' tables and the imported modules (~40,000 objects) live as long as
    the process; a full collection walked them all every ~150 scrapes (~0.2 ms a scrape on
    average).  Collected first, so no start-up garbage is frozen with them."""
    gc.collect()
    gc.freeze()
