"""Benchmark: cost against work, on a large server, beside Go's mysqld_exporter in the same run.

Builds (once; the datadir is kept and reused) a throwaway MariaDB with ``--tables`` tables in
schemas of 1,000, an auto_increment column and a secondary index each, one row each, and
``--users`` accounts.  At every start it replays the work performance_schema forgets on a
restart: one INSERT and one SELECT per table, so ``--digests`` statement digests exist and every
table and index has I/O and lock statistics, and opens ``--connections`` idle connections.

Then, per heavy collector (alone, at its limits): each exporter started fresh, scraped in turn
(Go, ours, ...), and printed: median latency, CPU per scrape, series served, failed collectors,
peak RSS (sampled every 20 ms), RSS right after the scrapes and ``--settle`` seconds later (the
steady RSS).  Then the three table collectors together at a 10 s scrape timeout (which are
served, and the failures counted), the five big perf_schema collectors together (the big scrape:
RSS before, at peak and after it against the small scrape's), and ``--probes`` /probe targets at
one each ``--probe-interval`` seconds (answered in time, CPU per probe, RSS).

Run (about 10 minutes after the first build, which takes 5-10 more):
  .venv/bin/python tests/bench/bench_exporter_scale.py [--datadir /var/tmp/mysql-snmp-scale]
      [--tables 20000] [--digests 10000] [--connections 2000] [--users 2000] [--only NAME,...]
Needs root's open-file limit raised for 2,000 connections (it raises its own soft limit).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mysql_snmp.agents.demo.netsnmp_sandbox import stop_process  # noqa: E402
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port  # noqa: E402
from tests.bench.bench_exporter import ACCEPT, make_user, our_program, wait_listening  # noqa: E402
from tests.exporter.go_exporter import GO_EXPORTER  # noqa: E402

TABLES_PER_SCHEMA = 1000
BATCH = 250  # statements per round trip while building
# Sized so performance_schema keeps every table, index and digest of the build.
SERVER_ARGS = (
    "--userstat=1",
    # A benchmark's server: no binary log, no flush at each commit (20,000 CREATE TABLEs in minutes, not 20).
    "--skip-log-bin",
    "--innodb-flush-log-at-trx-commit=0",
    "--innodb-doublewrite=0",
    "--innodb-file-per-table=OFF",  # 20,000 tables in the system tablespace, not 20,000 files
    "--innodb-buffer-pool-size=256M",
    "--table-definition-cache=30000",
    "--table-open-cache=30000",
    "--performance-schema-digests-size=30000",
    "--performance-schema-max-table-instances=30000",
    "--performance-schema-max-table-handles=30000",
    "--performance-schema-max-index-stat=60000",
    "--performance-schema-max-table-lock-stat=30000",
    "--performance-schema-max-digest-length=256",
    "--max-connections=2500",
    "--open-files-limit=70000",
    "--thread-stack=192K",
)
# (our collector, extra flags for both): each heavy collector at its limits.
HEAVY = (
    ("info_schema.tables", ()),
    ("auto_increment.columns", ()),
    ("info_schema.tablestats", ()),
    ("info_schema.schemastats", ()),
    ("info_schema.processlist", ()),
    ("info_schema.userstats", ()),
    ("mysql.user", ()),
    ("perf_schema.eventsstatements", ("--collect.perf_schema.eventsstatements.limit=10000",)),
    ("perf_schema.tableiowaits", ()),
    ("perf_schema.indexiowaits", ()),
    ("perf_schema.tablelocks", ()),
    ("perf_schema.file_instances", ()),
)
STARVATION = ("info_schema.tables", "auto_increment.columns", "info_schema.tablestats")
# What each of those serves (both exporters name them alike): served when any such series is.
SERIES_PREFIXES = {"info_schema.tables": ("mysql_info_schema_table_rows", "mysql_info_schema_table_size"),
                   "auto_increment.columns": ("mysql_info_schema_auto_increment_column",),
                   "info_schema.tablestats": ("mysql_info_schema_table_statistics_",)}
BIG_SCRAPE = ("perf_schema.eventsstatements", "perf_schema.tableiowaits", "perf_schema.indexiowaits",
              "perf_schema.tablelocks", "perf_schema.file_instances")
# Go's default collectors, off, so each run measures the heavy collector alone (ours: the same, and host).
DEFAULTS_OFF = ("global_status", "global_variables", "slave_status", "info_schema.innodb_cmp",
                "info_schema.innodb_cmpmem", "info_schema.query_response_time")
GRANTS = "GRANT SELECT, PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {user}"


# --------------------------------------------------------------------------- the large server

def build(server: ThrowawayMariaDB, tables: int, users: int) -> None:
    """Schemas, tables and users, once: the datadir keeps them."""
    marker = server.base_dir / f"built-{tables}-{users}"
    if marker.exists():
        return
    started = time.monotonic()
    statements = []
    for table in range(tables):
        schema = f"scale{table // TABLES_PER_SCHEMA:02d}"
        if table % TABLES_PER_SCHEMA == 0:
            statements.append(f"CREATE DATABASE IF NOT EXISTS {schema}")
        statements.append(f"CREATE TABLE IF NOT EXISTS {schema}.t{table:05d} "
                          "(id INT AUTO_INCREMENT PRIMARY KEY, v INT, KEY v (v)) ENGINE=InnoDB")
    statements += [f"CREATE USER IF NOT EXISTS 'app{n:04d}'@'10.%' IDENTIFIED BY 'x{n}'" for n in range(users)]
    run_batched(server, statements)
    marker.write_text("")
    print(f"built {tables} tables and {users} users in {time.monotonic() - started:.0f}s", flush=True)


def replay_work(server: ThrowawayMariaDB, tables: int, digests: int) -> None:
    """What performance_schema and userstat forget on a restart: rows, statement digests, table I/O."""
    started = time.monotonic()
    statements = []
    for table in range(tables):
        schema = f"scale{table // TABLES_PER_SCHEMA:02d}"
        if table % TABLES_PER_SCHEMA == 0:
            # A default schema for the digests: both exporters select digests by SCHEMA_NAME NOT IN
            # (...), which a statement run without one (SCHEMA_NAME NULL) never passes.
            statements.append(f"USE {schema}")
        name = f"{schema}.t{table:05d}"
        statements.append(f"INSERT INTO {name} (v) SELECT 1 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM {name})")
        if table < digests:  # each table's name makes its own digest
            statements.append(f"SELECT id FROM t{table:05d} WHERE v = 1")
    run_batched(server, statements, autocommit=True)
    print(f"replayed the work on {tables} tables in {time.monotonic() - started:.0f}s", flush=True)


def run_batched(server: ThrowawayMariaDB, statements: list[str], autocommit: bool = True) -> None:
    from pymysql.constants import CLIENT

    conn = server.connect(client_flag=CLIENT.MULTI_STATEMENTS, autocommit=autocommit, read_timeout=600)
    try:
        with conn.cursor() as cursor:
            for start in range(0, len(statements), BATCH):
                cursor.execute(";\n".join(statements[start:start + BATCH]))
                while cursor.nextset():
                    pass
    finally:
        conn.close()


def fresh_user(server: ThrowawayMariaDB, directory: Path, name: str) -> Path:
    """make_user's account, on a datadir that may keep the one of an earlier run."""
    server.execute(f"DROP USER IF EXISTS '{name}'@'127.0.0.1'")
    return make_user(server, directory, name)


def open_idle_connections(server: ThrowawayMariaDB, count: int) -> list:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 1024)), hard))
    # No TLS: pymysql would build a TLS context (the CA store, ~0.8 MB and 20 ms) for each.
    return [server.connect(ssl_disabled=True) for _ in range(count)]


# --------------------------------------------------------------------------- the exporters

class RssSampler(threading.Thread):
    """The process's RSS every 20 ms: the peak of a scrape that a single reading after it misses."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.peak = max(self.peak, self.process.memory_info().rss / 1e6)
            except psutil.Error:
                return
            time.sleep(0.02)

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return self.peak


@dataclass
class Exporter:
    name: str
    command: list[str]
    port: int
    latencies: list[float] = field(default_factory=list)
    series: int = 0
    failed: list[str] = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    served: dict = field(default_factory=dict)

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port, self.process, timeout=30)
        self.ps = psutil.Process(self.process.pid)

    def rss(self) -> float:
        return self.ps.memory_info().rss / 1e6

    def cpu(self) -> float:
        return sum(self.ps.cpu_times()[:2])

    def get(self, path: str, timeout: float) -> tuple[float, str]:
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout + 30)
        try:
            connection.request("GET", path, headers={"Accept": ACCEPT, "Accept-Encoding": "identity",
                                                     "X-Prometheus-Scrape-Timeout-Seconds": f"{timeout:g}"})
            response = connection.getresponse()
            body = response.read().decode()
        finally:
            connection.close()
        if response.status != 200:
            raise RuntimeError(f"{self.name}: HTTP {response.status} for {path}")
        return time.perf_counter() - started, body

    def scrape(self, timeout: float) -> None:
        took, body = self.get("/metrics", timeout)
        self.latencies.append(took)
        lines = [line for line in body.splitlines() if line and not line.startswith("#")]
        self.series = len(lines)
        self.served = {name: sum(1 for line in lines if line.startswith(prefixes))
                       for name, prefixes in SERIES_PREFIXES.items()}
        self.failed = sorted(re.findall(r'^mysql_exporter_collector_success\{collector="([^"]+)"\} 0', body, re.M))
        self.errors = {(c, r): float(v) for c, r, v in re.findall(
            r'^mysql_exporter_scrape_errors_total\{collector="([^"]+)",reason="([^"]+)"\} (\S+)', body, re.M)}

    def stop(self) -> None:
        stop_process(self.process)


def go_command(my_cnf: Path, port: int, collectors: tuple[str, ...], extra: tuple[str, ...]) -> list[str]:
    return [GO_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
            *(f"--no-collect.{name}" for name in DEFAULTS_OFF if name not in collectors),
            *(f"--collect.{name}" for name in collectors), *extra]


def our_command(my_cnf: Path, port: int, collectors: tuple[str, ...], extra: tuple[str, ...]) -> list[str]:
    return [*our_program(), "exporter", f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
            f"--exporter.leak-state-file={my_cnf.with_name('leak-state.json')}", "--no-collect.host",
            "--no-collect.engine_innodb_status",
            *(f"--no-collect.{name}" for name in DEFAULTS_OFF if name not in collectors),
            *(f"--collect.{name}" for name in collectors), *extra]


@dataclass
class Measured:
    median_ms: float
    cpu_ms: float
    series: int
    peak_mb: float
    after_mb: float
    steady_mb: float
    start_mb: float
    failed: list[str]
    errors: dict
    served: dict


def measure_pair(users: dict[str, Path], collectors: tuple[str, ...], extra: tuple[str, ...], scrapes: int,
                 timeout: float, settle: float) -> dict[str, Measured]:
    """Go's and ours, fresh, scraped in turn ``scrapes`` times with ``collectors``."""
    ports = {"go": free_loopback_port(), "ours": free_loopback_port()}
    exporters = {name: Exporter(name, command(users[name], ports[name], collectors, extra), ports[name])
                 for name, command in (("go", go_command), ("ours", our_command))}
    started = []
    try:
        for exporter in exporters.values():
            exporter.start()
            started.append(exporter)
        start_rss = {name: e.rss() for name, e in exporters.items()}
        samplers = {name: RssSampler(e.process.pid) for name, e in exporters.items()}
        for sampler in samplers.values():
            sampler.start()
        cpu_before = {name: e.cpu() for name, e in exporters.items()}
        for _ in range(scrapes):
            for exporter in exporters.values():
                exporter.scrape(timeout)
        cpu = {name: (e.cpu() - cpu_before[name]) / scrapes * 1000 for name, e in exporters.items()}
        after = {name: e.rss() for name, e in exporters.items()}
        peaks = {name: s.stop() for name, s in samplers.items()}
        time.sleep(settle)
        return {name: Measured(statistics.median(e.latencies) * 1000, cpu[name], e.series, peaks[name], after[name],
                               e.rss(), start_rss[name], e.failed, e.errors, e.served)
                for name, e in exporters.items()}
    finally:
        for exporter in started:
            exporter.stop()


def print_row(label: str, result: dict[str, Measured]) -> None:
    go, ours = result["go"], result["ours"]
    print(f"{label:32}{ours.median_ms:9.0f}{go.median_ms:9.0f}{ours.median_ms / go.median_ms:7.2f}x"
          f"{ours.cpu_ms:9.0f}{go.cpu_ms:9.0f}"
          f"{f'{ours.cpu_ms / go.cpu_ms:7.2f}x' if go.cpu_ms >= 1 else '      -':8}"
          f"{ours.series:9d}{go.series:9d}"
          f"{ours.peak_mb:8.0f}/{ours.steady_mb:<5.0f}{go.peak_mb:8.0f}/{go.steady_mb:<5.0f}", flush=True)
    for name, measured in result.items():
        if label.startswith("3 table"):
            print(f"{'':32}{name} series served: {measured.served}; errors {measured.errors}", flush=True)
        elif measured.failed:
            print(f"{'':32}{name} failed: {', '.join(measured.failed)}; errors {measured.errors}", flush=True)


# --------------------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datadir", type=Path, default=Path("/var/tmp/mysql-snmp-scale"),
                        help="kept between runs: the tables are built once")
    parser.add_argument("--tables", type=int, default=20000)
    parser.add_argument("--digests", type=int, default=10000)
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--scrapes", type=int, default=3, help="per heavy collector and exporter")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after the scrapes for the steady RSS")
    parser.add_argument("--probes", type=int, default=500)
    parser.add_argument("--probe-interval", type=float, default=15.0)
    parser.add_argument("--probe-seconds", type=float, default=60.0)
    parser.add_argument("--only", default="", help="comma-separated: heavy, starvation, big, probe, build")
    parser.add_argument("--collectors", default="", metavar="NAME,...",
                        help="the heavy collectors to measure (default: " + ", ".join(name for name, _ in HEAVY) + ")")
    args = parser.parse_args()
    parts = set(filter(None, args.only.split(","))) or {"heavy", "starvation", "big", "probe"}
    heavy = [(name, extra) for name, extra in HEAVY if not args.collectors or name in args.collectors.split(",")]
    unknown = set(filter(None, args.collectors.split(","))) - {name for name, _ in HEAVY}
    if unknown:
        parser.error(f"--collectors: not a heavy collector: {', '.join(sorted(unknown))}")
    server = ThrowawayMariaDB(server_id=21, extra_args=SERVER_ARGS, base_dir=args.datadir, startup_timeout=300)
    server.start()
    try:
        build(server, args.tables, args.users)
        if parts == {"build"}:
            return 0
        replay_work(server, args.tables, args.digests)
        idle = open_idle_connections(server, args.connections)
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            users = {"go": fresh_user(server, directory, "scale_go"), "ours": fresh_user(server, directory, "scale_ours")}
            print(f"{args.tables} tables, {args.digests} digests, {len(idle)} idle connections, {args.users} users; "
                  f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
            print(f"{'collector':32}{'ours ms':>9}{'Go ms':>9}{'':>8}{'ours CPU':>9}{'Go CPU':>9}{'':>8}"
                  f"{'ours':>9}{'Go':>9}{'ours RSS peak/steady':>22}{'Go RSS peak/steady':>20}")
            if "heavy" in parts:
                for name, extra in heavy:
                    print_row(name, measure_pair(users, (name,), extra, args.scrapes, 30.0, args.settle))
            if "starvation" in parts:
                print_row("3 table collectors, 10s timeout",
                          measure_pair(users, STARVATION, (), args.scrapes, 10.0, args.settle))
            if "big" in parts:
                small = measure_pair(users, ("global_status",), (), args.scrapes, 30.0, args.settle)
                print_row("small scrape (global_status)", small)
                big = measure_pair(users, BIG_SCRAPE, ("--collect.perf_schema.eventsstatements.limit=10000",),
                                   args.scrapes, 60.0, 60.0)
                print_row("5 perf_schema at limits, +60s", big)
                for name in ("ours", "go"):
                    print(f"{name}: steady RSS a minute after the big scrape {big[name].steady_mb:.0f} MB = "
                          f"{big[name].steady_mb / small[name].steady_mb:.2f}x the small scrape's "
                          f"{small[name].steady_mb:.0f} MB", flush=True)
        if "probe" in parts:
            from tests.bench.bench_probe_targets import probe_run  # it imports this module

            with tempfile.TemporaryDirectory() as tmp:
                probe_run(server, Path(tmp), args.probes, args.probe_interval, args.probe_seconds, 10.0)
        for connection in idle:
            connection.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
