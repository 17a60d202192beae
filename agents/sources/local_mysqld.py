"""Is the monitored mysqld on this host, and which process is it?  (Shared by host and process.)

Host and process metrics only mean something when the agent runs next to the
server.  In "auto" mode the target must be a Unix socket or an address of this
machine, and the mysqld process is found from the server's own ``pid_file``
variable, else by name among local processes (matching datadir and port).
The answer is logged once, not at every collection.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

from ..config.settings import ConnectionSettings
from mysql_snmp.parsers.host import pick_mysqld_process, pid_from_pid_file_text

log = logging.getLogger(__name__)

# psutil is imported in the functions that use it: an exporter whose server is remote, or
# with the host collector off, never loads it (~1 MB of its RSS).


class LocalMysqld:
    def __init__(self, settings: ConnectionSettings, mode: str = "auto"):
        self.settings = settings
        self.mode = mode  # "auto", "on" (host metrics even for a remote server; never its process) or "off"
        self._pid: int | None = None
        self._started: float | None = None  # create_time of _pid, so a reused pid is noticed
        self._confirmed: int | None = None  # _pid, just checked by known_pid(): pid() takes it as it is
        self._target_is_local: bool | None = None
        self._said: str | None = None

    def host_metrics_wanted(self) -> str | None:
        """None when host metrics should be collected, else why not."""
        if self.mode == "off":
            return "host metrics are off (--host-metrics off)"
        if self.mode == "on" or self.target_is_local():
            return None
        return self._say(f"{self.settings.target} is not on this host: host and process metrics are off")

    def target_is_local(self) -> bool:
        if self._target_is_local is None:
            self._target_is_local = _is_local_target(self.settings)
        return self._target_is_local

    def pid(self, variables: dict | None) -> int | None:
        """The pid of the monitored mysqld, or None (with one log line saying why)."""
        import psutil
        # Even with host metrics forced on, a remote server's process is not ours to
        # measure: a local mysqld found by name would be some other server.
        if self.mode == "off" or not self.target_is_local():
            return None
        confirmed, self._confirmed = self._confirmed, None
        if confirmed is not None and confirmed == self._pid:
            return confirmed
        if self._pid is not None and _same_process(self._pid, self._started):
            return self._pid
        variables = variables or {}
        datadir, port = variables.get("datadir"), variables.get("port") or self.settings.port
        # The pid file may name a process of another pid namespace (mysqld in a container):
        # only a mysqld whose command line does not contradict datadir and port is ours.
        pid = _confirmed(_pid_from_file(variables.get("pid_file")), datadir, port)
        if pid is None:
            pid = _pid_by_name(_candidates(psutil.process_iter(["pid", "name", "cmdline"])), datadir, port)
        started = _start_time(pid) if pid is not None else None
        if started is None:  # not found, or it exited since (mysqld restarting)
            self._pid = None
            self._say(f"no local mysqld process found for {self.settings.target}: process metrics are off")
            return None
        self._pid, self._started = pid, started
        self._say(f"monitoring mysqld process {pid} for {self.settings.target}")
        return pid

    def known_pid(self) -> int | None:
        """The pid found by an earlier pid() while it is still that process, else None; the next pid()
        takes it without checking again."""
        if self.mode == "off" or not self.target_is_local() or self._pid is None:
            return None
        self._confirmed = self._pid if _same_process(self._pid, self._started) else None
        return self._confirmed

    def forget(self) -> None:
        self._pid = None
        self._confirmed = None

    def _say(self, message: str) -> str:
        if message != self._said:
            log.info("%s", message)
            self._said = message
        return message


def _is_local_target(settings: ConnectionSettings) -> bool:
    import psutil
    if settings.uses_socket:
        return True
    host = settings.host or "localhost"
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    local = {"127.0.0.1", "::1"}
    for entries in psutil.net_if_addrs().values():
        local.update(entry.address.split("%")[0] for entry in entries)
    return any(address in local or address.startswith("127.") for address in addresses)


def _pid_from_file(pid_file: object) -> int | None:
    if not pid_file:
        return None
    try:
        return pid_from_pid_file_text(Path(str(pid_file)).read_bytes())
    except OSError:  # another user's file, or mysqld runs in a container
        return None


def _candidates(processes) -> list[tuple[int, str, list[str] | None]]:
    return [(p.info["pid"], p.info.get("name") or "", p.info.get("cmdline")) for p in processes]


def _confirmed(pid: int | None, datadir: object, port: object) -> int | None:
    import psutil
    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
        candidate = (pid, process.name(), process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return _pid_by_name([candidate], datadir, port)


def _pid_by_name(candidates, datadir: object, port: object) -> int | None:
    return pick_mysqld_process(candidates, datadir=str(datadir) if datadir else None,
                               port=int(port) if port else None)


def _start_time(pid: int) -> float | None:
    import psutil
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _same_process(pid: int, started: float | None) -> bool:
    import psutil
    try:
        process = psutil.Process(pid)
        return process.is_running() and process.create_time() == started
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
