"""Benchmark: a scraper's latency with the exporter idle, and while 5 or 50 other scrapers hit it.

    .venv/bin/python tests/bench/bench_exporter_load.py [--scrapes 40] [--scrapers 5,50] [--max-connections 64]

One throwaway MariaDB, ``mysql-snmp exporter`` as a process with its default flags.  "The
scraper" is Prometheus-like (one keep-alive connection, Prometheus' Accept header, gzip) and
scrapes --scrapes times, 0.25 s apart, in this process:

1. idle: nothing else talks to the exporter (measured before each loaded phase and once at the
   end; the idle figure is the median of all of them, as other work shares this machine);
2. loaded: N other clients scrape as fast as they can, each on its own keep-alive connection,
   for the whole phase.  They are ``wrk`` (compiled, one thread, epoll): a Python load
   generator with 50 threads needs a core of its own on a 2-core machine and was the
   bottleneck, for both exporters.

Printed for each N: the scraper's median and p90 loaded and their ratio to idle (goal: loaded
median <= 2x idle), wrk's own latency and throughput and any non-2xx answer or socket error,
the exporter's peak threads and descriptors, CPU of each process; and a burst figure: 5 and 50
scrapes started at the same instant, the issue's original measurement.  Then the same for
Debian's Go mysqld_exporter (its defaults) on the same server as the peer (--no-peer skips it).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port  # noqa: E402
from tests.bench.bench_exporter import GO_EXPORTER, go_command, wait_listening  # noqa: E402
from tests.exporter.exporter_harness import PROMETHEUS_ACCEPT  # noqa: E402
from tests.faults.exporter_process import start_exporter  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402

HEADERS = {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip", "X-Prometheus-Scrape-Timeout-Seconds": "10"}
WRK = shutil.which("wrk")


def one_scrape(connection: http.client.HTTPConnection) -> tuple[int, float]:
    started = time.perf_counter()
    connection.request("GET", "/metrics", headers=HEADERS)
    response = connection.getresponse()
    response.read()
    return response.status, time.perf_counter() - started


def scrape_series(port: int, count: int, pause: float) -> list[float]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies = []
    for _ in range(count):
        status, seconds = one_scrape(connection)
        if status != 200:
            raise RuntimeError(f"the scraper got HTTP {status}")
        latencies.append(seconds)
        time.sleep(pause)
    connection.close()
    return latencies


@dataclass
class WrkSummary:
    requests: int = 0
    seconds: float = 0.0
    median: float = float("nan")
    p90: float = float("nan")
    not_2xx: int = 0
    socket_errors: int = 0


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def _duration(text: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNITS[unit]


def parse_wrk(output: str) -> WrkSummary:
    """wrk's summary (with --latency): requests, duration, latency percentiles, errors."""
    summary = WrkSummary()
    if match := re.search(r"(\d+) requests in ([0-9.]+\w+),", output):
        summary.requests, summary.seconds = int(match[1]), _duration(match[2])
    for percent, attribute in (("50", "median"), ("90", "p90")):
        if match := re.search(rf"^\s+{percent}%\s+([0-9.]+\w+)\s*$", output, re.MULTILINE):
            setattr(summary, attribute, _duration(match[1]))
    if match := re.search(r"Non-2xx or 3xx responses: (\d+)", output):
        summary.not_2xx = int(match[1])
    if match := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output):
        summary.socket_errors = sum(int(n) for n in match.groups())
    return summary


class Wrk:
    """``connections`` keep-alive clients scraping back to back (wrk, one thread) until stopped."""

    def __init__(self, port: int, connections: int):
        headers = [arg for name, value in HEADERS.items() for arg in ("-H", f"{name}: {value}")]
        self.process = subprocess.Popen(
            [WRK, "-t1", f"-c{connections}", "-d3600s", "--timeout", "30s", "--latency", *headers,
             f"http://127.0.0.1:{port}/metrics"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def stop(self) -> WrkSummary:
        self.process.send_signal(signal.SIGINT)  # wrk prints its summary on SIGINT
        output, _ = self.process.communicate(timeout=60)
        return parse_wrk(output)


def burst(port: int, count: int) -> list[float]:
    barrier = threading.Barrier(count)
    latencies: list[float] = []
    lock = threading.Lock()

    def run() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        barrier.wait()
        status, seconds = one_scrape(connection)
        connection.close()
        with lock:
            latencies.append(seconds if status == 200 else float("nan"))

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


@dataclass
class Loaded:
    scraper: list[float]
    others: WrkSummary
    peak: tuple[int, int]
    cpu: dict[str, float]


@dataclass
class Figures:
    idle: list[float] = field(default_factory=list)
    loaded: dict[int, Loaded] = field(default_factory=dict)
    bursts: dict[int, list[float]] = field(default_factory=dict)


def loaded_phase(port: int, exporter: psutil.Process, server: ThrowawayMariaDB, connections: int,
                 scrapes: int) -> Loaded:
    others = Wrk(port, connections)
    time.sleep(1.0)  # every connection open and scraping
    stop = threading.Event()
    peak = [0, 0]

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], exporter.num_threads())
            peak[1] = max(peak[1], exporter.num_fds())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    processes = {"exporter": exporter, "mysqld": psutil.Process(server.pid), "wrk": psutil.Process(others.process.pid)}
    cpu_before = {name: sum(p.cpu_times()[:2]) for name, p in processes.items()}
    started = time.monotonic()
    try:
        scraper = scrape_series(port, scrapes, 0.25)
    finally:
        phase = time.monotonic() - started
        cpu = {name: (sum(p.cpu_times()[:2]) - cpu_before[name]) / phase for name, p in processes.items()}
        stop.set()
        watcher.join()
        summary = others.stop()
    return Loaded(scraper, summary, (peak[0], peak[1]), cpu)


def measure(port: int, exporter: psutil.Process, server: ThrowawayMariaDB, options) -> Figures:
    figures = Figures()
    scrape_series(port, 5, 0.1)  # warm up
    for connections in options.scrapers:
        figures.idle += scrape_series(port, options.scrapes, 0.25)
        figures.loaded[connections] = loaded_phase(port, exporter, server, connections, options.scrapes)
    figures.idle += scrape_series(port, options.scrapes, 0.25)
    figures.bursts = {n: burst(port, n) for n in (5, 50)}
    return figures


def report(name: str, figures: Figures, options) -> None:
    idle = statistics.median(figures.idle)
    print(f"{name}: the scraper, {options.scrapes} scrapes a phase (keep-alive, gzip, Prometheus' Accept)")
    print(f"  idle:   median {ms(idle)}, p90 {ms(p90(figures.idle))} ({len(figures.idle)} scrapes, "
          f"{len(options.scrapers) + 1} idle phases)")
    for connections, loaded in figures.loaded.items():
        median = statistics.median(loaded.scraper)
        others = loaded.others
        print(f"  with {connections} others scraping back to back: median {ms(median)}, p90 {ms(p90(loaded.scraper))}"
              f"; loaded / idle median {median / idle:.2f} (goal: <= 2.00)")
        rate = others.requests / others.seconds if others.seconds else float("nan")
        print(f"    the {connections} others (wrk): {others.requests} scrapes in {others.seconds:.1f} s ({rate:.0f}/s), "
              f"median {ms(others.median)}, p90 {ms(others.p90)}, {others.not_2xx} not 2xx, "
              f"{others.socket_errors} socket errors")
        print(f"    peak: {loaded.peak[0]} threads, {loaded.peak[1]} descriptors; CPU (cores): "
              + ", ".join(f"{process} {used:.2f}" for process, used in loaded.cpu.items()))
    for n, latencies in figures.bursts.items():
        print(f"  burst of {n} simultaneous scrapes: median {ms(statistics.median(latencies))}, "
              f"max {ms(max(latencies))}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scrapes", type=int, default=40)
    parser.add_argument("--scrapers", type=lambda text: [int(n) for n in text.split(",")], default=[5, 50],
                        help="comma-separated numbers of background scrapers, one loaded phase each (default 5,50)")
    parser.add_argument("--max-connections", type=int, default=None, help="--web.max-connections (default: its own)")
    parser.add_argument("--no-peer", action="store_true", help="skip the Go mysqld_exporter run")
    options = parser.parse_args()
    if WRK is None:
        print("wrk is not installed (apt-get install wrk): it is the background load", file=sys.stderr)
        return 2
    flags = [] if options.max_connections is None else [f"--web.max-connections={options.max_connections}"]
    results: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp, ThrowawayMariaDB() as server:
        user = create_monitoring_user(server, Path(tmp))
        exporter = start_exporter(user.my_cnf, Path(tmp), *flags)
        try:
            results["mysql-snmp exporter"] = measure(exporter.port, exporter.psutil_process, server, options)
        finally:
            exporter.stop()
        if not options.no_peer and Path(GO_EXPORTER).exists():
            peer_user = create_monitoring_user(server, Path(tmp))
            port = free_loopback_port()
            peer = subprocess.Popen(go_command(peer_user.my_cnf, port, "defaults"), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            try:
                wait_listening(port, peer)
                results["Go mysqld_exporter (peer)"] = measure(port, psutil.Process(peer.pid), server, options)
            finally:
                peer.terminate()
                peer.wait()
    for name, figures in results.items():
        report(name, figures, options)
    print(f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work shares them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
