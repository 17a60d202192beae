"""The mysqld process: memory, CPU, threads, files, I/O, page faults (psutil), when it runs here."""

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


def cgroup_memory_limit(pid: int, proc: Path = Path("/proc"), mounts: dict[int, Path] = CGROUP_MOUNT) -> int | None:
    """The memory limit binding mysqld: its cgroup's or an ancestor's, whichever is smallest.

    Read every scrape (a limit can change at any time), with plain os calls: pathlib's objects
    were a third of this source's cost."""
    with open(f"{proc}/{pid}/cgroup", encoding="utf-8", errors="replace") as file:
        cgroup = memory_cgroup_from_proc_cgroup(file.read())
    if cgroup is None:
        return None
    mount = os.path.normpath(mounts[cgroup.version])
    level = os.path.normpath(os.path.join(mount, cgroup.path.lstrip("/")))
    if not os.path.isdir(level):
        # mysqld is in another cgroup namespace (a container seen from the host, or the
        # reverse): its path does not name a directory here, and its parents would mislead.
        return None
    texts = []
    while True:
        try:
            with open(os.path.join(level, cgroup.limit_file), encoding="utf-8", errors="replace") as file:
                texts.append(file.read())
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            pass  # no limit file at this level
        parent = os.path.dirname(level)
        if level == mount or parent == level:
            break
        level = parent
    return cgroup_memory_limit_bytes(texts)


class Process(LocalScraper):
    name = "process"
    catalog_kind = "process"
    description = "mysqld process memory, CPU, threads, files and I/O (psutil; only when mysqld is local)"

    def runs_before_answers(self) -> bool:
        # Finding mysqld's pid reads global_variables (pid_file, datadir, port); once found it is known.
        return self.local.known_pid() is not None

    def collect(self, conn, server, context=None):
        pid = self.local.pid((context or {}).get("global_variables"))
        if pid is None:
            raise SourceUnavailable(f"no local mysqld process for {self.local.settings.target}")
        try:
            process = psutil.Process(pid)
            with process.oneshot():
                reading = process_values(
                    memory_info=_maybe(process.memory_info),
                    cpu_times=_maybe(process.cpu_times),
                    num_threads=_maybe(process.num_threads),
                    num_fds=_maybe(process.num_fds),
                    io_counters=_maybe(process.io_counters),
                    page_faults=_maybe(lambda: page_faults_from_proc_stat(Path(f"/proc/{pid}/stat").read_text())),
                    create_time=_maybe(process.create_time),
                    cgroup_memory_limit=_maybe(lambda: cgroup_memory_limit(pid)),
                )
        except psutil.NoSuchProcess:
            self.local.forget()  # mysqld restarted: find the new process next time
            raise SourceUnavailable(f"mysqld process {pid} is gone") from None
        return SourceResult(values=reading.values, series=reading.series)


SCRAPER = Process
