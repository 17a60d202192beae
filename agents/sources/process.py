"""The mysqld process: memory, CPU, threads, files, I/O, page faults (psutil), when it runs here."""

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
    """The memory limit binding mysqld: its cgroup's or an ancestor's, whichever is smallest."""
    cgroup = memory_cgroup_from_proc_cgroup((proc / str(pid) / "cgroup").read_text())
    if cgroup is None:
        return None
    mount = mounts[cgroup.version]
    directory = mount / cgroup.path.lstrip("/")
    if not directory.is_dir():
        # mysqld is in another cgroup namespace (a container seen from the host, or the
        # reverse): its path does not name a directory here, and its parents would mislead.
        return None
    texts = []
    for level in (directory, *directory.parents):
        limit_file = level / cgroup.limit_file
        if limit_file.is_file():
            texts.append(limit_file.read_text())
        if level == mount:
            break
    return cgroup_memory_limit_bytes(texts)


class Process(LocalScraper):
    name = "process"
    catalog_kind = "process"
    description = "mysqld process memory, CPU, threads, files and I/O (psutil; only when mysqld is local)"

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
