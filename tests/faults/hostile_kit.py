"""What the hostile-server tests share: Go's exporter against the same rogue server, RSS sampling,
and waiting for the rogue server to be reading a stream to an agent.  Plain helpers, no fixtures."""

from __future__ import annotations

import http.client
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import psutil

from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.go_exporter import GO_EXPORTER


@dataclass
class GoExporter:
    process: subprocess.Popen
    port: int

    def rss(self) -> int:
        return psutil.Process(self.process.pid).memory_info().rss

    def get(self, path: str = "/metrics", timeout: float = 30.0) -> tuple[int, str] | None:
        """(status, body), or None when the exporter closed the connection without an answer."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", path, headers={"X-Prometheus-Scrape-Timeout-Seconds": "10"})
            response = connection.getresponse()
            return response.status, response.read().decode("utf-8", "replace")
        except (http.client.HTTPException, OSError):
            return None
        finally:
            connection.close()


@contextmanager
def go_exporter(my_cnf: Path, log: Path) -> Iterator[GoExporter]:
    """The installed mysqld_exporter on a free loopback port, once it listens; killed at the end."""
    port = free_loopback_port()
    with open(log, "ab") as output:
        process = subprocess.Popen([GO_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}"],
                                   stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
    go = GoExporter(process, port)
    try:
        deadline = time.monotonic() + 10
        while go.get("/", timeout=1) is None:
            assert time.monotonic() < deadline and process.poll() is None, log.read_text()[-2000:]
            time.sleep(0.05)
        yield go
    finally:
        process.kill()
        process.wait()


class PeakRss:
    """The largest RSS a process reaches while the block runs, sampled every 50 ms."""

    def __init__(self, pid: int):
        self._process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self._process.memory_info().rss)
            except psutil.Error:
                return
            self._stop.wait(0.05)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def in_background(function) -> tuple[threading.Thread, list]:
    """``function()`` in a daemon thread; its result lands in the returned list."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(function()), daemon=True)
    thread.start()
    return thread, result


def wait_streaming(server, since_bytes: int = 0, timeout: float = 20.0) -> None:
    """Until the rogue server has sent more than ``since_bytes`` + 8 KiB of an endless answer."""
    deadline = time.monotonic() + timeout
    while server.bytes_sent <= since_bytes + (1 << 13):
        assert time.monotonic() < deadline, "the rogue server never started streaming"
        time.sleep(0.02)


MB = 1 << 20


@dataclass(frozen=True)
class RememberedTargets:
    count: int
    alone: int  # the exporter's RSS after one /metrics scrape, no /probe yet
    grown: int  # RSS added by ``count`` targets, each probed twice
    body_bytes: int  # a probe's answer, on average
    threads: int
    descriptors: int

    @property
    def per_target(self) -> float:
        return self.grown / self.count


def remembered_targets_rss(my_cnf: Path, port: int, count: int, directory: Path) -> RememberedTargets:
    """An exporter with ``count`` auth modules ([client.mN], all aimed at 127.0.0.1:``port``, the
    credentials of ``my_cnf``'s [client]), each probed twice: the RSS those targets add."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.faults.exporter_process import start_exporter

    my_cnf.write_text(my_cnf.read_text() + "".join(f"[client.m{i}]\nhost = 127.0.0.1\nport = {port}\n"
                                                   for i in range(count)))
    exporter = start_exporter(my_cnf, directory)
    try:
        exporter.scrape()
        alone = exporter.rss()

        def probe(i: int) -> int:
            scrape = exporter.scrape(f"/probe?target=127.0.0.1:{port}&auth_module=client.m{i}", timeout=60)
            assert scrape.status == 200 and "\nmysql_up 1" in scrape.body, scrape.body[:300]
            return len(scrape.body)

        with ThreadPoolExecutor(4) as pool:
            sizes = list(pool.map(probe, range(count)))
            list(pool.map(probe, range(count)))
        return RememberedTargets(count, alone, exporter.rss() - alone, sum(sizes) // count, exporter.threads(),
                                 exporter.fds())
    finally:
        exporter.stop()
