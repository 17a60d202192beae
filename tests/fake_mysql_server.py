"""A hostile MySQL server on loopback: greets like MySQL, then asks for the password in clear text.

It records every byte each client sends, so a test can prove a password never left the client.
Only the connection phase of the protocol is spoken (handshake v10, AuthSwitchRequest, ERR).
"""

from __future__ import annotations

import socket
import struct
import threading
from contextlib import contextmanager
from typing import Iterator

# CLIENT_LONG_PASSWORD | PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | PLUGIN_AUTH_LENENC_CLIENT_DATA
_CAPABILITIES = 0x1 | 0x200 | 0x8000 | 0x80000 | 0x200000


def _packet(sequence: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([sequence & 0xFF]) + payload


def _handshake(initial_plugin: bytes) -> bytes:
    salt = b"abcdefgh12345678ijkl"
    return (b"\x0a" + b"5.7.99-fake\x00" + struct.pack("<I", 7) + salt[:8] + b"\x00"
            + struct.pack("<H", _CAPABILITIES & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
            + struct.pack("<H", _CAPABILITIES >> 16) + bytes([len(salt) + 1]) + b"\x00" * 10
            + salt[8:] + b"\x00" + initial_plugin + b"\x00")


class ClearTextPhisher:
    """Accepts connections; answers each handshake response with a switch to ``plugin``."""

    def __init__(self, plugin: bytes = b"mysql_clear_password"):
        self.plugin = plugin
        self.received: list[bytes] = []  # everything each client sent, one entry per connection
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fake-mysql", daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                continue
            self.connections += 1
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

    def start(self) -> "ClearTextPhisher":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._listener.close()


@contextmanager
def clear_text_phisher(plugin: bytes = b"mysql_clear_password") -> Iterator[ClearTextPhisher]:
    server = ClearTextPhisher(plugin).start()
    try:
        yield server
    finally:
        server.stop()
