"""What one answer from the server may cost the agent: rows, bytes, time; and a way to stop reading it.

A server (or anything listening on its port) decides how much it sends: a result that never
ends would otherwise grow the agent by tens of MB a second until the kernel kills it, and a
steady trickle defeats the socket's read timeout, which only bounds the gap between two
packets.  ``GuardedConnection`` is pymysql's connection with what it reads counted against a
``ReadGuard``: past ``MAX_ANSWER_ROWS`` rows, ``MAX_ANSWER_BYTES`` bytes or the guard's
deadline, or once ``abort()`` is called from another thread (SIGTERM), the read stops with
``ReadStopped`` and the connection is closed: what is still on the wire is never read.

Bytes, the deadline and the abort are checked where the socket is read (once per buffer
refill, not per row), rows where pymysql reads a packet; the greeting, read before the
socket's reader can be swapped, is checked read by read.

pymysql also decodes text strictly; the server's bytes need not be UTF-8 (a latin1 table name, a
corrupt value), so text columns are decoded with invalid bytes kept as ``\\xNN`` escapes: one
odd value costs its own parse, not the whole collection.
"""

from __future__ import annotations

import functools
import io
import operator
import socket
import time

import pymysql

MAX_ANSWER_ROWS = 250_000
MAX_ANSWER_BYTES = 16 << 20

class ReadStopped(Exception):
    """An answer was cut off; ``reason`` is what the collector counts (too_large, timeout, connection)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class ReadGuard:
    """The budget of the answer being read; ``start()`` before each statement's answer."""

    __slots__ = ("rows_left", "bytes_left", "deadline", "aborted", "max_rows", "max_bytes", "_socket")

    def __init__(self, max_rows: int | None = None, max_bytes: int | None = None):
        self.max_rows = MAX_ANSWER_ROWS if max_rows is None else max_rows
        self.max_bytes = MAX_ANSWER_BYTES if max_bytes is None else max_bytes
        self.aborted = False
        self._socket: socket.socket | None = None
        self.start(None)

    def start(self, deadline: float | None) -> None:
        self.rows_left = self.max_rows + 16  # the rows, and the result's head (columns, EOF)
        self.bytes_left = self.max_bytes
        self.deadline = float("inf") if deadline is None else deadline

    def abort(self) -> None:
        """Stop the read in progress now (another thread): the blocked recv returns at once."""
        self.aborted = True
        sock = self._socket
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def check(self, nbytes: int) -> None:
        """Before reading ``nbytes`` more: raise ReadStopped if they may not be read."""
        self.bytes_left -= nbytes
        if self.bytes_left < 0 or self.aborted or time.monotonic() > self.deadline:
            raise self.why_stopped()

    def why_stopped(self) -> ReadStopped:
        if self.aborted:
            return ReadStopped("stopped reading: the agent is shutting down", "connection")
        if self.bytes_left < 0:
            return ReadStopped(f"the answer exceeds {self.max_bytes >> 20} MiB (MAX_ANSWER_BYTES); "
                               "stopped reading and closed the connection", "too_large")
        if self.rows_left < 0:
            return ReadStopped(f"the answer exceeds {self.max_rows} rows (MAX_ANSWER_ROWS); "
                               "stopped reading and closed the connection", "too_large")
        return ReadStopped("the answer was still arriving at the deadline; stopped reading and "
                           "closed the connection", "timeout")


class _GuardedSocketReader(socket.SocketIO):
    """The socket as pymysql's buffered reader sees it: each refill is checked against the guard."""

    def __init__(self, sock: socket.socket, guard: ReadGuard):
        super().__init__(sock, "rb")
        self._guard = guard

    def readinto(self, buffer) -> int:
        guard = self._guard
        guard.check(0)
        count = super().readinto(buffer)
        if count:
            guard.check(count)
        elif guard.aborted:
            raise guard.why_stopped()
        return count


class LenientResult(pymysql.connections.MySQLResult):
    """A result whose text columns decode even when the server's bytes are not valid in its charset.

    pymysql decodes a text column with ``data.decode(encoding)``, strictly; here the column gets
    no encoding and a converter that decodes with invalid bytes escaped: a C call, as fast.
    Other columns (numbers, dates) keep pymysql's conversion: a bad byte there fails the
    statement, and the connection is dropped (``MySQLConnection._failure``).
    """

    def _get_descriptions(self):
        super()._get_descriptions()
        self.converters = [(None, _lenient_decoder(encoding)) if encoding and converter is None
                           else (encoding, converter) for encoding, converter in self.converters]


@functools.lru_cache(maxsize=None)
def _lenient_decoder(encoding: str):
    return operator.methodcaller("decode", encoding, "backslashreplace")


class GuardedConnection(pymysql.connections.Connection):
    """pymysql's connection, what it reads counted against ``read_guard``; text decoded leniently."""

    def __init__(self, *args, read_guard: ReadGuard, **kwargs):
        self.read_guard = read_guard
        super().__init__(*args, **kwargs)

    def connect(self, sock=None):
        # The greeting and login go through pymysql's own socket reader: checked read by read.
        self._read_bytes = self._checked_read_bytes
        try:
            super().connect(sock)
        finally:
            del self._read_bytes
        # Nothing is in flight after the login (the server waits for a command): the reader
        # can be swapped without losing a byte.
        self._rfile = io.BufferedReader(_GuardedSocketReader(self._sock, self.read_guard))
        self.read_guard._socket = self._sock

    def _checked_read_bytes(self, num_bytes):
        try:
            self.read_guard.check(num_bytes)
        except ReadStopped:
            self._force_close()
            raise
        return pymysql.connections.Connection._read_bytes(self, num_bytes)

    def _read_query_result(self, unbuffered=False):
        # pymysql's own, with LenientResult for its MySQLResult.
        self._result = None
        result = LenientResult(self)
        if unbuffered:
            result.init_unbuffered_query()
        else:
            result.read()
        self._result = result
        if result.server_status is not None:
            self.server_status = result.server_status
        return result.affected_rows

    def release_result(self) -> None:
        """Forget the last result (pymysql keeps it, rows and all, until the next statement)."""
        if self._result is not None and not self._result.unbuffered_active:
            self._result = None

    def _read_packet(self, packet_type=pymysql.protocol.MysqlPacket):
        guard = self.read_guard
        guard.rows_left -= 1
        if guard.rows_left < 0:
            self._force_close()
            raise guard.why_stopped()
        return super()._read_packet(packet_type)
