"""Listening sockets handed over by systemd socket activation (``--web.systemd-socket``).

The sd_listen_fds(3) protocol: a .socket unit binds the port, then starts the service
with the listening sockets as fds 3, 4, ... and says so in the environment:
LISTEN_FDS (how many), LISTEN_PID (for which process: the variables are inherited by
children, which must not take the sockets for theirs) and, optionally, LISTEN_FDNAMES
(colon-separated FileDescriptorName= values).
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Mapping, MutableMapping, Sequence

SD_LISTEN_FDS_START = 3
LISTEN_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")
# systemd's own default when LISTEN_FDNAMES names no socket.
UNNAMED = "unknown"

_CHECK_UNITS = ("check that a .socket unit with ListenStream= activates this service (the same unit name, "
                "or Sockets= in the .service) and that ExecStart= runs the exporter itself, not a wrapper that forks")


class SystemdSocketError(Exception):
    """systemd passed no usable listening socket; the message says what is missing and where to look."""


@dataclass(frozen=True)
class PassedFd:
    fd: int
    name: str


@dataclass(frozen=True)
class PassedSocket:
    socket: socket.socket
    fd: int
    name: str

    def describe(self) -> str:
        return f"systemd socket fd {self.fd} ({self.name})"


def _error(detail: str) -> SystemdSocketError:
    return SystemdSocketError(f"--web.systemd-socket: {detail}; {_CHECK_UNITS}")


def _decimal(variable: str, text: str, meaning: str) -> int:
    # Strict digits: int() would also take "+3", " 3" and "1_0", which systemd rejects.
    if not re.fullmatch(r"[0-9]{1,10}", text):
        raise _error(f"{variable}={text!r} is not {meaning}")
    return int(text)


def parse_listen_environment(environ: Mapping[str, str], pid: int) -> tuple[PassedFd, ...]:
    """The fds systemd passed to process ``pid``; SystemdSocketError when it passed none."""
    listen_pid = environ.get("LISTEN_PID")
    if listen_pid is None:
        raise _error("LISTEN_PID is not set, so systemd passed no sockets")
    owner = _decimal("LISTEN_PID", listen_pid, "a process id")
    if owner != pid:
        raise _error(f"LISTEN_PID={owner} names another process than this exporter (pid {pid}), "
                     "so the sockets were not passed to it")
    listen_fds = environ.get("LISTEN_FDS")
    if listen_fds is None:
        raise _error("LISTEN_FDS is not set, so systemd passed no sockets")
    count = _decimal("LISTEN_FDS", listen_fds, "a number of sockets")
    if count == 0:
        raise _error("LISTEN_FDS=0: systemd passed no sockets")
    names = environ["LISTEN_FDNAMES"].split(":") if "LISTEN_FDNAMES" in environ else []
    # A count mismatch is tolerated as mysqld_exporter (go-systemd) does: unnamed fds are "unknown".
    return tuple(PassedFd(SD_LISTEN_FDS_START + index, names[index] if index < len(names) and names[index] else UNNAMED)
                 for index in range(count))


def take_listen_environment(environ: MutableMapping[str, str] | None = None,
                            pid: int | None = None) -> tuple[PassedFd, ...]:
    """parse_listen_environment on os.environ, then unset the variables (sd_listen_fds(unset=1)),
    also on error, so no child process of the exporter takes them for its own."""
    environ = os.environ if environ is None else environ
    try:
        return parse_listen_environment(environ, os.getpid() if pid is None else pid)
    finally:
        for variable in LISTEN_VARIABLES:
            environ.pop(variable, None)


def _family_name(family: int) -> str:
    return getattr(family, "name", str(family))


def adopt(passed: PassedFd) -> PassedSocket:
    """The listening TCP socket at ``passed.fd``, its family (IPv4/IPv6) taken from the socket itself."""
    try:
        sock = socket.socket(fileno=passed.fd)
    except OSError as exc:
        raise _error(f"fd {passed.fd} ({passed.name}) is not an open socket ({exc.strerror})") from None
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            raise _error(f"fd {passed.fd} ({passed.name}) is an {_family_name(sock.family)} socket, "
                         "the exporter serves TCP: use ListenStream=[ADDRESS:]PORT")
        if sock.type != socket.SOCK_STREAM:
            raise _error(f"fd {passed.fd} ({passed.name}) is not a stream socket: use ListenStream=, "
                         "not ListenDatagram=")
        if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            raise _error(f"fd {passed.fd} ({passed.name}) is not listening: Accept=yes passes one connection "
                         "per service instance, the exporter needs Accept=no")
    except BaseException:
        sock.close()
        raise
    # As sd_listen_fds does (FD_CLOEXEC): programs the exporter runs must not hold the port open.
    sock.set_inheritable(False)
    # socketserver's accept loop expects a blocking socket, whatever flags its creator left on the fd.
    sock.setblocking(True)
    return PassedSocket(sock, passed.fd, passed.name)


def adopt_all(passed: Sequence[PassedFd]) -> list[PassedSocket]:
    adopted: list[PassedSocket] = []
    try:
        for one in passed:
            adopted.append(adopt(one))
    except BaseException:
        for sock in adopted:
            sock.socket.close()
        raise
    return adopted


def systemd_listeners() -> list[PassedSocket]:
    """The listening sockets systemd passed to this process; SystemdSocketError when there are none."""
    return adopt_all(take_listen_environment())
