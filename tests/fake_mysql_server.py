"""Hostile MySQL servers on loopback.

``ClearTextPhisher`` greets like MySQL, then asks for the password in clear text; it records every
byte each client sends, so a test can prove a password never left the client (the connection
phase only: handshake v10, AuthSwitchRequest, ERR).

``RogueServer`` logs anyone in and answers queries (text protocol, one or several statements per
COM_QUERY) from a ``Replies`` object: a plausible small server by default, and the attacks a
test picks: a result that never ends, very long strings, bytes that are not UTF-8.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from contextlib import contextmanager
from typing import Iterator

# CLIENT_LONG_PASSWORD | PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | PLUGIN_AUTH_LENENC_CLIENT_DATA
_CAPABILITIES = 0x1 | 0x200 | 0x8000 | 0x80000 | 0x200000


def _packet(sequence: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([sequence & 0xFF]) + payload


def _handshake(initial_plugin: bytes, capabilities: int = _CAPABILITIES, thread_id: int = 7) -> bytes:
    salt = b"abcdefgh12345678ijkl"
    return (b"\x0a" + b"5.7.99-fake\x00" + struct.pack("<I", thread_id) + salt[:8] + b"\x00"
            + struct.pack("<H", capabilities & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
            + struct.pack("<H", capabilities >> 16) + bytes([len(salt) + 1]) + b"\x00" * 10
            + salt[8:] + b"\x00" + initial_plugin + b"\x00")


class _LoopbackServer:
    """A listener on a free loopback port; ``_accepted(client)`` is called for each client, in turn."""

    name = "fake-mysql"

    def __init__(self):
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self.connections += 1
            self._accepted(client)

    def _accepted(self, client: socket.socket) -> None:
        raise NotImplementedError

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()


class ClearTextPhisher(_LoopbackServer):
    """Accepts connections; answers each handshake response with a switch to ``plugin``."""

    def __init__(self, plugin: bytes = b"mysql_clear_password"):
        super().__init__()
        self.plugin = plugin
        self.received: list[bytes] = []  # everything each client sent, one entry per connection

    def _accepted(self, client: socket.socket) -> None:
        with client:
            self.received.append(self._converse(client))

    def _converse(self, client: socket.socket) -> bytes:
        client.settimeout(2.0)
        seen = bytearray()

        def read_some() -> bytes:
            try:
                data = client.recv(65536)
            except OSError:
                return b""
            seen.extend(data)
            return data

        try:
            client.sendall(_packet(0, _handshake(b"mysql_native_password")))
            if not read_some():
                return bytes(seen)
            if self.plugin == b"dialog":
                # MariaDB's dialog plugin: an AuthSwitchRequest whose data is the first prompt.
                switch = b"\xfe" + b"dialog\x00" + b"\x04Password: "
            else:
                switch = b"\xfe" + self.plugin + b"\x00" + b"abcdefgh12345678ijkl\x00"
            client.sendall(_packet(2, switch))
            while read_some():  # whatever the client answers, until it hangs up or goes quiet
                pass
            client.sendall(_packet(4, b"\xff" + struct.pack("<H", 1045) + b"#28000Access denied"))
        except OSError:
            pass
        return bytes(seen)

    def sent_password(self, password: str) -> bool:
        return any(password.encode() in data for data in self.received)



@contextmanager
def clear_text_phisher(plugin: bytes = b"mysql_clear_password") -> Iterator[ClearTextPhisher]:
    server = ClearTextPhisher(plugin).start()
    try:
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- a server that answers

# ... | CLIENT_TRANSACTIONS | MULTI_STATEMENTS | MULTI_RESULTS: what pymysql's pipelining and Go's driver use.
_ANSWERING_CAPABILITIES = _CAPABILITIES | 0x2000 | 0x10000 | 0x20000
_AUTOCOMMIT = 0x0002
_MORE_RESULTS = 0x0008
_VAR_STRING = 0xFD


def _lenenc_int(number: int) -> bytes:
    if number < 251:
        return bytes([number])
    if number < 1 << 16:
        return b"\xfc" + struct.pack("<H", number)
    if number < 1 << 24:
        return b"\xfd" + struct.pack("<I", number)[:3]
    return b"\xfe" + struct.pack("<Q", number)


def _lenenc_bytes(value: bytes | None) -> bytes:
    return b"\xfb" if value is None else _lenenc_int(len(value)) + value


def _ok(status: int) -> bytes:
    return b"\x00\x00\x00" + struct.pack("<HH", status, 0)


def _eof(status: int) -> bytes:
    return b"\xfe" + struct.pack("<HH", 0, status)


def _column(name: bytes) -> bytes:
    return (_lenenc_bytes(b"def") + _lenenc_bytes(b"") + _lenenc_bytes(b"") + _lenenc_bytes(b"")
            + _lenenc_bytes(name) + _lenenc_bytes(name) + b"\x0c" + struct.pack("<HIBHB", 33, 1 << 20, _VAR_STRING, 0, 0)
            + b"\x00\x00")


Row = tuple  # of bytes | None


class Replies:
    """What the rogue server answers: ``answer(statement)`` -> (column names, rows) or None for OK."""

    version = b"10.11.99-MariaDB-rogue"
    version_comment = b"rogue test server"
    status: tuple[Row, ...] = ((b"Uptime", b"100"), (b"Threads_connected", b"1"), (b"Questions", b"42"))
    variables: tuple[Row, ...] = ((b"max_connections", b"151"),)

    def answer(self, statement: str):
        upper = " ".join(statement.upper().split())
        if upper.startswith(("SET ", "KILL ", "USE ")):
            return None
        if "@@VERSION" in upper and "@@VERSION_COMMENT" in upper:
            return (b"@@version", b"@@version_comment"), iter([(self.version, self.version_comment)])
        if upper.startswith("SELECT @@VERSION") or upper == "SELECT VERSION()":
            return (b"@@version",), iter([(self.version,)])
        if upper.startswith("SHOW GLOBAL STATUS"):
            return (b"Variable_name", b"Value"), self.status_rows()
        if upper.startswith("SHOW GLOBAL VARIABLES"):
            identity = ((b"version", self.version), (b"version_comment", self.version_comment),
                        (b"innodb_version", self.version))
            return (b"Variable_name", b"Value"), iter(self.variables + identity)
        return (b"x",), iter(())

    def status_rows(self):
        return iter(self.status)


class EndlessStatus(Replies):
    """SHOW GLOBAL STATUS never ends: rows as fast as the client takes them."""

    def status_rows(self):
        row = (b"Innodb_buffer_pool_pages_data", b"1" * 40)
        while True:
            yield row


class RogueServer(_LoopbackServer):
    """Logs anyone in, answers from ``replies``; a thread per client, as many clients as come."""

    name = "rogue-mysql"

    def __init__(self, replies: Replies | None = None):
        super().__init__()
        self.replies = replies or Replies()
        self.statements: list[str] = []
        self.bytes_sent = 0  # rows' bytes, the endless ones included
        self._clients: list[socket.socket] = []

    def _accepted(self, client: socket.socket) -> None:
        self._clients.append(client)
        threading.Thread(target=self._converse, args=(client, self.connections), daemon=True,
                         name="rogue-mysql-client").start()

    def _converse(self, client: socket.socket, thread_id: int) -> None:
        reader = client.makefile("rb")
        try:
            client.sendall(_packet(0, _handshake(b"mysql_native_password", _ANSWERING_CAPABILITIES, thread_id)))
            if _read_packet(reader) is None:
                return
            client.sendall(_packet(2, _ok(_AUTOCOMMIT)))
            while not self._stop.is_set():
                command = _read_packet(reader)
                if not command or command[0] == 0x01:  # gone, or COM_QUIT
                    return
                if command[0] == 0x03:
                    self._answer_queries(client, command[1:].decode("utf-8", "replace"))
                else:  # COM_PING, COM_INIT_DB, ...: fine
                    client.sendall(_packet(1, _ok(_AUTOCOMMIT)))
        except OSError:
            pass
        finally:
            reader.close()
            client.close()

    def _answer_queries(self, client: socket.socket, text: str) -> None:
        statements = [s.strip() for s in text.split(";\n") if s.strip()] or [""]
        sequence = 1
        for index, statement in enumerate(statements):
            self.statements.append(statement)
            status = _AUTOCOMMIT | (_MORE_RESULTS if index < len(statements) - 1 else 0)
            answer = self.replies.answer(statement.rstrip(";"))
            if answer is None:
                client.sendall(_packet(sequence, _ok(status)))
                sequence += 1
                continue
            columns, rows = answer
            out = bytearray(_packet(sequence, _lenenc_int(len(columns))))
            sequence += 1
            for name in columns:
                out += _packet(sequence, _column(name))
                sequence += 1
            out += _packet(sequence, _eof(status & ~_MORE_RESULTS | _AUTOCOMMIT))
            sequence += 1
            flushed = time.monotonic()
            for row in rows:
                out += _packet(sequence, b"".join(_lenenc_bytes(value) for value in row))
                sequence += 1
                # In 64 KiB writes when rows come fast; at least every 50 ms when they trickle.
                if len(out) >= 1 << 16 or time.monotonic() - flushed > 0.05:
                    client.sendall(out)
                    self.bytes_sent += len(out)
                    out.clear()
                    flushed = time.monotonic()
            out += _packet(sequence, _eof(status))
            sequence += 1
            client.sendall(out)
            self.bytes_sent += len(out)

    def stop(self) -> None:
        super().stop()
        for client in self._clients:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def my_cnf(self, directory, user: str = "monitor") -> "Path":
        from pathlib import Path

        path = Path(directory) / "rogue.cnf"
        path.write_text(f"[client]\nhost = 127.0.0.1\nport = {self.port}\nuser = {user}\npassword = secret\n")
        path.chmod(0o600)
        return path


def _read_packet(reader) -> bytes | None:
    header = reader.read(4)
    if len(header) < 4:
        return None
    length = int.from_bytes(header[:3], "little")
    payload = reader.read(length)
    return payload if len(payload) == length else None


@contextmanager
def rogue_server(replies: Replies | None = None) -> Iterator[RogueServer]:
    server = RogueServer(replies).start()
    try:
        yield server
    finally:
        server.stop()


class LongStrings(Replies):
    """A 64 KiB version string (served as a label and over SNMP), and a status name as long."""

    version = b"10.11.99-MariaDB-" + b"x" * (64 << 10)
    version_comment = b"rogue \x1b[31m\nlevel=error msg=forged" + b"y" * (64 << 10)
    status = Replies.status + ((b"Z" * (64 << 10), b"1"),)


class NotUtf8(Replies):
    """Bytes that are not UTF-8 in the version and in one status row; the other rows are fine."""

    version = b"10.11.99-MariaDB-\xff\xfe-rogue"
    version_comment = b"caf\xe9 latin1"
    status = Replies.status + ((b"Bad_\xff_name", b"\xfe\xff" * (1 << 20)),)


class TrickleStatus(Replies):
    """SHOW GLOBAL STATUS never ends, but slowly: a row every few milliseconds, never a pause long
    enough for a read timeout, never enough bytes for a size limit."""

    def status_rows(self):
        while True:
            time.sleep(0.005)
            yield (b"Innodb_buffer_pool_pages_data", b"1")
