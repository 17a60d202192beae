"""The exporter under hostile or heavy HTTP load: 50 concurrent scrapers, idle connections past the cap,
slowloris and never-reading clients.  The real exporter process against the throwaway MariaDB;
what is asserted is boundedness (threads, descriptors, every connection answered or closed in
its deadline) and that a scraper keeps getting fresh values, not latency figures
(tests/bench/bench_exporter_load.py measures those)."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.faults.exporter_process import ExporterProcess, start_exporter
from tests.faults.report import record_fault

CAP = 64  # the default of --web.max-connections
IDLE_TIMEOUT = 3.0
HEADER_TIMEOUT = 2.0
WRITE_TIMEOUT = 2.0
SLACK = 2.0  # scheduling on a loaded CI machine


@pytest.fixture(scope="module")
def exporter(mariadb, tmp_path_factory):
    from tests.support import create_monitoring_user

    directory = tmp_path_factory.mktemp("exporter-load")
    user = create_monitoring_user(mariadb, directory)
    process = start_exporter(user.my_cnf, directory, "--no-collect.host",
                             f"--web.idle-timeout={IDLE_TIMEOUT}", f"--web.read-header-timeout={HEADER_TIMEOUT}",
                             f"--web.write-timeout={WRITE_TIMEOUT}")
    try:
        yield process
    finally:
        assert process.stop() == 0, process.log_text()[-2000:]


class PeakSampler:
    """The most threads and descriptors the exporter had while the block ran (sampled every 20 ms)."""

    def __init__(self, exporter: ExporterProcess):
        self.exporter = exporter
        self.threads = self.fds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.threads = max(self.threads, self.exporter.threads())
            self.fds = max(self.fds, self.exporter.fds())
            self._stop.wait(0.02)

    def __enter__(self) -> "PeakSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def baseline(exporter: ExporterProcess) -> tuple[int, int]:
    """Threads and descriptors once every connection of an earlier test is gone."""
    assert exporter.scrape().status == 200
    deadline = time.monotonic() + IDLE_TIMEOUT + SLACK
    previous = None
    while time.monotonic() < deadline:
        now = (exporter.threads(), exporter.fds())
        if now == previous:
            return now
        previous = now
        time.sleep(0.3)
    return previous


def back_to(exporter: ExporterProcess, threads: int, fds: int, timeout: float) -> float | None:
    """Seconds until the exporter is back to ``threads``/``fds`` and a scrape is fresh, else None."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if exporter.threads() <= threads and exporter.fds() <= fds and fresh(exporter.scrape().body):
            return time.monotonic() - started
        time.sleep(0.1)
    return None


def assert_served_and_bounded(exporter: ExporterProcess, scraped, peak: "PeakSampler", threads: int, fds: int,
                              clients: int) -> float:
    """The scrape made during the attack was fresh, the attack cost at most a thread per client, and
    the exporter is back to its baseline: the seconds that took."""
    assert scraped.status == 200 and fresh(scraped.body)
    assert peak.threads <= threads + clients + 2, (peak.threads, threads)
    recovery = back_to(exporter, threads, fds, SLACK)
    assert recovery is not None, (exporter.threads(), threads, exporter.fds(), fds)
    return recovery


def fresh(body: str) -> bool:
    return "\nmysql_up 1" in body and "mysql_global_status_uptime " in body


def connect(exporter: ExporterProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", exporter.port), timeout=10)


def test_fifty_concurrent_scrapers_are_all_served(exporter):
    threads, fds = baseline(exporter)
    start = threading.Barrier(50)

    def one_scrape(_):
        start.wait()
        return exporter.scrape()

    with PeakSampler(exporter) as peak, ThreadPoolExecutor(50) as pool:
        results = list(pool.map(one_scrape, range(50)))
    statuses = [r.status for r in results]
    assert statuses == [200] * 50
    assert all(fresh(r.body) for r in results)
    assert peak.threads <= threads + 50 + 2, (peak.threads, threads)
    recovery = back_to(exporter, threads, fds, IDLE_TIMEOUT + SLACK)
    assert recovery is not None, (exporter.threads(), threads, exporter.fds(), fds)
    slowest = max(r.seconds for r in results)
    record_fault("50 concurrent scrapers", "exporter",
                 f"50/50 HTTP 200 with fresh values, slowest {slowest:.2f} s, peak +{peak.threads - threads} threads",
                 recovery)


def test_idle_connections_past_the_cap_cannot_lock_a_scraper_out(exporter):
    threads, fds = baseline(exporter)
    idle = []
    with PeakSampler(exporter) as peak:
        for _ in range(CAP + 36):  # 100 connections that never send a byte
            idle.append(connect(exporter))
        time.sleep(1.5)  # idle long enough to be the first closed for a newcomer
        scraped = exporter.scrape(timeout=10)
    assert scraped.status == 200 and fresh(scraped.body)
    assert peak.threads <= threads + CAP + 1, (peak.threads, threads)
    assert peak.fds <= fds + CAP + 2, (peak.fds, fds)
    # The idle timeout closes every idle connection the server took: each reads end-of-file.
    started = time.monotonic()
    for sock in idle:
        sock.settimeout(IDLE_TIMEOUT + SLACK)
    closed = sum(1 for sock in idle[:CAP] if _closed_by_server(sock))
    for sock in idle:
        sock.close()
    recovery = back_to(exporter, threads, fds, IDLE_TIMEOUT + SLACK)
    assert recovery is not None
    assert closed >= CAP - 2, closed  # (the scraper's newcomer evicted a couple of them early)
    record_fault(f"{CAP + 36} idle connections (cap {CAP})", "exporter",
                 f"scrape served, peak +{peak.threads - threads} threads / +{peak.fds - fds} fds, "
                 f"idle ones closed after {time.monotonic() - started:.1f} s", recovery)


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except OSError:
        return False


def test_slowloris_clients_are_cut_at_the_header_deadline(exporter):
    threads, fds = baseline(exporter)
    clients = [connect(exporter) for _ in range(30)]
    for sock in clients:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    started = time.monotonic()
    cut_after: dict[int, float] = {}
    with PeakSampler(exporter) as peak:
        scraped = exporter.scrape(timeout=10)  # served while the attack holds 30 threads
        while len(cut_after) < len(clients) and time.monotonic() - started < HEADER_TIMEOUT + 2 * SLACK:
            for index, sock in enumerate(clients):
                if index in cut_after:
                    continue
                try:
                    sock.sendall(b"X")  # one byte of a header, every 0.2 s: never a full request
                except OSError:
                    cut_after[index] = time.monotonic() - started
            time.sleep(0.2)
    for sock in clients:
        sock.close()
    assert len(cut_after) == len(clients), f"{len(clients) - len(cut_after)} slowloris connections still open"
    assert max(cut_after.values()) <= HEADER_TIMEOUT + SLACK, max(cut_after.values())
    recovery = assert_served_and_bounded(exporter, scraped, peak, threads, fds, len(clients))
    record_fault("30 slowloris clients (1 header byte / 0.2 s)", "exporter",
                 f"scrape served; all cut by {max(cut_after.values()):.1f} s "
                 f"(header timeout {HEADER_TIMEOUT:g} s)", recovery)


def test_clients_that_never_read_are_dropped_at_the_write_deadline(exporter):
    threads, fds = baseline(exporter)
    requests = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 100
    clients = []
    for _ in range(10):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the answers fill it at once
        sock.settimeout(10)
        sock.connect(("127.0.0.1", exporter.port))
        sock.sendall(requests)
        clients.append(sock)
    started = time.monotonic()
    with PeakSampler(exporter) as peak:
        scraped = exporter.scrape(timeout=10)
        recovery_start = None
        while time.monotonic() - started < WRITE_TIMEOUT + 3 * SLACK:
            if exporter.threads() <= threads:
                recovery_start = time.monotonic() - started
                break
            time.sleep(0.1)
    for sock in clients:
        sock.close()
    assert recovery_start is not None, f"never-reading clients still hold {exporter.threads() - threads} threads"
    recovery = assert_served_and_bounded(exporter, scraped, peak, threads, fds, len(clients))
    record_fault("10 clients pipelining 100 scrapes, never reading", "exporter",
                 f"scrape served; their threads gone after {recovery_start:.1f} s (write timeout "
                 f"{WRITE_TIMEOUT:g} s)", recovery)
