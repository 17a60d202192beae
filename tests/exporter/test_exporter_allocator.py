"""glibc malloc settings of the exporter (agents/exporter/allocator.py), in a child process so
this test's own heap is left as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# 1500 buffers of 60 KB (under the 64 KB mmap threshold, so on the heap), all freed but the last,
# which pins the top of the heap: ~90 MB free inside the heap, which only malloc_trim gives back.
CHILD = """
import re, sys
from mysql_snmp.agents.exporter import allocator

def rss_kb():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1))

print(allocator.tune_malloc())
buffers = [bytearray(60 * 1024) for _ in range(1500)]
last = buffers.pop()
del buffers
freed = rss_kb()
allocator.release_free_memory()
print(freed, rss_kb())
"""


def test_the_settings_are_accepted_and_a_trim_gives_freed_heap_pages_back():
    answer = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, check=True)
    accepted, sizes = answer.stdout.split("\n", 1)
    assert accepted == "True"
    before, after = map(int, sizes.split())
    assert before > 80_000  # the freed buffers are still resident
    assert before - after > 60_000, (before, after)
