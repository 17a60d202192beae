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

from mysql_snmp.agents.throwaway import free_loopback_port
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
