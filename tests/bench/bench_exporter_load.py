"""Benchmark: a scraper's latency with the exporter idle, and while 50 other scrapers hit it.

    .venv/bin/python tests/bench/bench_exporter_load.py [--scrapes 40] [--scrapers 50] [--max-connections 64]

One throwaway MariaDB, ``mysql-snmp exporter`` as a process with its default flags.  "The
scraper" is Prometheus-like (one keep-alive connection, Prometheus' Accept header, gzip) and
scrapes --scrapes times, 0.25 s apart:

1. idle: nothing else talks to the exporter;
2. loaded: --scrapers other clients (in a separate process, so they do not share this
   process's interpreter lock) scrape as fast as they can, each on its own connection, for the
   whole phase.

Printed: the scraper's median and p90 in both phases and their ratio (goal: loaded median
<= 2x idle), the other scrapers' own latency and throughput and any non-200 answer, the
exporter's peak threads and descriptors, CPU of each process, and a burst figure: N scrapes
started at the same instant (5 and 50), the issue's original measurement.  Then the same for
Debian's Go mysqld_exporter (its defaults) on the same server as the peer (--no-peer skips it).
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402

from mysql_snmp.agents.throwaway import ThrowawayMariaDB, free_loopback_port  # noqa: E402
from tests.bench.bench_exporter import GO_EXPORTER, go_command, wait_listening  # noqa: E402
from tests.exporter.exporter_harness import PROMETHEUS_ACCEPT  # noqa: E402
from tests.faults.exporter_process import start_exporter  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402

HEADERS = {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip", "X-Prometheus-Scrape-Timeout-Seconds": "10"}


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


def _hammer(port: int, scrapers: int, stop, results) -> None:
    """Child process: ``scrapers`` threads scraping back to back until ``stop`` is set."""
    latencies: list[float] = []
    failures = [0]
    lock = threading.Lock()

    def run() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while not stop.is_set():
            try:
                status, seconds = one_scrape(connection)
            except OSError:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                with lock:
                    failures[0] += 1
                continue
            with lock:
                latencies.append(seconds)
                failures[0] += status != 200
        connection.close()

    threads = [threading.Thread(target=run) for _ in range(scrapers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((latencies, failures[0]))


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
class Figures:
    idle: list[float]
    loaded: list[float]
    others: list[float]
    failures: int
    phase: float
    peak: tuple[int, int]
    cpu: dict[str, float]
    bursts: dict[int, list[float]]


def measure(port: int, exporter: psutil.Process, server: ThrowawayMariaDB, options) -> Figures:
    scrape_series(port, 5, 0.1)  # warm up
    idle = scrape_series(port, options.scrapes, 0.25)
    bursts = {n: burst(port, n) for n in (5, 50)}
    context = multiprocessing.get_context("spawn")
    stop, results = context.Event(), context.Queue()
    hammer = context.Process(target=_hammer, args=(port, options.scrapers, stop, results))
    hammer.start()
    time.sleep(1.0)  # every scraper connected and going
    peak = [0, 0]

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], exporter.num_threads())
            peak[1] = max(peak[1], exporter.num_fds())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    processes = {"exporter": exporter, "mysqld": psutil.Process(server.pid), "clients": psutil.Process(hammer.pid)}
    cpu_before = {name: sum(p.cpu_times()[:2]) for name, p in processes.items()}
    started = time.monotonic()
    loaded = scrape_series(port, options.scrapes, 0.25)
    phase = time.monotonic() - started
    cpu = {name: (sum(p.cpu_times()[:2]) - cpu_before[name]) / phase for name, p in processes.items()}
    stop.set()
    others, failures = results.get(timeout=60)
    hammer.join()
    watcher.join()
    return Figures(idle, loaded, others, failures, phase, (peak[0], peak[1]), cpu, bursts)


def report(name: str, figures: Figures, options) -> None:
    idle, loaded = figures.idle, figures.loaded
    print(f"{name}: the scraper, {options.scrapes} scrapes each phase (keep-alive, gzip, Prometheus' Accept)")
    print(f"  idle:   median {ms(statistics.median(idle))}, p90 {ms(p90(idle))}")
    print(f"  loaded: median {ms(statistics.median(loaded))}, p90 {ms(p90(loaded))} while {options.scrapers} "
          f"others scraped back to back")
    print(f"  loaded / idle median: {statistics.median(loaded) / statistics.median(idle):.2f}  (goal: <= 2.00); "
          f"p90 ratio {p90(loaded) / p90(idle):.2f}")
    others = figures.others
    print(f"  the {options.scrapers} others: {len(others)} scrapes in {figures.phase:.1f} s "
          f"({len(others) / figures.phase:.0f}/s), median {ms(statistics.median(others))}, "
          f"p90 {ms(p90(others))}, {figures.failures} not HTTP 200")
    print(f"  peak while loaded: {figures.peak[0]} threads, {figures.peak[1]} descriptors; CPU (cores): "
          + ", ".join(f"{process} {used:.2f}" for process, used in figures.cpu.items()))
    for n, latencies in figures.bursts.items():
        print(f"  burst of {n} simultaneous scrapes: median {ms(statistics.median(latencies))}, "
              f"max {ms(max(latencies))}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scrapes", type=int, default=40)
    parser.add_argument("--scrapers", type=int, default=50)
    parser.add_argument("--max-connections", type=int, default=None, help="--web.max-connections (default: its own)")
    parser.add_argument("--no-peer", action="store_true", help="skip the Go mysqld_exporter run")
    options = parser.parse_args()
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
