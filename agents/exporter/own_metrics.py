"""The exporter's own process and build metrics, as mysqld_exporter serves them on /metrics.

``process_*`` (CPU, memory, file descriptors, start time) are read from /proc under the
names every Prometheus client library gives them, so the usual exporter dashboards and
alerts find them; ``mysqld_exporter_build_info`` keeps upstream's name so dashboards
listing exporter versions find this one too, with its own version and Python in place of Go.
Where /proc cannot be read (not Linux), the process families are left out, never invented.
"""

from __future__ import annotations

import functools
import logging
import os
import sys

from ..collection import AGENT_VERSION
from .metric_types import CounterMetricFamily, GaugeMetricFamily, Metric

log = logging.getLogger(__name__)

PROC_SELF = "/proc/self"
# Fields of /proc/<pid>/stat counted after the ")" that ends the command name (proc(5) numbers
# them from 1 for the pid: field n is at index n - 3 here).
_UTIME, _STIME, _STARTTIME, _VSIZE, _RSS = 11, 12, 19, 20, 21


def build_info() -> Metric:
    family = GaugeMetricFamily(
        "mysqld_exporter_build_info",
        "A metric with a constant '1' value labeled by version, revision, branch, goversion from which "
        "mysqld_exporter was built (here: mysql-snmp, goversion empty, pythonversion set).",
        labels=["version", "revision", "branch", "goversion", "pythonversion", "implementation"])
    family.add_metric([AGENT_VERSION, "", "", "", sys.version.split()[0], "mysql-snmp"], 1.0)
    return family


@functools.lru_cache(maxsize=1)
def _clock_ticks() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError):
        return 100.0  # USER_HZ on every Linux architecture


@functools.lru_cache(maxsize=1)
def _boot_time(proc: str = "/proc") -> float | None:
    """The system's boot time (Unix seconds): a process's start is counted in ticks since then."""
    try:
        with open(os.path.join(proc, "stat"), "rb") as stat:
            for line in stat:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def _stat_families(process: str, boot_time: float) -> list[Metric]:
    with open(os.path.join(process, "stat"), "rb") as stat:
        # The command name may hold spaces and parentheses: the fields start after the last ")".
        fields = stat.read().rpartition(b")")[2].split()
    ticks = _clock_ticks()
    return [
        GaugeMetricFamily("process_virtual_memory_bytes", "Size of the exporter's virtual address space, in bytes.",
                          value=float(fields[_VSIZE])),
        GaugeMetricFamily("process_resident_memory_bytes", "Memory of the exporter resident in RAM, in bytes.",
                          value=float(fields[_RSS]) * os.sysconf("SC_PAGE_SIZE")),
        GaugeMetricFamily("process_start_time_seconds", "When the exporter process started, in Unix seconds.",
                          value=boot_time + float(fields[_STARTTIME]) / ticks),
        CounterMetricFamily("process_cpu_seconds_total", "CPU time the exporter has used, user and system, in seconds.",
                            value=(float(fields[_UTIME]) + float(fields[_STIME])) / ticks),
    ]


# Go's procfs reads "unlimited" in /proc/<pid>/limits as the largest uint64, and its process
# collector serves that as process_virtual_memory_max_bytes (1.8446744073709552e+19): the same
# number here.  prometheus_client serves no such family, and leaves an unlimited process_max_fds out.
UNLIMITED_ADDRESS_SPACE = float(2**64 - 1)


def _fd_families(process: str) -> list[Metric]:
    families = [GaugeMetricFamily("process_open_fds", "File descriptors the exporter has open.",
                                  value=float(len(os.listdir(os.path.join(process, "fd")))))]
    with open(os.path.join(process, "limits"), "rb") as limits:
        for line in limits:
            if line.startswith(b"Max open files"):
                soft = line.split()[3]
                if soft != b"unlimited":
                    families.append(GaugeMetricFamily("process_max_fds",
                                                      "The most file descriptors the exporter may open.",
                                                      value=float(soft)))
            elif line.startswith(b"Max address space"):
                soft = line.split()[3]
                families.append(GaugeMetricFamily(
                    "process_virtual_memory_max_bytes", "The most virtual memory the exporter may map, in bytes.",
                    value=UNLIMITED_ADDRESS_SPACE if soft == b"unlimited" else float(soft)))
    return families


def process_families(process: str = PROC_SELF) -> list[Metric]:
    """The exporter process's CPU, memory and descriptors, read now."""
    boot_time = _boot_time()
    if boot_time is None:
        return []
    families: list[Metric] = []
    for read in (functools.partial(_stat_families, process, boot_time), functools.partial(_fd_families, process)):
        try:
            families.extend(read())
        except (OSError, IndexError, ValueError) as exc:
            log.debug("process metrics from %s: %s", process, exc)
    return families
