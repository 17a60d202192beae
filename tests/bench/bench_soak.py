"""Soak: both agents for an hour against one throwaway MariaDB, resources sampled every minute.

    .venv/bin/python tests/bench/bench_soak.py [--minutes 60] [--scrape-interval 1] [--walk-interval 5]
        [--agentx-option=--no-leak]

Runs a light workload on the server (so counters move and every scrape has new values), the
exporter scraped every --scrape-interval seconds (its own keep-alive connection plus, every
tenth scrape, a new connection, as Prometheus' reconnects do), and ``mysql-snmp agentx`` under a
private snmpd, walked with snmpbulkwalk every --walk-interval seconds.  Every --sample-seconds
(60) it samples RSS, open descriptors and threads of both agent processes and the MySQL
connections of each agent's user; at the end it prints the samples and, per measure, the
least-squares slope per hour over the whole run and after warm-up (the first --warm-up-minutes,
default a fifth of the run), the figure that says whether anything grows without bound.
"""

from __future__ import annotations

import argparse
import http.client
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

from mysql_snmp.agents.catalog import format_oid, load_catalog  # noqa: E402
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB  # noqa: E402
from tests.agentx.agent_process import run_agent, stop_agent  # noqa: E402
from tests.agentx.netsnmp import Snmpd  # noqa: E402
from tests.exporter.exporter_harness import PROMETHEUS_ACCEPT  # noqa: E402
from tests.faults.exporter_process import start_exporter  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402

MEASURES = ("rss_mb", "fds", "threads", "mysql_conns")


@dataclass
class Series:
    """One agent's samples: minutes since start -> measure -> value."""

    name: str
    rows: list[tuple[float, dict[str, float]]] = field(default_factory=list)

    def slope_per_hour(self, measure: str, after_minutes: float = 0.0) -> float | None:
        points = [(t, row[measure]) for t, row in self.rows if t >= after_minutes]
        if len(points) < 3:
            return None
        times = [t for t, _ in points]
        values = [v for _, v in points]
        mean_t, mean_v = statistics.fmean(times), statistics.fmean(values)
        spread = sum((t - mean_t) ** 2 for t in times)
        if spread == 0:
            return None
        return 60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / spread


def mysql_connections(server: ThrowawayMariaDB) -> dict[str, int]:
    rows = server.execute("SELECT USER, COUNT(*) FROM information_schema.PROCESSLIST GROUP BY USER")
    return {user: int(count) for user, count in rows}


def sample(process: psutil.Process, connections: int) -> dict[str, float]:
    return {"rss_mb": process.memory_info().rss / 2**20, "fds": process.num_fds(),
            "threads": process.num_threads(), "mysql_conns": connections}


class Workload(threading.Thread):
    """A few statements a second, so status counters and InnoDB figures change between scrapes."""

    def __init__(self, server: ThrowawayMariaDB, stop: threading.Event):
        super().__init__(daemon=True)
        self.server, self.stop = server, stop

    def run(self) -> None:
        connection = self.server.connect(autocommit=True)
        with connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE IF NOT EXISTS soak")
            cursor.execute("CREATE TABLE IF NOT EXISTS soak.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))")
            n = 0
            while not self.stop.wait(0.2):
                n += 1
                cursor.execute("INSERT INTO soak.t (v) VALUES (%s)", (f"row {n}",))
                cursor.execute("SELECT COUNT(*), MAX(id) FROM soak.t")
                cursor.fetchall()
                if n % 50 == 0:
                    cursor.execute("DELETE FROM soak.t WHERE id < %s", (n - 100,))
        connection.close()


class Scraper(threading.Thread):
    """Prometheus-like: one keep-alive connection, reopened every tenth scrape."""

    def __init__(self, port: int, interval: float, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.interval, self.stop = port, interval, stop
        self.latencies: list[float] = []
        self.failures = 0

    def run(self) -> None:
        connection = None
        count = 0
        while not self.stop.wait(self.interval):
            count += 1
            if connection is None or count % 10 == 0:
                if connection is not None:
                    connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            started = time.perf_counter()
            try:
                connection.request("GET", "/metrics", headers={"Accept": PROMETHEUS_ACCEPT,
                                                               "Accept-Encoding": "gzip"})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    self.failures += 1
            except OSError:
                self.failures += 1
                connection.close()
                connection = None
                continue
            self.latencies.append(time.perf_counter() - started)
        if connection is not None:
            connection.close()


class Walker(threading.Thread):
    def __init__(self, snmpd: Snmpd, root: str, interval: float, stop: threading.Event):
        super().__init__(daemon=True)
        self.snmpd, self.root, self.interval, self.stop = snmpd, root, interval, stop
        self.walks = 0
        self.failures = 0
        self.objects = 0

    def run(self) -> None:
        while not self.stop.wait(self.interval):
            try:
                self.objects = len(self.snmpd.bulkwalk(self.root))
                self.walks += 1
            except (RuntimeError, subprocess.SubprocessError):
                self.failures += 1


def print_report(series: list[Series], warm_up: float) -> None:
    for agent in series:
        print(f"\n{agent.name}: samples (minute: rss MB / fds / threads / MySQL connections)")
        for minute, row in agent.rows:
            print(f"  {minute:6.1f}: {row['rss_mb']:7.1f} / {row['fds']:4.0f} / {row['threads']:3.0f} / "
                  f"{row['mysql_conns']:2.0f}")
    print(f"\nslopes per hour (whole run | after {warm_up:g} min warm-up)")
    print(f"  {'agent':10} " + " ".join(f"{m:>23}" for m in MEASURES))
    for agent in series:
        cells = []
        for measure in MEASURES:
            whole, settled = agent.slope_per_hour(measure), agent.slope_per_hour(measure, warm_up)
            cells.append(f"{_fmt(whole):>11} | {_fmt(settled):>9}")
        print(f"  {agent.name:10} " + " ".join(cells))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--sample-seconds", type=float, default=60.0)
    parser.add_argument("--warm-up-minutes", type=float, default=None,
                        help="samples before this are left out of the settled slope (default: a fifth of the run)")
    parser.add_argument("--scrape-interval", type=float, default=1.0)
    parser.add_argument("--walk-interval", type=float, default=5.0)
    parser.add_argument("--refresh", type=float, default=5.0, help="the AgentX agent's --refresh")
    parser.add_argument("--agentx-option", action="append", default=[], metavar="OPTION",
                        help="one more option for mysql-snmp agentx, e.g. --agentx-option=--no-leak (repeatable)")
    options = parser.parse_args()
    warm_up = options.minutes / 5 if options.warm_up_minutes is None else options.warm_up_minutes
    legacy_root = format_oid(load_catalog().legacy_root)

    stop = threading.Event()
    # SIGTERM (or Ctrl-C) ends the run early: the processes are stopped and the samples so far reported.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp, ThrowawayMariaDB() as server:
        tmp = Path(tmp)
        snmpd = Snmpd(tmp / "snmpd")
        snmpd.start()
        exporter_user = create_monitoring_user(server, tmp)
        exporter = start_exporter(exporter_user.my_cnf, tmp)
        agent = run_agent(snmpd, server, tmp, options.refresh, *options.agentx_option)
        agent_user = agent.my_cnf.stem
        threads = [Workload(server, stop), Scraper(exporter.port, options.scrape_interval, stop),
                   Walker(snmpd, legacy_root, options.walk_interval, stop)]
        series = [Series("exporter"), Series("agentx")]
        processes = [(exporter.psutil_process, exporter_user.name), (psutil.Process(agent.process.pid), agent_user)]
        try:
            for thread in threads:
                thread.start()
            started = time.monotonic()
            end = started + options.minutes * 60
            next_sample = started
            while True:
                now = time.monotonic()
                if now >= next_sample:
                    connections = mysql_connections(server)
                    minute = (now - started) / 60
                    for agent_series, (process, user) in zip(series, processes):
                        agent_series.rows.append((minute, sample(process, connections.get(user, 0))))
                    latest = ", ".join(f"{s.name} {s.rows[-1][1]['rss_mb']:.1f} MB" for s in series)
                    print(f"[{minute:5.1f} min] {latest}", flush=True)
                    next_sample += options.sample_seconds
                if now >= end or stop.is_set():
                    break
                stop.wait(min(1.0, max(0.0, min(next_sample, end) - now)))
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
            exporter_status = exporter.stop()
            agent_status = stop_agent(agent)
            snmpd.stop()
    scraper, walker = threads[1], threads[2]
    print(f"\nexporter: {len(scraper.latencies)} scrapes, {scraper.failures} failed, median latency "
          f"{statistics.median(scraper.latencies) * 1000:.1f} ms; exit status {exporter_status}")
    print(f"agentx: {walker.walks} walks of {walker.objects} objects, {walker.failures} failed; "
          f"exit status {agent_status}")
    print_report(series, warm_up)
    return 0


if __name__ == "__main__":
    sys.exit(main())
