"""The exporter's HTTP(S) server: /, the telemetry path (default /metrics) and /probe.

Standard library only (socketserver and ssl; not http.server: its parser is lenient, and it and
its imports cost about 1 MB): one thread per connection, at most --web.max-connections of them
(``connection_limit``: the cap, idle and header deadlines), each request read strictly and within
bounds (``http_request``), TLS and basic auth from the exporter-toolkit web config (ssl is loaded
only then: agents/mysql/tls_on_demand.py), exposition in the format negotiated from the Accept header
(Prometheus text 0.0.4 or OpenMetrics: agents/exporter/encoding.py). It binds
--web.listen-address, or serves the listening sockets systemd passed (--web.systemd-socket).
"""

from __future__ import annotations

import html
import io
import logging
import socket
import socketserver
import sys
import threading
import time
from http import HTTPStatus
from typing import Sequence
from urllib.parse import parse_qs, urlsplit

from ..config.settings import ConfigError
from .allocator import release_free_memory
from .app import SCRAPE_TIMEOUT_HEADER, ExporterApp
from .connection_limit import LISTEN_BACKLOG, ConnectionSlots, DeadlineReader, reject
from .flags import parse_listen_address
from .http_request import BadRequest, read_request_head
from .probe_access import ProbeRefused
from .systemd_socket import PassedSocket, systemd_listeners
from .targets import Target
from .web_config import Verdict

log = logging.getLogger(__name__)
_date_header: tuple[int | None, str] = (None, "")  # (unix second, its Date header text), replaced whole
_REASONS = {status.value: status.phrase for status in HTTPStatus}
AUTHENTICATE = 'Basic realm="mysql-snmp exporter"'
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def landing_page(telemetry_path: str) -> bytes:
    path = html.escape(telemetry_path)
    return (
        "<!DOCTYPE html>\n<html><head><title>MySQL exporter (mysql-snmp)</title></head><body>\n"
        "<h1>MySQL exporter (mysql-snmp)</h1>\n"
        "<p>Prometheus metrics of MySQL, MariaDB and Percona Server, compatible with mysqld_exporter.</p>\n"
        f"<ul><li><a href=\"{path}\">{path}</a>: the configured server</li>\n"
        "<li><a href=\"/probe?target=127.0.0.1:3306\">/probe?target=HOST:PORT&amp;auth_module=client.NAME</a>: "
        "any server, credentials from [client.NAME] of the option file</li></ul>\n"
        "</body></html>\n"
    ).encode()


ALLOWED_METHODS = "GET, HEAD, OPTIONS"
SEPARATE_BODY_BYTES = 64 * 1024  # from this size a body is written after its headers, not copied behind them


class ExporterRequestHandler(socketserver.StreamRequestHandler):
    """One connection: requests read by agents/exporter/http_request.py (strict, bounded), answered
    in order while the client keeps the connection alive."""

    timeout = None  # DeadlineReader sets the reads' deadlines, _send the write's
    # Headers and body go out in two writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms) on a keep-alive connection.
    disable_nagle_algorithm = True
    app: ExporterApp  # set on the subclass made by make_servers

    def setup(self):
        super().setup()
        self.rfile.close()  # the stdlib's reader: an open one would keep the socket's descriptor alive
        self._reader = DeadlineReader(self.connection, getattr(self.server, "slots", None), self.app.config.limits)
        self.rfile = io.BufferedReader(self._reader)

    def handle(self):
        if self.app.web.tls is not None and self.app.web.tls.client_allowed_sans:
            if not self._client_certificate_allowed():
                return
        self.close_connection = False
        while not self.close_connection:
            self.handle_one_request()

    def _client_certificate_allowed(self) -> bool:
        """client_allowed_sans: the handshake done, a certificate naming none of them ends the
        connection before any request is read (exporter-toolkit refuses it in the handshake)."""
        self.connection.settimeout(self.app.config.limits.header_timeout)
        self.connection.do_handshake()
        certificate = self.connection.getpeercert() or {}
        if self.app.web.tls.allows_client(certificate):
            return True
        log.info("TLS client %s refused: its certificate names none of client_allowed_sans", self.client_address[0])
        return False

    def handle_one_request(self):
        self._reader.await_request()
        self.close_connection = True
        self.head, self.command, self.path, self.requestline = None, "", "", "-"
        try:
            head = read_request_head(self.rfile)
            if head is None:
                return
            self.head = head
            self.command, self.path, self.requestline = head.method, head.target, head.request_line
            if not head.content_length:
                self.close_connection = not head.keep_alive
            elif not head.expects_continue:
                self._discard(head.content_length)
            # else the client waits for a go-ahead to send a body no route reads: answer, then close
        except BadRequest as refused:
            self._send(refused.status, f"{refused.reason}\n".encode())
            return
        except TimeoutError:
            log.debug("%s: request not received in time", self.client_address[0])
            return
        finally:
            self._reader.request_read()
        self._dispatch()

    def _discard(self, length: int) -> None:
        """Read a body no route uses (bounded by MAX_BODY_BYTES): the connection stays in step."""
        while length > 0:
            chunk = self.rfile.read(min(length, 16384))
            if not chunk:
                raise ConnectionAbortedError("the client closed before the end of its body")
            length -= len(chunk)
        self.close_connection = not self.head.keep_alive

    @staticmethod
    def date_text() -> str:
        """The Date header (RFC 9110 5.6.7), formatted once a second, not per request."""
        global _date_header
        now = int(time.time())
        second, text = _date_header
        if second != now:
            year, month, day, hour, minute, sec, weekday = time.gmtime(now)[:7]
            text = (f"{_WEEKDAYS[weekday]}, {day:02d} {_MONTHS[month - 1]} {year} "
                    f"{hour:02d}:{minute:02d}:{sec:02d} GMT")
            _date_header = (now, text)
        return text

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}", f"Date: {self.date_text()}"]
        for name, value in {**self.app.web.headers, **(headers or {})}.items():
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Type: {content_type}")
        lines.append(f"Content-Length: {len(body)}")
        if self.close_connection:
            lines.append("Connection: close")
        elif self.head is not None and self.head.version < (1, 1):
            lines.append("Connection: keep-alive")  # an HTTP/1.0 client closes without it
        lines.append("\r\n")
        head = "\r\n".join(lines).encode("latin-1")
        timeout = self.app.config.limits.write_timeout
        self.connection.settimeout(timeout)
        if self.command == "HEAD" or len(body) < SEPARATE_BODY_BYTES:
            self.wfile.write(head + (body if self.command != "HEAD" else b""))
        else:
            # A big body is not copied behind its headers (~250 kB for a curl-style scrape): two
            # writes, the second given what is left of --web.write-timeout, which bounds the whole
            # answer (Python's sendall timeout is total); Nagle is off, so neither waits for an ACK.
            deadline = time.monotonic() + timeout
            self.wfile.write(head)
            self.connection.settimeout(max(deadline - time.monotonic(), 0.001))
            self.wfile.write(body)
        if log.isEnabledFor(logging.DEBUG):  # every request: format only when it is kept
            log.debug('%s "%s" %s %s', self.client_address[0], self.requestline, status, len(body))

    def _authorized(self) -> bool:
        verifier = self.app.verifier
        if verifier is None:
            return True
        header = self.head.get("Authorization")
        if header is None:  # a browser's first request: it asks for credentials on this connection
            self._send(401, b"Unauthorized\n", headers={"WWW-Authenticate": AUTHENTICATE})
            return False
        verdict = verifier.check_header(header)
        if verdict is Verdict.ALLOWED:
            return True
        # A wrong password costs one bcrypt: the connection is closed after it, so a flood of
        # guesses queues behind the listen backlog like any new client, not on a held connection.
        self.close_connection = True
        if verdict is Verdict.BUSY:
            self._send(503, b"too many password checks at once, retry\n", headers={"Retry-After": "1"})
        else:
            self._send(401, b"Unauthorized\n", headers={"WWW-Authenticate": AUTHENTICATE})
        return False

    def _dispatch(self) -> None:
        if not self._authorized():
            return
        if self.command in ("GET", "HEAD"):
            self._get()
        elif self.command == "OPTIONS":
            self._send(204, b"", headers={"Allow": ALLOWED_METHODS})
        else:
            self._send(405, b"Method Not Allowed\n", headers={"Allow": ALLOWED_METHODS})

    def _get(self) -> None:
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        try:
            if url.path == self.app.config.telemetry_path:
                self._metrics(self.app.default_target(), params.get("collect[]", []))
            elif url.path == "/probe":
                target = (params.get("target") or [""])[0]
                if not target:
                    self._send(400, b"target is required\n")
                    return
                auth_module = (params.get("auth_module") or ["client"])[0]
                self._metrics(self.app.probe_target(target, auth_module), params.get("collect[]", []))
            elif url.path == "/":
                self._send(200, landing_page(self.app.config.telemetry_path), "text/html; charset=utf-8")
            else:
                self._send(404, b"Not Found\n")
        except ProbeRefused as exc:
            log.warning("%s", exc)
            self._send(403, f"{exc}\n".encode())
        except ConfigError as exc:
            log.error("%s: %s", self.path, exc)
            self._send(400, f"{exc}\n".encode())
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception:  # a bug: answer 500 and keep serving, with the traceback in the log
            log.exception("%s: internal error", self.path)
            self._send(500, b"internal error, see the exporter's log\n")

    def _metrics(self, target: Target, requested: list[str]) -> None:
        compressed = "gzip" in self.head.get("Accept-Encoding", "")
        body, content_type = self.app.scrape(target, requested, self.head.get(SCRAPE_TIMEOUT_HEADER),
                                             self.head.get("Accept"), compressed)
        self._send(200, body, content_type, {"Content-Encoding": "gzip"} if compressed else {})
        size = len(body)
        del body  # freed before the trim, not after it
        release_free_memory(size)


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Python's default of 5 made 50 simultaneous connects wait for SYN retransmits (1 s, 3 s).
    request_queue_size = LISTEN_BACKLOG
    origin = "bound from --web.listen-address"
    _accepted_kind: tuple | None = None  # family, type and protocol of the sockets accept() gives

    def __init__(self, address, handler, ssl_context=None, family=socket.AF_INET, bind_and_activate=True,
                 slots: ConnectionSlots | None = None):
        self.address_family = family
        self.ssl_context = ssl_context
        self.slots = slots
        super().__init__(address, handler, bind_and_activate)

    @classmethod
    def adopting(cls, passed: PassedSocket, handler, ssl_context=None,
                 slots: ConnectionSlots | None = None) -> "_Server":
        """A server on a listening socket systemd passed, instead of one it binds itself."""
        address = passed.socket.getsockname()
        server = cls(address, handler, ssl_context, passed.socket.family, bind_and_activate=False, slots=slots)
        server.socket.close()  # the unbound one TCPServer made; systemd's socket takes its place
        server.socket = passed.socket
        server.server_address = address
        server.origin = passed.describe()
        return server

    def handle_error(self, request, client_address) -> None:
        """One log line, never the stdlib's traceback on stderr, for what clients do to us.

        A failed TLS handshake (a plain-HTTP client, a scanner, a certificate we refuse)
        or a client that hangs up mid-request is the client's business: info and debug.
        Anything else is ours: an error line, the traceback at debug.
        """
        exc = sys.exc_info()[1]
        peer = client_address[0] if isinstance(client_address, tuple) and client_address else client_address
        # Without TLS configured ssl is not loaded, and no TLS error can occur.
        ssl = sys.modules.get("ssl")
        if isinstance(exc, (ConnectionError, TimeoutError)) or (
                ssl is not None and isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError))):
            log.debug("%s disconnected: %s", peer, type(exc).__name__)
        elif ssl is not None and isinstance(exc, ssl.SSLError):
            log.info("TLS handshake with %s failed: %s", peer, getattr(exc, "reason", None) or exc)
        else:
            log.error("request from %s failed: %s: %s", peer, type(exc).__name__, exc)
            log.debug("request from %s failed", peer, exc_info=exc)

    def get_request(self):
        # socket.accept() without its enum conversions of family and type (a tenth of the accept loop).
        kind = self._accepted_kind
        if kind is None:  # the listening socket's, looked up once (systemd may have passed it)
            kind = self._accepted_kind = (self.socket.family, self.socket.type, self.socket.proto)
        fd, address = self.socket._accept()
        sock = socket.socket(*kind, fileno=fd)
        if socket.getdefaulttimeout() is None and self.socket.gettimeout():
            sock.setblocking(True)  # as socket.accept() does
        if self.ssl_context is not None:
            # Handshake in the handler thread (on first read), not in the accept loop,
            # so one slow client cannot stall every other scrape.
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def process_request(self, request, client_address):
        if self.slots is not None and not self.slots.acquire():
            reject(request, self.ssl_context is not None)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: nothing else gives the slot back
            if self.slots is not None:
                self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            if self.slots is not None:
                self.slots.release()


def address_text(server: socketserver.TCPServer) -> str:
    host, port = server.server_address[:2]
    if server.address_family == socket.AF_INET6:
        return f"[{host}]:{port}"
    return f"{host or '*'}:{port}"


def make_servers(app: ExporterApp, listeners: Sequence[PassedSocket] | None = None) -> list[socketserver.TCPServer]:
    """Servers bound to --web.listen-address or, with --web.systemd-socket, on the sockets systemd
    passed (``listeners``; taken from the environment when not given)."""
    handler = type("BoundExporterRequestHandler", (ExporterRequestHandler,), {"app": app})
    context = app.web.tls.context() if app.web.tls else None
    # One cap across every listening address: it bounds the process's threads and descriptors.
    slots = ConnectionSlots(app.config.limits.max_connections)
    if listeners is None and app.config.systemd_socket:
        listeners = systemd_listeners()
    if listeners is not None:
        return [_Server.adopting(passed, handler, context, slots) for passed in listeners]
    servers = []
    try:
        for address in app.config.listen_addresses:
            host, port = parse_listen_address(address)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            try:
                servers.append(_Server((host, port), handler, context, family, slots=slots))
            except OSError as exc:  # name the address: with several, which one is taken?
                raise OSError(exc.errno, exc.strerror, address) from exc
    except BaseException:
        # One address in use must not leave the others bound (and listening) behind the error.
        for server in servers:
            server.server_close()
        raise
    return servers


def serve(app: ExporterApp, stop: threading.Event | None = None,
          listeners: Sequence[PassedSocket] | None = None) -> None:
    """Serve until ``stop`` is set (or forever)."""
    try:
        servers = make_servers(app, listeners)
    except BaseException:
        app.close()
        raise
    threads = []
    for server in servers:
        log.info("listening on %s, %s, %s", address_text(server), server.origin,
                 "TLS" if app.web.tls else "TLS is disabled")
        port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, name=f"http-{port}", daemon=True)
        thread.start()
        threads.append(thread)
    try:
        (stop or threading.Event()).wait()
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
        app.close()
