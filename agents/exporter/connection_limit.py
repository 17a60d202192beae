"""Bounds on the exporter's HTTP connections: how many, how long idle, how long a request may take to arrive.

Each connection has a thread of its own, so a cap on connections is the cap on threads and
file descriptors.  A connection holds one of ``ConnectionSlots``' slots from accept to close:

- when every slot is taken, the longest-idle keep-alive connection (one waiting for the first
  byte of its next request) is closed to make room, as nginx reuses idle keep-alive
  connections; a scraper never waits behind clients that only hold a socket open;
- when none is idle, the new connection waits up to ``queue_wait`` seconds for a slot (later
  ones wait in the listen backlog meanwhile), then gets ``503 Service Unavailable`` and is
  closed; while the server stays saturated, further ones get their 503 without waiting again.

``DeadlineReader`` is the socket reader of one connection.  It gives the client ``idle_timeout``
seconds to start a request and, from its first byte, ``header_timeout`` seconds in total for the
request line and headers, however slowly the bytes trickle in (slowloris), so no client holds a
thread longer than that without sending a whole request.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from dataclasses import dataclass

LISTEN_BACKLOG = 512
QUEUE_WAIT = 1.0  # a connection over the cap waits this long for a slot before its 503
# Only a connection idle this long is closed for a newcomer: a just-accepted one whose request
# is still in flight is not idle in any useful sense.
MIN_IDLE_TO_EVICT = 1.0


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 64
    idle_timeout: float = 30.0  # keep-alive: longest wait for the next request (scrapes come every 15-60 s)
    header_timeout: float = 10.0  # from the first byte of a request to the end of its headers
    write_timeout: float = 30.0  # a whole response must leave in this time (Python's sendall timeout is total)


DEFAULTS = ConnectionLimits()

BUSY_RESPONSE = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 40\r\n\r\n"
                 b"too many connections, retry in a second\n")


class ConnectionSlots:
    """At most ``limit`` connections at once, closing idle ones first when a new one needs room."""

    def __init__(self, limit: int, queue_wait: float = QUEUE_WAIT, clock=time.monotonic):
        self.limit = limit
        self.queue_wait = queue_wait
        self._clock = clock
        self._free = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._idle: dict[int, tuple[float, socket.socket]] = {}  # id(reader) -> (idle since, socket)
        self._saturated_until = 0.0
        self.rejected = 0
        self.evicted = 0

    def acquire(self) -> bool:
        """A slot for a new connection (True), or False: answer 503 and close it."""
        if self._free.acquire(blocking=False):
            return True
        # A connection that has been idle for a second may become so while this one waits:
        # look again every tenth of a second.
        evicted = self._evict_longest_idle()
        wait = self.queue_wait if evicted or self._clock() >= self._saturated_until else 0.0
        deadline = self._clock() + wait
        while True:
            if self._free.acquire(timeout=max(0.0, min(0.1, deadline - self._clock()))):
                return True
            if self._clock() >= deadline:
                break
            self._evict_longest_idle()
        with self._lock:
            self.rejected += 1
            self._saturated_until = self._clock() + self.queue_wait
        return False

    def release(self) -> None:
        self._free.release()

    # idle() and busy() run twice per request on every connection: one dict store or pop each,
    # atomic under the interpreter lock, with no lock of our own.  A lock here made a convoy:
    # its holder preempted by the interpreter's switch, fifty request threads queued behind it.
    def idle(self, key: int, sock: socket.socket) -> None:
        self._idle[key] = (self._clock(), sock)

    def busy(self, key: int) -> None:
        self._idle.pop(key, None)

    def _evict_longest_idle(self) -> bool:
        with self._lock:  # one eviction at a time
            idle = self._idle.copy()
            if not idle:
                return False
            key = min(idle, key=lambda k: idle[k][0])
            entry = idle[key]
            since, sock = entry
            if self._clock() - since < MIN_IDLE_TO_EVICT:
                return False
            taken = self._idle.pop(key, None)
            if taken is not entry:  # busy (or idle again) since the copy: not this one
                if taken is not None:
                    self._idle.setdefault(key, taken)
                return False
            self.evicted += 1
        try:
            # The blocked read returns end-of-file: the handler closes and frees its slot.
            # (socket.socket's own shutdown: an SSLSocket's would tear down TLS state under the reader.)
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass
        return True


class DeadlineReader(io.RawIOBase):
    """A connection's socket as a raw stream whose reads honour the idle and header deadlines."""

    def __init__(self, sock: socket.socket, slots: ConnectionSlots | None, limits: ConnectionLimits = DEFAULTS,
                 clock=time.monotonic):
        self._sock = sock
        self._slots = slots
        self._idle_timeout = limits.idle_timeout
        self._header_timeout = limits.header_timeout
        self._clock = clock
        self._deadline: float | None = None
        self._awaiting_request = True

    def readable(self) -> bool:
        return True

    def await_request(self) -> None:
        """The next bytes start a new request: the idle deadline applies until the first arrives."""
        self._awaiting_request = True
        self._deadline = None

    def request_read(self) -> None:
        """The request line and headers are in: no header deadline while the answer is made."""
        self._deadline = None
        self._awaiting_request = False

    def readinto(self, buffer) -> int:
        waiting_for_first_byte = self._awaiting_request
        if waiting_for_first_byte:
            timeout = self._idle_timeout
            if self._slots is not None:
                self._slots.idle(id(self), self._sock)
        elif self._deadline is not None:
            timeout = self._deadline - self._clock()
            if timeout <= 0:
                raise TimeoutError("request headers not received in time")
        else:
            timeout = self._idle_timeout
        try:
            self._sock.settimeout(timeout)
            received = self._sock.recv_into(buffer)
        finally:
            if waiting_for_first_byte and self._slots is not None:
                self._slots.busy(id(self))
        if waiting_for_first_byte and received:
            self._awaiting_request = False
            self._deadline = self._clock() + self._header_timeout
        return received

    def close(self) -> None:
        if self._slots is not None:
            self._slots.busy(id(self))
        super().close()


def reject(sock: socket.socket, tls: bool) -> None:
    """A connection over the cap: a short 503 (plain HTTP; a TLS one is only closed, since its
    handshake would have to run in the accepting thread)."""
    if tls:
        return
    try:
        sock.settimeout(0.5)
        sock.sendall(BUSY_RESPONSE)
    except OSError:
        pass
