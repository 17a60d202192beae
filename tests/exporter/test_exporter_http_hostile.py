"""Hostile HTTP against the real exporter process, over raw sockets, side by side with Go's
mysqld_exporter 0.14 where it runs: request framing (a GET's body must not become a second
request), bounds on what a request may make the exporter hold, methods, the Server header and
the scrape timeout header.  Each attack has its control: the same bytes sent to Python's stdlib
HTTP server (what the exporter served with before) show what an unguarded parser does."""

from __future__ import annotations

import argparse
import http.server
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mysql_snmp.agents.exporter.app import ExporterApp
from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args
from mysql_snmp.agents.exporter.http_request import MAX_BODY_BYTES, MAX_HEAD_BYTES
from mysql_snmp.agents.exporter.web_config import WebConfig
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.exporter_harness import running_exporter
from tests.exporter.go_exporter import running_go_exporter
from tests.exporter.http_wire import exchange
from tests.faults.exporter_process import start_exporter


def unreachable_my_cnf(directory: Path) -> Path:
    """Credentials for a port nothing listens on: a scrape is served quickly with mysql_up 0."""
    my_cnf = directory / "my.cnf"
    my_cnf.write_text("[client]\nuser = exporter\npassword = not-used\nhost = 127.0.0.1\n"
                      f"port = {free_loopback_port()}\n")
    my_cnf.chmod(0o600)
    return my_cnf


@pytest.fixture(scope="module")
def my_cnf(tmp_path_factory) -> Path:
    return unreachable_my_cnf(tmp_path_factory.mktemp("hostile-http"))


@pytest.fixture(scope="module")
def ours(my_cnf):
    exporter = start_exporter(my_cnf, my_cnf.parent, "--no-collect.host")
    yield exporter
    exporter.stop()
    log = exporter.log_text()
    assert "Traceback" not in log and "internal error" not in log, log[-3000:]


@pytest.fixture(scope="module")
def go(my_cnf):
    with running_go_exporter(my_cnf) as port:
        yield port


class _Stdlib(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - the stdlib's name
        body = b"stdlib\n"
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def stdlib_port():
    """The control: Python's own HTTP server, lenient as the exporter's server was."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stdlib)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def GET(extra: bytes = b"", path: bytes = b"/", version: bytes = b"HTTP/1.1") -> bytes:  # noqa: N802
    return b"GET " + path + b" " + version + b"\r\nHost: x\r\n" + extra + b"\r\n"


SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
GET_WITH_BODY = GET(b"Content-Length: %d\r\n" % len(SMUGGLED)) + SMUGGLED


def test_a_gets_body_is_read_as_its_body_never_as_a_second_request(ours, go, stdlib_port):
    assert exchange(ours.port, GET_WITH_BODY).statuses == [200]
    assert exchange(go, GET_WITH_BODY).statuses == [200]
    # control: the stdlib parser leaves the body on the connection and answers it as a request
    assert exchange(stdlib_port, GET_WITH_BODY).statuses == [200, 404]
    # the connection stays usable after a drained body: the next request is answered in turn
    assert exchange(ours.port, GET_WITH_BODY + GET()).statuses == [200, 200]


# (request, our status, Go 0.14's status); every refusal closes the connection
MALFORMED = {
    "http/0.9 request line": (b"GET /metrics\r\n", 400, 400),
    "http/2.0 request line": (GET(version=b"HTTP/2.0"), 505, 505),
    "lowercase version": (GET(version=b"http/1.1"), 400, 400),
    "no Host in HTTP/1.1": (b"GET / HTTP/1.1\r\n\r\n", 400, 400),
    "two Host fields": (GET(b"Host: y\r\n"), 400, 400),
    "conflicting Content-Length": (GET(b"Content-Length: 1\r\nContent-Length: 2\r\n") + b"ab", 400, 400),
    "signed Content-Length": (GET(b"Content-Length: +1\r\n") + b"a", 400, 400),
    "space before the colon": (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, 400),
    "NUL in a value": (GET(b"X-A: a\x00b\r\n"), 400, 400),
    # Go decodes a chunked GET body and takes TE with CL; refusing them keeps the framing unambiguous
    "chunked body": (GET(b"Transfer-Encoding: chunked\r\n") + b"5\r\nhello\r\n0\r\n\r\n", 411, 200),
    "Transfer-Encoding and Content-Length": (GET(b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n") + b"0\r\n\r\n",
                                             400, 200),
    # RFC 9112 5.2: reject with 400 or unfold; Go unfolds
    "folded field": (GET(b"X-A: a\r\n b\r\n"), 400, 200),
    "body over the bound": (GET(b"Content-Length: %d\r\n" % (MAX_BODY_BYTES + 1)) + b"a" * (MAX_BODY_BYTES + 1),
                            413, 200),
    # Go counts the request line in its 1 MB; ours has 8 KiB of its own
    "70 KB request line": (GET(path=b"/" + b"a" * 70000), 414, 200),
    "1.2 MB of fields": (GET(b"".join(b"X-%d: %s\r\n" % (i, b"a" * 60000) for i in range(20))), 431, 431),
    "200 fields": (GET(b"".join(b"X-%d: a\r\n" % i for i in range(200))), 431, 200),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_or_oversized_request_is_refused_and_its_connection_closed(ours, go, case):
    request, ours_expected, go_expected = MALFORMED[case]
    answer = exchange(ours.port, request)
    assert answer.statuses == [ours_expected], answer.raw[:300]
    if ours_expected >= 400:
        assert answer.closed and answer.responses[0].headers["connection"] == "close"
    assert exchange(go, request).statuses == [go_expected]


@pytest.mark.parametrize("request_bytes", [
    GET(b"X-A: a\r\n", version=b"HTTP/1.0"),
    b"GET / HTTP/1.1\nHost: x\n\n",  # bare LF line ends, which Go accepts too
    b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",  # RFC 9112 2.2: an empty line before a request is ignored
    b"GET http://x/ HTTP/1.1\r\nHost: x\r\n\r\n",  # absolute form
    GET(version=b"HTTP/1.2"),
])
def test_unusual_but_valid_requests_are_served(ours, request_bytes):
    assert exchange(ours.port, request_bytes).statuses == [200]


def test_keep_alive_as_each_http_version_asks(ours):
    keep_alive_10 = GET(b"Connection: keep-alive\r\n", version=b"HTTP/1.0")
    answer = exchange(ours.port, keep_alive_10 + keep_alive_10)
    assert answer.statuses == [200, 200] and answer.responses[0].headers["connection"] == "keep-alive"
    assert exchange(ours.port, GET(version=b"HTTP/1.0") + GET()).statuses == [200]  # 1.0 closes unless asked
    assert exchange(ours.port, GET(b"Connection: close\r\n") + GET()).statuses == [200]
    # a client expecting 100-continue gets its answer without sending the body, then the close
    expecting = exchange(ours.port, GET(b"Content-Length: 5\r\nExpect: 100-continue\r\n"))
    assert expecting.statuses == [200] and expecting.closed


def test_a_stdlib_parser_takes_the_heads_this_one_refuses(stdlib_port):
    # the control for the bounds: 6.4 MB of fields (98 lines of 65 KB, within the stdlib's own limits)
    # and a 60 KB request line are accepted, and held in memory, by the unguarded parser
    huge = GET(b"".join(b"X-%d: %s\r\n" % (i, b"a" * 65000) for i in range(98)))
    assert exchange(stdlib_port, huge).statuses == [200]
    assert exchange(stdlib_port, GET(path=b"/?" + b"a" * 60000)).statuses == [404]


def test_64_clients_sending_6_mb_heads_cost_the_exporter_next_to_no_memory(ours):
    head = GET(b"".join(b"X-%d: %s\r\n" % (i, b"a" * 65000) for i in range(98)))
    assert len(head) > 6_000_000 and MAX_HEAD_BYTES < 100_000
    before = ours.rss()
    with ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(lambda _: exchange(ours.port, head, quiet=5), range(64)))
    grown = ours.rss() - before
    # Each is refused once MAX_HEAD_BYTES are in: its 431 and close come while the client is still
    # sending, so its kernel resets the connection and the client mostly never reads the 431.
    assert all(answer.closed and answer.statuses in ([431], []) for answer in answers)
    assert grown < 32 * 1024 * 1024, f"RSS grew {grown / 2**20:.1f} MiB"
    assert exchange(ours.port, GET()).statuses == [200]


def test_methods_are_answered_with_allow_and_no_server_header(ours, go):
    options = exchange(ours.port, b"OPTIONS /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert options.statuses == [204] and options.responses[0].headers["allow"] == "GET, HEAD, OPTIONS"
    post = exchange(ours.port, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab" + GET())
    assert post.statuses == [405, 200] and post.responses[0].headers["allow"] == "GET, HEAD, OPTIONS"
    # Go's handlers serve any method: OPTIONS and POST /metrics run a whole scrape
    assert exchange(go, b"OPTIONS /metrics HTTP/1.1\r\nHost: x\r\n\r\n").statuses == [200]
    assert exchange(go, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").statuses == [200]
    head = exchange(ours.port, b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.raw.startswith(b"HTTP/1.1 200 OK\r\n") and head.raw.endswith(b"\r\n\r\n")  # no body
    assert not head.closed
    for port in (ours.port, go):  # neither names its software or its version
        assert "server" not in exchange(port, GET()).responses[0].headers


@pytest.mark.parametrize("value", [b"inf", b"-inf", b"nan", b"-1", b"0", b"1e999", b"ten", b"0.000001", b"1e9"])
def test_any_scrape_timeout_header_gets_a_scrape(ours, value):
    answer = exchange(ours.port, GET(b"X-Prometheus-Scrape-Timeout-Seconds: " + value + b"\r\n", b"/metrics"))
    assert answer.statuses == [200] and b"mysql_up 0" in answer.responses[0].body


def test_a_client_that_stops_mid_request_is_closed_at_the_header_deadline(my_cnf, tmp_path):
    exporter = start_exporter(my_cnf, tmp_path, "--no-collect.host", "--web.read-header-timeout=1")
    try:
        started = time.monotonic()
        answer = exchange(exporter.port, b"GET / HTTP/1.1\r\nHost: x\r\n", quiet=5)
        assert answer.closed and answer.statuses == [] and time.monotonic() - started < 3
        # a declared body that never comes is bounded by the same deadline
        started = time.monotonic()
        answer = exchange(exporter.port, GET(b"Content-Length: 10\r\n") + b"abc", quiet=5)
        assert answer.closed and answer.statuses == [] and time.monotonic() - started < 3
    finally:
        exporter.stop()


def test_a_tiny_scrape_timeout_cannot_make_a_collection_miss_its_deadline(monitoring_user):
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host") as exporter:
        for _ in range(3):
            scrape = exporter.scrape(headers={"X-Prometheus-Scrape-Timeout-Seconds": "0.001"})
            assert scrape.value("mysql_up") == 1.0
        assert not any(dict(labels).get("reason") == "deadline"
                       for labels in scrape.samples.get("mysql_exporter_scrape_errors_total", {}))
        # the control: a collection takes longer than the millisecond the header asked for
        took = sum(scrape.samples["mysql_exporter_collector_duration_seconds"].values())
        assert took > 0.001


@pytest.mark.parametrize("header, seconds", [
    (None, 10.0), ("", 10.0), ("30", 29.75), ("0.001", 1.0), ("0.5", 1.0), ("1e9", 300.0),
    ("inf", 10.0), ("nan", 10.0), ("-5", 10.0), ("0", 10.0), ("ten", 10.0),
])
def test_the_scrape_time_a_header_may_ask_for_is_bounded(header, seconds):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    app = ExporterApp(config_from_args(parser.parse_args([])), None, WebConfig(), environ={})
    assert app.scrape_seconds(header) == seconds
