"""--web.max-connections and the read deadlines, on the in-process exporter (no MySQL needed: the
landing page answers without a collection)."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

from tests.exporter.exporter_harness import running_exporter


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=5)


def _request_root(sock: socket.socket) -> bytes:
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_over_the_cap_a_busy_server_answers_503_after_a_short_wait():
    with running_exporter("--web.max-connections=2", "--web.read-header-timeout=5") as exporter:
        # Two connections in the middle of their headers: busy, not idle, so not evicted.
        holders = [_connect(exporter.url) for _ in range(2)]
        for sock in holders:
            sock.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.2)
        started = time.monotonic()
        extra = _connect(exporter.url)
        answer = _request_root(extra)
        waited = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
        assert b"Retry-After: 1" in answer
        assert 0.8 <= waited < 3, waited
        for sock in holders:
            sock.close()
        time.sleep(0.2)
        assert _request_root(_connect(exporter.url)).startswith(b"HTTP/1.1 200 ")


def test_over_the_cap_the_longest_idle_connection_makes_room():
    with running_exporter("--web.max-connections=2") as exporter:
        idle = [_connect(exporter.url) for _ in range(2)]
        time.sleep(1.2)  # idle for over a second: closable for a newcomer
        answer = _request_root(_connect(exporter.url))
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]
        closed = 0
        for sock in idle:
            sock.settimeout(0.5)
            try:
                closed += sock.recv(1) == b""
            except TimeoutError:
                pass
        assert closed == 1


def test_a_request_trickling_in_is_cut_at_the_header_deadline():
    with running_exporter("--web.read-header-timeout=1") as exporter:
        sock = _connect(exporter.url)
        started = time.monotonic()
        sock.sendall(b"GET / HTTP/1.1\r\n")
        cut = None
        while time.monotonic() - started < 5:
            try:
                sock.sendall(b"X")
            except OSError:
                cut = time.monotonic() - started
                break
            time.sleep(0.1)
        assert cut is not None and cut < 2.5, cut


def test_a_connection_that_sends_nothing_is_closed_at_the_idle_timeout():
    with running_exporter("--web.idle-timeout=1") as exporter:
        sock = _connect(exporter.url)
        started = time.monotonic()
        assert sock.recv(1) == b""
        assert 0.8 <= time.monotonic() - started < 2.5
