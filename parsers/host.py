"""Host and mysqld process figures from what psutil returns (pure: no psutil calls).

The collection layer calls psutil (getloadavg, cpu_times, virtual_memory,
swap_memory, boot_time, cpu_count; Process.memory_info, cpu_times, ...) and
hands the results here.  Any argument may be None: the values it would give
are then absent.  Fields a platform lacks (buffers/cached outside Linux) are
absent too, never 0.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, NamedTuple, Sequence

from .types import Value, labels_of
from .values import CatalogValues

MYSQLD_NAMES = frozenset({"mysqld", "mariadbd"})
# Linux counts guest time inside user and nice: left out so the modes sum to the total.
_CPU_MODES_COUNTED_ELSEWHERE = frozenset({"guest", "guest_nice"})


class PageFaults(NamedTuple):
    minor: int
    major: int


def _field(result: object, name: str) -> object:
    if isinstance(result, Mapping):
        return result.get(name)
    return getattr(result, name, None)


def _fields(result: object) -> dict[str, object]:
    if isinstance(result, Mapping):
        return dict(result)
    as_dict = getattr(result, "_asdict", None)
    return dict(as_dict()) if callable(as_dict) else {}


def _put(values: dict[str, Value], name: str, value: object) -> None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        values[name] = value


def host_values(
    loadavg: Sequence[float] | None = None,
    cpu_times: object = None,
    virtual_memory: object = None,
    swap_memory: object = None,
    boot_time: float | None = None,
    cpu_count: int | None = None,
) -> CatalogValues:
    reading = CatalogValues()
    values = reading.values
    if loadavg is not None:
        for name, value in zip(("host_load1", "host_load5", "host_load15"), loadavg):
            _put(values, name, value)
    if cpu_times is not None:
        for mode, seconds in _fields(cpu_times).items():
            if mode not in _CPU_MODES_COUNTED_ELSEWHERE and isinstance(seconds, (int, float)):
                reading.add_series("host_cpu_seconds", labels_of(mode=mode), seconds)
    if virtual_memory is not None:
        for field in ("total", "available", "used", "free", "buffers", "cached"):
            _put(values, f"host_memory_{field}_bytes", _field(virtual_memory, field))
    if swap_memory is not None:
        for field in ("total", "used", "free"):
            _put(values, f"host_swap_{field}_bytes", _field(swap_memory, field))
        _put(values, "host_swap_in_bytes", _field(swap_memory, "sin"))
        _put(values, "host_swap_out_bytes", _field(swap_memory, "sout"))
    _put(values, "host_boot_time_seconds", boot_time)
    _put(values, "host_cpus", cpu_count)
    return reading


def process_values(
    memory_info: object = None,
    cpu_times: object = None,
    num_threads: int | None = None,
    num_fds: int | None = None,
    io_counters: object = None,
    page_faults: PageFaults | None = None,
    create_time: float | None = None,
    cgroup_memory_limit: int | None = None,
) -> CatalogValues:
    """Values of the mysqld process (psutil.Process results, /proc stat page faults, cgroup limit)."""
    reading = CatalogValues()
    values = reading.values
    if memory_info is not None:
        _put(values, "process_resident_memory_bytes", _field(memory_info, "rss"))
        _put(values, "process_virtual_memory_bytes", _field(memory_info, "vms"))
    if cpu_times is not None:
        _put(values, "process_cpu_user_seconds", _field(cpu_times, "user"))
        _put(values, "process_cpu_system_seconds", _field(cpu_times, "system"))
    _put(values, "process_threads", num_threads)
    _put(values, "process_open_files", num_fds)
    if io_counters is not None:
        _put(values, "process_io_read_bytes", _field(io_counters, "read_bytes"))
        _put(values, "process_io_write_bytes", _field(io_counters, "write_bytes"))
    if page_faults is not None:
        _put(values, "process_minor_page_faults", page_faults.minor)
        _put(values, "process_major_page_faults", page_faults.major)
    _put(values, "process_start_time_seconds", create_time)
    _put(values, "process_cgroup_memory_limit_bytes", cgroup_memory_limit)
    return reading


def page_faults_from_proc_stat(text: str) -> PageFaults | None:
    """Minor and major faults from /proc/<pid>/stat (psutil does not expose them on Linux).

    The command name (field 2) is in parentheses and may itself hold spaces or
    ")", so fields are counted after the last ")": minflt and majflt are
    fields 10 and 12 of proc(5).
    """
    _, paren, rest = text.rpartition(")")
    fields = rest.split()
    if not paren or len(fields) < 10:
        return None
    try:
        return PageFaults(minor=int(fields[7]), major=int(fields[9]))
    except ValueError:
        return None


class MemoryCgroup(NamedTuple):
    version: int  # 1: the v1 memory controller's hierarchy; 2: the unified hierarchy
    path: str  # as /proc/<pid>/cgroup prints it, from the hierarchy's root ("/system.slice/x")

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"


# cgroup v1 says "no limit" with the largest page counter times the page size
# (9223372036854771712 with 4 KiB pages, less with bigger pages): anything from 2^62 up
# (4 EiB) is that, not a limit a host could reach.
CGROUP_V1_UNLIMITED_FROM = 2**62


def memory_cgroup_from_proc_cgroup(text: str) -> MemoryCgroup | None:
    """The cgroup holding a process's memory limit, from /proc/<pid>/cgroup (cgroups(7)).

    Lines are ``id:controllers:path``.  A v1 ``memory`` controller line wins: on a hybrid
    host the unified ``0::`` line then carries no memory controller.
    """
    unified = None
    for line in text.splitlines():
        hierarchy, sep, rest = line.partition(":")
        controllers, sep2, path = rest.partition(":")
        if not sep or not sep2 or not path.startswith("/"):
            continue
        if "memory" in controllers.split(","):
            return MemoryCgroup(1, path)
        if hierarchy == "0" and controllers == "":
            unified = MemoryCgroup(2, path)
    return unified


def cgroup_memory_limit_from_text(text: str) -> int | None:
    """Bytes from memory.max (v2) or memory.limit_in_bytes (v1); None for no limit or bad text."""
    value = text.strip()
    if value == "max":
        return None
    try:
        limit = int(value)
    except ValueError:
        return None
    return limit if 0 < limit < CGROUP_V1_UNLIMITED_FROM else None


def cgroup_memory_limit_bytes(limit_texts: Iterable[str]) -> int | None:
    """The limit that binds: the smallest among a cgroup's and its ancestors' limit files."""
    limits = [limit for limit in map(cgroup_memory_limit_from_text, limit_texts) if limit is not None]
    return min(limits) if limits else None


def pid_from_pid_file_text(text: str | bytes) -> int | None:
    """The pid in mysqld's pid file (one number, then a newline); None when unreadable."""
    if isinstance(text, bytes):
        text = text.decode("ascii", errors="replace")
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not first.isascii() or not first.isdigit():
        return None
    pid = int(first)
    return pid if pid > 0 else None


def pick_mysqld_process(
    candidates: Iterable[tuple[int, str, Sequence[str] | None]],
    datadir: str | None = None,
    port: int | None = None,
) -> int | None:
    """The pid of the mysqld/mariadbd serving ``datadir``/``port`` among (pid, name, cmdline).

    A candidate whose command line names another datadir or port is excluded;
    among the rest, one naming ours wins over one that names nothing (it may
    read them from my.cnf).  Two equally good candidates: None, rather than
    watching the wrong server.
    """
    scored: list[tuple[int, int]] = []
    for pid, name, cmdline in candidates:
        args = list(cmdline or ())
        program = os.path.basename(args[0]) if args else ""
        if name not in MYSQLD_NAMES and program not in MYSQLD_NAMES:
            continue
        score = 0
        if datadir is not None:
            given = _option(args, "--datadir", "-h")
            if given is not None:
                if _same_dir(given, datadir):
                    score += 2
                else:
                    continue
        if port is not None:
            given = _option(args, "--port", "-P")
            if given is not None:
                if given.strip() == str(port):
                    score += 1
                else:
                    continue
        scored.append((score, pid))
    if not scored:
        return None
    best = max(score for score, _ in scored)
    winners = [pid for score, pid in scored if score == best]
    return winners[0] if len(winners) == 1 else None


def _option(args: list[str], long: str, short: str) -> str | None:
    """The last value of an option (mysqld lets later ones win); option names accept '_' for '-'."""
    found = None
    for index, arg in enumerate(args[1:], start=1):
        normal = arg.replace("_", "-") if arg.startswith("--") else arg
        if normal.startswith(long + "="):
            found = arg.split("=", 1)[1]
        elif normal == long or arg == short:
            found = args[index + 1] if index + 1 < len(args) else None
        elif arg.startswith(short) and len(arg) > len(short) and not arg.startswith("--"):
            found = arg[len(short) :]
    return found


def _same_dir(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)
