"""The socket to the AgentX master, read by a thread of its own.

A walk reaches the subagent as one GetNext per object, each sent only after the previous
answer came back (snmpd forwards a GETBULK repetition by repetition), so the agent's cost per
read is paid once per object.  Read by asyncio, a read costs an epoll_wait and a callback
dispatch on top of the recv; a thread blocked in recv wakes straight into the handler and
answers from there, which measured about 12 us less agent CPU per GetNext (of ~32 us).

The event loop keeps everything else (connecting, the handshake's timeout, Pings, Notify,
Close); what the reader learns that concerns it is handed over with call_soon_threadsafe.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
from typing import Callable

from .codec import ProtocolError

log = logging.getLogger(__name__)

_READ_SIZE = 262144


class SessionLost(Exception):
    """The connection to the master is gone (or unusable)."""


class MasterSocket:
    """A connected stream socket.  After ``start(on_data)``, ``on_data(bytes)`` is called in the
    reader thread for each read and may raise SessionLost or ProtocolError (or any error) to end
    the connection.  ``closed`` is a future of the loop, resolved with the reason the connection
    ended (always an exception)."""

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop, send_timeout: float) -> None:
        self._sock = sock
        self._loop = loop
        self._on_data: Callable[[bytes], None] | None = None
        self._write_lock = threading.Lock()
        self.closed: asyncio.Future = loop.create_future()
        self.closed.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved: no warning
        self._ended = threading.Event()
        sock.setblocking(True)
        # A master that stops reading must not block a writer for ever: send() fails after this
        # (SO_SNDTIMEO; recv stays a plain blocking call, no poll() before each read).
        seconds = max(send_timeout, 0.001)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                        struct.pack("ll", int(seconds), int((seconds % 1) * 1_000_000)))
        self._reader = threading.Thread(target=self._read_loop, name="agentx-reader", daemon=True)

    @classmethod
    async def connect(cls, loop: asyncio.AbstractEventLoop, family: int, address,
                      send_timeout: float) -> "MasterSocket":
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
            if family != socket.AF_UNIX:
                # One small PDU per answer: Nagle would hold each until the previous is acked.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except BaseException:
            sock.close()
            raise
        return cls(sock, loop, send_timeout)

    def start(self, on_data: Callable[[bytes], None]) -> None:
        self._on_data = on_data
        self._reader.start()

    def write(self, data: bytes) -> None:
        """Send from either thread; a failure ends the connection and raises SessionLost."""
        if self._ended.is_set():
            raise SessionLost("not connected")
        try:
            with self._write_lock:
                self._sock.sendall(data)
        except OSError as exc:
            self.fail(SessionLost(f"writing to the master failed: {exc}"))
            raise SessionLost(f"writing to the master failed: {exc}") from None

    def fail(self, reason: Exception) -> None:
        """End the connection (from either thread) for ``reason``."""
        if self._ended.is_set():
            return
        self._ended.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the reader; it closes the socket
        except OSError:
            pass
        try:
            self._loop.call_soon_threadsafe(self._resolve, reason)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def close(self) -> None:
        self.fail(SessionLost("connection closed by the agent"))

    def _resolve(self, reason: Exception) -> None:
        if not self.closed.done():
            self.closed.set_exception(reason)

    def _read_loop(self) -> None:
        self.fail(self._read_until_the_end())
        with self._write_lock:  # no writer is inside sendall on a descriptor being reused
            self._sock.close()

    def _read_until_the_end(self) -> Exception:
        """Hand each read to on_data; the reason the connection ended."""
        while True:
            try:
                data = self._sock.recv(_READ_SIZE)
            except OSError as exc:
                return SessionLost(f"master closed the connection ({exc})")
            if not data:
                return SessionLost("master closed the connection")
            try:
                self._on_data(data)
            except (SessionLost, ProtocolError) as exc:
                return exc
            except Exception as exc:  # noqa: BLE001  (a bug must cost the connection, not the agent)
                log.exception("AgentX reader failed")
                return exc
