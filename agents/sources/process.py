"""The mysqld process: memory, CPU, threads, files, I/O, page faults (psutil), when it runs here."""

import functools
import os
from pathlib import Path

import psutil

from . import LocalScraper, SourceResult, SourceUnavailable
from mysql_snmp.parsers.host import (
    cgroup_memory_limit_bytes,
    memory_cgroup_from_proc_cgroup,
    page_faults_from_proc_stat,
    process_values,
)

# Where systemd and container runtimes mount the hierarchies (v1: one directory per controller).
CGROUP_MOUNT = {1: Path("/sys/fs/cgroup/memory"), 2: Path("/sys/fs/cgroup")}


def _maybe(read):
    """A psutil reading, or None when this platform or our privileges do not allow it."""
    try:
        return read()
    except (psutil.AccessDenied, NotImplementedError, AttributeError, OSError):
        return None


def read_small_file(path: str, limit: int = 65536) -> str:
    """A /proc or /sys file's text: one read() (a kernfs file is generated whole on the first),
    half the cost of open().read() in text mode, which the process source pays at every scrape."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        return os.read(descriptor, limit).decode("utf-8", "replace")
    finally:
        os.close(descriptor)


@functools.lru_cache(maxsize=16)
def _limit_files(mount: str, cgroup_path: str, limit_file: str) -> tuple[str, ...] | None:
    """The limit file of the cgroup and of each ancestor up to the mount, or None when the path
    names no directory here (mysqld in another cgroup namespace: a container seen from the host,
    or the reverse), where its parents would mislead.  Kept per path: the walk is a third of the
    source's cost and a cgroup holding a process cannot be removed (a move changes the path)."""
    mount = os.path.normpath(mount)
    level = os.path.normpath(os.path.join(mount, cgroup_path.lstrip("/")))
    if not os.path.isdir(level):
        return None
    files = []
    while True:
        files.append(os.path.join(level, limit_file))
        parent = os.path.dirname(level)
        if level == mount or parent == level:
            return tuple(files)
        level = parent


def cgroup_memory_limit(pid: int, proc: Path = Path("/proc"), mounts: dict[int, Path] = CGROUP_MOUNT) -> int | None:
    """The memory limit binding mysqld: its cgroup's or an ancestor's, whichever is smallest.

    The limits are read every scrape (one can change at any time)."""
    cgroup = memory_cgroup_from_proc_cgroup(read_small_file(f"{proc}/{pid}/cgroup"))
    if cgroup is None:
        return None
    files = _limit_files(str(mounts[cgroup.version]), cgroup.path, cgroup.limit_file)
    if files is None:
        return None
    texts = []
    for path in files:
        try:
            texts.append(read_small_file(path))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            pass  # no limit file at this level
    return cgroup_memory_limit_bytes(texts)


class Process(LocalScraper):
    name = "process"
    catalog_kind = "process"
    description = "mysqld process memory, CPU, threads, files and I/O (psutil; only when mysqld is local)"

    def __init__(self, local_mysqld):
        super().__init__(local_mysqld)
        self._process: psutil.Process | None = None

    def _process_of(self, pid: int) -> psutil.Process:
        # Kept while the pid holds: psutil.Process() reads /proc/PID/stat to identify it.
        if self._process is None or self._process.pid != pid:
            self._process = psutil.Process(pid)
        return self._process

    def runs_before_answers(self) -> bool:
        # Finding mysqld's pid reads global_variables (pid_file, datadir, port); once found it is known.
        return self.local.known_pid() is not None

    def collect(self, conn, server, context=None):
        pid = self.local.pid((context or {}).get("global_variables"))
        if pid is None:
            raise SourceUnavailable(f"no local mysqld process for {self.local.settings.target}")
        try:
            process = self._process_of(pid)
            with process.oneshot():
                reading = process_values(
                    memory_info=_maybe(process.memory_info),
                    cpu_times=_maybe(process.cpu_times),
                    num_threads=_maybe(process.num_threads),
                    num_fds=_maybe(process.num_fds),
                    io_counters=_maybe(process.io_counters),
                    page_faults=_maybe(lambda: page_faults_from_proc_stat(read_small_file(f"/proc/{pid}/stat"))),
                    create_time=_maybe(process.create_time),
                    cgroup_memory_limit=_maybe(lambda: cgroup_memory_limit(pid)),
                )
        except psutil.NoSuchProcess:
            self.local.forget()  # mysqld restarted: find the new process next time
            self._process = None
            raise SourceUnavailable(f"mysqld process {pid} is gone") from None
        return SourceResult(values=reading.values, series=reading.series)


SCRAPER = Process
