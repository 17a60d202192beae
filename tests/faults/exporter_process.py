"""The real ``mysql-snmp exporter`` as a process for the fault suite and the soak benchmark: started
against a my.cnf, scraped over HTTP, its threads and descriptors read with psutil.

Plain helpers (no fixtures), so the benchmarks import them too."""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from mysql_snmp.agents.demo.netsnmp_sandbox import REPO_ROOT, stop_process
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.exporter_harness import PROMETHEUS_ACCEPT, Scrape


@dataclass
class ScrapeResult:
    status: int
    body: str
    seconds: float

    def parsed(self) -> Scrape:
        return Scrape(self.body)


@dataclass
class ExporterProcess:
    process: subprocess.Popen
    port: int
    log: Path
    psutil_process: psutil.Process = field(init=False)

    def __post_init__(self) -> None:
        self.psutil_process = psutil.Process(self.process.pid)

    def scrape(self, path: str = "/metrics", timeout: float = 30.0) -> ScrapeResult:
        """One scrape on a connection of its own, as Prometheus' first scrape does."""
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request("GET", path, headers={"Accept": PROMETHEUS_ACCEPT,
                                                     "X-Prometheus-Scrape-Timeout-Seconds": "10"})
            response = connection.getresponse()
            body = response.read().decode()
            return ScrapeResult(response.status, body, time.perf_counter() - started)
        finally:
            connection.close()

    def threads(self) -> int:
        return self.psutil_process.num_threads()

    def fds(self) -> int:
        return self.psutil_process.num_fds()

    def rss(self) -> int:
        return self.psutil_process.memory_info().rss

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        return stop_process(self.process)


def start_exporter(my_cnf: Path, directory: Path, *flags: str, answers_plain_http: bool = True) -> ExporterProcess:
    """``mysql-snmp exporter`` on a free loopback port, once it answers (once it accepts connections,
    when its web config asks for TLS or a password); its leak history in ``directory``."""
    port = free_loopback_port()
    log = directory / "exporter.log"
    command = [sys.executable, "-m", "mysql_snmp.agents.cli", "exporter", f"--web.listen-address=127.0.0.1:{port}",
               f"--config.my-cnf={my_cnf}", f"--exporter.leak-state-file={directory / 'exporter-leak.json'}",
               *flags]
    with open(log, "ab") as output:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.STDOUT)
    exporter = ExporterProcess(process, port, log)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"exporter exited with {process.returncode}: {exporter.log_text()[-2000:]}")
        try:
            if not answers_plain_http:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                return exporter
            if exporter.scrape("/", timeout=2).status == 200:
                return exporter
        except OSError:
            time.sleep(0.05)
    exporter.stop()
    raise AssertionError(f"exporter not answering on {port}: {exporter.log_text()[-2000:]}")
