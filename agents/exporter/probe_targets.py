"""/probe targets: one spelling per server, and a bounded, self-cleaning set of them.

``?target=`` is whatever an unauthenticated client writes: ``127.0.0.1:033306``, ``127.1:33306``,
``LOCALHOST.:33306`` and ``[::1]:33306`` name servers other spellings name too.  Keyed as
written, each spelling got a Target of its own, with a persistent MySQL connection kept for
ever: three requests used up an account limited to ``MAX_USER_CONNECTIONS 3`` and the /metrics
target could not connect any more.  ``canonical_target`` writes every spelling of one address
the same way, as the resolver reads it (glibc's inet_aton for IPv4: ``127.1`` and ``0x7f.0.0.1``
are 127.0.0.1); the exporter keys, checks and connects with that one.  ``ProbeTargets`` keeps at
most ``MAX_PROBE_TARGETS`` of them, least recently scraped first out, and closes any not scraped
for ``PROBE_IDLE_SECONDS`` (checked at each /probe request and every quarter of that time): a
target Prometheus stopped scraping gives its connection back.  Targets are closed one after another
by one thread, not a thread each: 500 targets going idle at once do not start 500 threads.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import threading
import time
from collections import OrderedDict, deque
from typing import Callable

from ..config.settings import ConfigError, parse_port

log = logging.getLogger(__name__)

MAX_PROBE_TARGETS = 500
# Four missed scrapes at Prometheus' default interval of a minute.
PROBE_IDLE_SECONDS = 300.0


def canonical_target(address: str) -> str:
    """``host:port``, ``[v6]:port`` or ``unix:///path``, written one way per address."""
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        path = path[2:] if path.startswith("//") else path
        if not path.startswith("/"):
            raise ConfigError(f"target {address!r}: a unix socket needs an absolute path (unix:///path)")
        return "unix://" + os.path.normpath(path).replace("//", "/")
    host, sep, port = address.rpartition(":")
    if not sep or not host:
        raise ConfigError(f"target {address!r} is not host:port or unix:///path")
    number = parse_port(port, f"target {address!r}")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return f"[{ipaddress.IPv6Address(host).compressed}]:{number}"
    except ValueError:
        pass
    try:
        host = socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        host = host.lower().rstrip(".")  # a DNS name: case and the root's dot change nothing
    if not host:
        raise ConfigError(f"target {address!r} has no host")
    return f"{host}:{number}"


class ProbeTargets:
    """Targets by (canonical target, auth module): bounded, least recently used out, idle ones closed."""

    def __init__(self, limit: int = MAX_PROBE_TARGETS, idle_seconds: float = PROBE_IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._targets: OrderedDict[tuple[str, str], object] = OrderedDict()
        # Idle targets also go when no request comes at all: a sweeper, from the first target on.
        self._closed = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._closer = Closer()

    def __len__(self) -> int:
        return len(self._targets)

    def get(self, key: tuple[str, str]):
        """The remembered target (now the most recently used), or None; idle ones are closed first."""
        with self._lock:
            gone = self._take_idle()
            target = self._targets.get(key)
            if target is not None:
                self._targets.move_to_end(key)
        self._closer.close_later(gone)
        return target

    def add(self, key: tuple[str, str], created):
        """Remember ``created`` unless another thread remembered one first; return the one to use."""
        gone = []
        with self._lock:
            existing = self._targets.get(key)
            if existing is not None:
                gone.append(created)
                created = existing
            else:
                self._targets[key] = created
                while len(self._targets) > self.limit:
                    gone.append(self._targets.popitem(last=False)[1])
                if self._sweeper is None:
                    self._sweeper = threading.Thread(target=self._sweep, name="probe-target-sweeper", daemon=True)
                    self._sweeper.start()
        self._closer.close_later(gone)
        return created

    def take_all(self) -> list:
        """Forget every target (the caller closes them); the sweeper stops."""
        self._closed.set()
        with self._lock:
            targets = list(self._targets.values())
            self._targets.clear()
        return targets

    def _sweep(self) -> None:
        while not self._closed.wait(self.idle_seconds / 4):
            with self._lock:
                gone = self._take_idle()
            self._closer.close_later(gone)

    def _take_idle(self) -> list:
        # Least recently used first: the sweep stops at the first target in use.
        cutoff = self._clock() - self.idle_seconds
        gone = []
        while self._targets:
            key, oldest = next(iter(self._targets.items()))
            if oldest.last_used > cutoff:
                break
            del self._targets[key]
            gone.append(oldest)
        return gone


class Closer:
    """Closes targets in the background, one after another, on one thread started when needed
    (closing waits for a collection in progress, after stopping its reads: not on a request's time)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: deque = deque()
        self._thread: threading.Thread | None = None

    def close_later(self, targets: list) -> None:
        if not targets:
            return
        with self._lock:
            self._pending.extend(targets)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="close-targets", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                target = self._pending.popleft()
            try:
                target.close()
            except Exception:  # one target's failure must not leave the others open
                log.exception("closing a /probe target failed")
