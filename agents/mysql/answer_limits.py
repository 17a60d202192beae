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

A result whose columns are all text or binary strings (SHOW GLOBAL STATUS and VARIABLES: ~1,230
rows a scrape) is read by ``GuardedConnection.read_text_rows``: each row packet's length-coded
strings go straight into ``str`` (``text_row``) without pymysql's per-packet objects and per-column
converters, 2.5x less CPU per row; the same bounds apply (a row counted per packet, bytes and
deadline where the socket is read) and bad bytes are escaped alike.
"""

from __future__ import annotations

import functools
import io
import operator
import socket
import struct
import time

import pymysql
from pymysql.constants import COMMAND, CR

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

    _fields: list | None = None
    _column_packets: tuple[bytes, ...] = ()

    @property
    def fields(self) -> list:
        """pymysql's column objects (a DictCursor reads them), made when first asked for."""
        if self._fields is None:
            self._fields = [pymysql.protocol.FieldDescriptorPacket(packet, self._encoding)
                            for packet in self._column_packets]
        return self._fields

    @fields.setter
    def fields(self, value: list) -> None:
        self._fields = value

    def _get_descriptions(self):
        # The column definitions are read as bytes; the same bytes (the same statement's columns,
        # every scrape, on any target of the same server version) were parsed before: pymysql
        # parses only new ones.
        connection = self.connection
        packets = tuple(connection.read_column_packets(self))
        if len(packets) != self.field_count:
            connection._force_close()
            raise MalformedRow(CR.CR_MALFORMED_PACKET, f"{len(packets)} column definitions, "
                                                       f"the result announced {self.field_count}")
        self._encoding = connection.encoding
        key = (connection.encoding, connection.use_unicode, packets)
        parsed = _PARSED_COLUMNS.get(key)
        if parsed is None:
            if len(_PARSED_COLUMNS) >= MAX_PARSED_COLUMN_SETS:
                _PARSED_COLUMNS.clear()
            parsed = _PARSED_COLUMNS[key] = self._parse_columns(packets)
        self._column_packets = key[2]  # the cached tuple: one copy of the bytes
        self.description, converters, self.text_encodings = parsed
        self.converters = list(converters)

    def _parse_columns(self, packets: tuple[bytes, ...]) -> tuple:
        """pymysql's parse of these column definitions, with text columns decoded leniently."""
        connection = self.connection
        connection.replay_packets([*packets, _EOF_PACKET])
        try:
            super()._get_descriptions()
        finally:
            connection.replay_packets([])  # whatever happened, the next read is the socket's
        # Per column: its encoding when text, None when a binary string; no tuple when a column
        # needs a converter (numbers, dates): then pymysql reads the rows.
        text = [encoding for encoding, converter in self.converters if converter is None]
        text_encodings = tuple(text) if len(text) == len(self.converters) else None
        converters = tuple((None, _lenient_decoder(encoding)) if encoding and converter is None
                           else (encoding, converter) for encoding, converter in self.converters)
        return self.description, converters, text_encodings

    def _read_rowdata_packet(self):
        if self.text_encodings is None:
            super()._read_rowdata_packet()
            return
        rows = self.connection.read_text_rows(self)
        self.connection = None  # as pymysql's: no cycle through the connection
        self.affected_rows = len(rows)
        self.rows = tuple(rows)


@functools.lru_cache(maxsize=None)
def _lenient_decoder(encoding: str):
    return operator.methodcaller("decode", encoding, "backslashreplace")


class MalformedRow(pymysql.err.OperationalError):
    """A row packet whose strings run past its end (or with an invalid length): the connection is closed."""


_NULL_STRING = 251
_EOF_PACKET = b"\xfe\x00\x00\x00\x00"  # what ends the column definitions pymysql is given again
# Column definitions parsed, by their bytes, for every connection of the process (GuardedConnection
# keeps pymysql's default converters, so the bytes and the connection's encoding decide the parse):
# a collection's few statements, alike on every target of one server version.  ~10 KiB a set at most
# (SHOW SLAVE STATUS's 60 columns), emptied when full.
MAX_PARSED_COLUMN_SETS = 128
_PARSED_COLUMNS: dict[tuple, tuple] = {}
_WIDE_LENGTHS = {252: 2, 253: 3, 254: 8}  # prefix byte: bytes of the length after it
_PACKET_HEAD = struct.Struct("<I").unpack  # 3 bytes of length, then the sequence number
_LONGEST_PACKET = 0xFFFFFF  # a packet this long continues in the next one


def text_row(data: bytes, encodings: tuple[str | None, ...]) -> tuple:
    """One text-protocol row: a length-coded string per column (0xFB: NULL), each decoded by its
    column's encoding with bad bytes escaped (None: kept as bytes).  A row shorter than its columns
    ends where its data ends, as pymysql reads it (PyMySQL#434); a string past the end is refused."""
    row = []
    position = 0
    end = len(data)
    for encoding in encodings:
        if position >= end:
            break
        length = data[position]
        if length < _NULL_STRING:
            position += 1
        elif length == _NULL_STRING:
            row.append(None)
            position += 1
            continue
        else:
            size = _WIDE_LENGTHS.get(length)
            if size is None:
                raise MalformedRow(CR.CR_MALFORMED_PACKET, f"malformed row: length prefix 0x{length:02x}")
            length = int.from_bytes(data[position + 1:position + 1 + size], "little")
            position += 1 + size
        stop = position + length
        if stop > end:
            raise MalformedRow(CR.CR_MALFORMED_PACKET, "malformed row: a string runs past the packet's end")
        value = data[position:stop]
        row.append(value if encoding is None else value.decode(encoding, "backslashreplace"))
        position = stop
    return tuple(row)


class GuardedConnection(pymysql.connections.Connection):
    """pymysql's connection, what it reads counted against ``read_guard``; text decoded leniently."""

    def __init__(self, *args, read_guard: ReadGuard, **kwargs):
        if "conv" in kwargs:
            raise TypeError("GuardedConnection keeps pymysql's default converters (parsed columns are shared)")
        self.read_guard = read_guard
        self._replay: list[bytes] = []
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

    def read_text_rows(self, result: LenientResult) -> list[tuple]:
        """The rows of ``result`` up to its EOF packet, each by ``text_row``: pymysql's packet reading
        (sequence numbers, packets continued past 16 MiB, error packets) without its objects."""
        return self._read_to_eof(result, result.text_encodings)

    def read_column_packets(self, result: LenientResult) -> list[bytes]:
        """The column definitions of ``result`` up to their EOF packet, as bytes."""
        return self._read_to_eof(result, None)

    def replay_packets(self, packets: list[bytes]) -> None:
        """The next ``_read_packet`` calls return these, read already, instead of reading the socket."""
        self._replay = packets[::-1]

    def _read_to_eof(self, result: LenientResult, encodings: tuple[str | None, ...] | None) -> list:
        """Packets up to the EOF (or error) packet: rows decoded by ``encodings``, or bytes (None)."""
        # pymysql 1.1+ remembers the socket's timeout; 1.0 (Debian 12's) sets it at every read and write.
        if not hasattr(self, "_current_timeout"):
            self._sock.settimeout(self._read_timeout)
        elif self._current_timeout != self._read_timeout:
            self._sock.settimeout(self._read_timeout)
            self._current_timeout = self._read_timeout
        guard = self.read_guard
        read = self._rfile.read
        # Two text columns in one encoding (SHOW GLOBAL STATUS / VARIABLES): a row of two short
        # strings is cut here; any other row goes through text_row.
        pair = encodings[0] if encodings and len(encodings) == 2 and encodings[0] == encodings[1] else None
        rows = []
        append = rows.append
        sequence = self._next_seq_id
        try:
            while True:
                guard.rows_left -= 1
                if guard.rows_left < 0:
                    raise guard.why_stopped()
                head = read(4)
                if len(head) < 4:
                    raise _lost()
                (word,) = _PACKET_HEAD(head)
                length = word & _LONGEST_PACKET
                if word >> 24 != sequence:
                    self._next_seq_id = sequence
                    raise _out_of_sequence(word >> 24, sequence)
                sequence = (sequence + 1) & 0xFF
                data = read(length)
                if len(data) < length:
                    raise _lost()
                if length == _LONGEST_PACKET:
                    data, sequence = self._rest_of_long_packet(data, sequence)
                first = data[0] if data else 0
                if first == 0xFF or (first == 0xFE and len(data) < 9):
                    break  # an error, or the end: pymysql's packet reads either
                if pair is not None and first < _NULL_STRING:
                    second = first + 1
                    rest = length - second - 1
                    if rest >= 0 and data[second] == rest and rest < _NULL_STRING:
                        append((data[1:second].decode(pair, "backslashreplace"),
                                data[second + 1:].decode(pair, "backslashreplace")))
                        continue
                append(text_row(data, encodings) if encodings is not None else data)
        except BaseException as exc:
            self._force_close()
            if isinstance(exc, OSError):
                raise _lost(exc) from None
            raise
        finally:
            self._next_seq_id = sequence
        packet = pymysql.protocol.MysqlPacket(data, self.encoding)
        if first == 0xFF:
            packet.raise_for_error()
        result._check_packet_is_eof(packet)
        return rows

    def _rest_of_long_packet(self, data: bytes, sequence: int) -> tuple[bytes, int]:
        """A packet of 16 MiB - 1 bytes continues in the next ones (the last is shorter)."""
        parts = [data]
        while len(parts[-1]) == _LONGEST_PACKET:
            head = self._rfile.read(4)
            if len(head) < 4:
                raise _lost()
            (word,) = _PACKET_HEAD(head)
            if word >> 24 != sequence:
                raise _out_of_sequence(word >> 24, sequence)
            sequence = (sequence + 1) & 0xFF
            length = word & _LONGEST_PACKET
            part = self._rfile.read(length)
            if len(part) < length:
                raise _lost()
            parts.append(part)
        return b"".join(parts), sequence

    def send_query(self, cursor, sql: str) -> None:
        """Send ``sql`` for ``cursor`` and return without reading its answer (``read_first_answer`` does)."""
        self._execute_command(COMMAND.COM_QUERY, sql.encode(self.encoding))
        cursor._executed = sql

    def read_first_answer(self, cursor) -> None:
        """Into ``cursor``, the answer to what ``send_query`` sent (pymysql's execute after its send)."""
        cursor._clear_result()
        self.next_result()
        cursor._do_get_result()

    def release_result(self) -> None:
        """Forget the last result (pymysql keeps it, rows and all, until the next statement)."""
        if self._result is not None and not self._result.unbuffered_active:
            self._result = None

    def _read_packet(self, packet_type=pymysql.protocol.MysqlPacket):
        if self._replay:
            return packet_type(self._replay.pop(), self.encoding)
        guard = self.read_guard
        guard.rows_left -= 1
        if guard.rows_left < 0:
            self._force_close()
            raise guard.why_stopped()
        return super()._read_packet(packet_type)


def _lost(exc: OSError | None = None) -> pymysql.err.OperationalError:
    detail = f" ({exc})" if exc is not None else ""
    return pymysql.err.OperationalError(CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query{detail}")


def _out_of_sequence(got: int, expected: int) -> pymysql.err.MySQLError:
    if got == 0:  # MariaDB sends an error packet numbered 0 when it shuts down
        return _lost()
    return pymysql.err.InternalError(f"Packet sequence number wrong - got {got} expected {expected}")
