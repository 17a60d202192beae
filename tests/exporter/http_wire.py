"""Raw HTTP/1.1 over a socket, for tests that send what no well-behaved client library sends:
the bytes go out exactly as given, and every response that comes back is parsed, so a test can
count them (one request must get one answer) and see each status, header and body."""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # lowercased names
    body: bytes


@dataclass
class Exchange:
    responses: list[Response] = field(default_factory=list)
    closed: bool = False  # the server closed the connection (EOF or reset)
    raw: bytes = b""

    @property
    def statuses(self) -> list[int]:
        return [response.status for response in self.responses]


def connect(port: int, context: ssl.SSLContext | None = None, timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    if context is not None:
        sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
    return sock


def exchange(port: int, request: bytes, *, quiet: float = 1.0, limit: float = 15.0,
             context: ssl.SSLContext | None = None) -> Exchange:
    """Send ``request`` on a new connection; read until the server closes it or stays silent
    for ``quiet`` seconds (at most ``limit`` in all)."""
    sock = connect(port, context)
    received = b""
    closed = False
    try:
        try:
            sock.sendall(request)
        except OSError:  # the server may refuse before the whole request is sent
            closed = True
        sock.settimeout(quiet)
        deadline = time.monotonic() + limit
        while not closed and time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (socket.timeout, TimeoutError):
                break
            except (ConnectionError, ssl.SSLError, OSError):
                closed = True
                break
            if not chunk:
                closed = True
            received += chunk
    finally:
        sock.close()
    return Exchange(parse_responses(received), closed, received)


def parse_responses(data: bytes) -> list[Response]:
    responses = []
    while data:
        head, separator, rest = data.partition(b"\r\n\r\n")
        if not separator:
            break
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            body, rest = _dechunk(rest)
        else:
            length = int(headers.get("content-length", "0"))
            body, rest = rest[:length], rest[length:]
        if status != 100:  # an interim answer, not the response to a request
            responses.append(Response(status, headers, body))
        data = rest
    return responses


def _dechunk(data: bytes) -> tuple[bytes, bytes]:
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            _, _, data = data.partition(b"\r\n")
            return body, data
        body, data = body + data[:size], data[size + 2:]
