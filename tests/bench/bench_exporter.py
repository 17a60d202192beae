"""Benchmark: our exporter against Debian's prometheus-mysqld-exporter (Go) on one throwaway MariaDB.

Both run the same collectors (global_status, global_variables, slave_status,
engine_innodb_status), each as its own MySQL user, side by side, and are scraped
in turn (Go, ours, Go, ours...) so the rest of the machine's load falls on both
alike.  Each exporter runs twice, once per client, all four scraped in one interleaved run:

- ``prometheus``: as Prometheus scrapes, one keep-alive HTTP connection, Prometheus' Accept header, gzip;
- ``curl``: as a user tries it by hand (curl, a shell loop), a new connection per scrape, ``Accept: */*``,
  no compression.

The two give different ratios: Go compresses with its own gzip, which costs it about 3 ms a scrape
that the curl client never asks for, so against curl this exporter's lead on CPU and latency
mostly goes.  ``--defaults`` runs on a server with the query_response_time plugin loaded (as on
the servers users try it on: both exporters' defaults read its table, so Go sends 13 statements a
scrape there and 10 without it).

Printed per exporter and client: median and p90 latency, exporter CPU per scrape (process CPU
time delta / scrapes, psutil), RSS at start (listening, nothing scraped), after the first scrape
and after the run (both started by their plain command line as installed, no environment added),
statements and failed statements per scrape (performance_schema, per user), and the ratios.

Run: .venv/bin/python tests/bench/bench_exporter.py [--scrapes 200] [--defaults | --every]
     [--client prometheus|curl|both]
(--defaults: each exporter with its own default collectors instead; --every: every collector the Go
exporter has, on a MariaDB with userstat and the query_response_time plugin, so each table has rows).
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mysql_snmp.agents.demo.netsnmp_sandbox import stop_process  # noqa: E402
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port  # noqa: E402
from tests.exporter.go_exporter import GO_EXPORTER, go_flags  # noqa: E402

WARMUP_SCRAPES = 5
ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
COLLECTORS = ("global_status", "global_variables", "slave_status", "engine_innodb_status")
# The other default collectors (both exporters): switched off for the like-for-like run of the four.
OTHER_DEFAULTS = ("info_schema.innodb_cmp", "info_schema.innodb_cmpmem", "info_schema.query_response_time")
# Flags of the Go exporter that are boolean options, not collectors.
GO_BOOLEAN_OPTIONS = ("heartbeat.utc", "info_schema.processlist.processes_by_host",
                      "info_schema.processlist.processes_by_user", "mysql.user.privileges")
GRANTS = "GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT ON *.* TO {user}"


def make_user(server: ThrowawayMariaDB, directory: Path, name: str) -> Path:
    account = f"'{name}'@'127.0.0.1'"
    server.execute(f"CREATE USER {account} IDENTIFIED BY 'bench-{name}'", GRANTS.format(user=account))
    my_cnf = directory / f"{name}.cnf"
    my_cnf.write_text(f"[client]\nuser = {name}\npassword = bench-{name}\nhost = 127.0.0.1\nport = {server.port}\n")
    my_cnf.chmod(0o600)
    return my_cnf


def every_go_collector() -> list[str]:
    """The collectors the installed Go exporter lists in --help."""
    names = {name.removeprefix("collect.") for name, default in go_flags().items()
             if default is None and name.startswith("collect.")}
    return sorted(names - set(GO_BOOLEAN_OPTIONS))


def collector_flags(scenario: str) -> list[str]:
    if scenario == "defaults":
        return []
    if scenario == "every":
        return [f"--collect.{name}" for name in every_go_collector()]
    return [f"--collect.{name}" for name in COLLECTORS] + [f"--no-collect.{name}" for name in OTHER_DEFAULTS]


def go_command(my_cnf: Path, port: int, scenario: str) -> list[str]:
    return [GO_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
            *collector_flags(scenario)]


def our_program() -> list[str]:
    """What a user runs: the installed console script, else the module (a checkout without its venv)."""
    script = Path(sys.executable).with_name("mysql-snmp")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mysql_snmp.agents.cli"]


def our_command(my_cnf: Path, port: int, scenario: str) -> list[str]:
    # The leak detector runs (it is on by default) but keeps its history next to my_cnf, not in
    # /var/lib/mysql-snmp: a file of its own per exporter (one per user), since a shared file is
    # locked by the first (agents/leak/history_lock.py) and the second would run without one.
    command = [*our_program(), "exporter",
               f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
               f"--exporter.leak-state-file={my_cnf.with_suffix('.leak-state.json')}"]
    command += collector_flags(scenario)
    if scenario != "defaults":
        command.append("--no-collect.host")
    return command


def rss_mb(process: subprocess.Popen) -> float:
    return psutil.Process(process.pid).memory_info().rss / 1e6


def statement_counts(server: ThrowawayMariaDB, user: str) -> tuple[int, int]:
    rows = server.execute(
        "SELECT COALESCE(SUM(COUNT_STAR), 0), COALESCE(SUM(SUM_ERRORS), 0)"
        " FROM performance_schema.events_statements_summary_by_user_by_event_name"
        f" WHERE USER = '{user}'")
    return int(rows[0][0]), int(rows[0][1])


def wait_listening(port: int, process: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exporter exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/")
            connection.getresponse().read()
            connection.close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


CLIENTS = ("prometheus", "curl")


class Exporter:
    """One exporter process being benchmarked, scraped by one kind of client (CLIENTS)."""

    def __init__(self, name: str, command: list[str], port: int, user: str, client: str = "prometheus"):
        self.name, self.port, self.user, self.client = name, port, user, client
        self.process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(port, self.process)
        self.rss_start = rss_mb(self.process)  # started and listening, nothing scraped yet
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.latencies: list[float] = []
        self.size = 0
        self.rss_first = 0.0  # after the first scrape

    def scrape(self) -> float:
        started = time.perf_counter()
        if self.client == "curl":  # a new connection each time, no compression, curl's Accept
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            headers = {"Accept": "*/*"}
        else:
            headers = {"Accept": ACCEPT, "Accept-Encoding": "gzip", "X-Prometheus-Scrape-Timeout-Seconds": "10"}
        self.connection.request("GET", "/metrics", headers=headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"{self.name}: HTTP {response.status}")
        self.size = len(body)
        return time.perf_counter() - started

    def cpu_seconds(self) -> float:
        return sum(psutil.Process(self.process.pid).cpu_times()[:2])

    def stop(self) -> None:
        self.connection.close()
        stop_process(self.process)


def run(exporters: list[Exporter], server: ThrowawayMariaDB, scrapes: int, warmup: int = WARMUP_SCRAPES) -> list[dict]:
    """Scrape the exporters in turn, so load from the rest of the machine hits both alike."""
    for exporter in exporters:
        for _ in range(warmup):
            exporter.scrape()
            exporter.rss_first = exporter.rss_first or rss_mb(exporter.process)
    before = {e.user: (e.cpu_seconds(), statement_counts(server, e.user)) for e in exporters}
    for _ in range(scrapes):
        for exporter in exporters:
            exporter.latencies.append(exporter.scrape())
    results = []
    for exporter in exporters:
        cpu_before, (statements_before, errors_before) = before[exporter.user]
        statements_after, errors_after = statement_counts(server, exporter.user)
        latencies = sorted(exporter.latencies)
        results.append({
            "name": exporter.name,
            "median_ms": statistics.median(latencies) * 1000,
            "p90_ms": latencies[int(len(latencies) * 0.9)] * 1000,
            "cpu_ms": (exporter.cpu_seconds() - cpu_before) / scrapes * 1000,
            "rss_start_mb": exporter.rss_start,
            "rss_first_mb": exporter.rss_first,
            "rss_mb": rss_mb(exporter.process),
            # Each exporter's own user: the other exporter's statements are not counted.
            "statements": (statements_after - statements_before) / scrapes,
            "failed": (errors_after - errors_before) / scrapes,
            "body_kb": exporter.size / 1000,
        })
    return results


def print_table(results: list[dict], title: str, scrapes: int) -> None:
    go, ours = results
    print(title)
    print(f"{'':24}{'median ms':>10}{'p90 ms':>9}{'CPU ms':>9}{'RSS MB':>9}{'RSS@0':>8}{'stmts':>8}{'failed':>8}"
          f"{'body kB':>9}")
    for r in results:
        print(f"{r['name']:24}{r['median_ms']:10.1f}{r['p90_ms']:9.1f}{r['cpu_ms']:9.1f}{r['rss_mb']:9.1f}"
              f"{r['rss_start_mb']:8.1f}{r['statements']:8.1f}{r['failed']:8.1f}{r['body_kb']:9.1f}")
    print(f"{'ours / Go':24}{ours['median_ms'] / go['median_ms']:10.2f}{ours['p90_ms'] / go['p90_ms']:9.2f}"
          f"{ours['cpu_ms'] / go['cpu_ms']:9.2f}{ours['rss_mb'] / go['rss_mb']:9.2f}"
          f"{ours['rss_start_mb'] / go['rss_start_mb']:8.2f}{ours['statements'] / go['statements']:8.2f}")
    for r in results:
        print(f"RSS {r['name']}: {r['rss_start_mb']:.1f} MB at start, {r['rss_first_mb']:.1f} MB after the first "
              f"scrape, {r['rss_mb']:.1f} MB after {scrapes + WARMUP_SCRAPES} scrapes")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--client", choices=(*CLIENTS, "both"), default="both",
                        help="scrape as Prometheus does, as curl does, or each exporter both ways (default)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--defaults", action="store_true", help="each exporter with its default collectors")
    choice.add_argument("--every", action="store_true", help="every collector of the Go exporter, on both")
    args = parser.parse_args()
    scenario = "defaults" if args.defaults else "every" if args.every else "four"
    clients = CLIENTS if args.client == "both" else (args.client,)
    if not shutil.which(GO_EXPORTER):
        print(f"{GO_EXPORTER} not installed (apt-get install prometheus-mysqld-exporter)")
        return 1
    from tests.conftest import TABLE_COLLECTOR_ARGS

    server_args = {"every": TABLE_COLLECTOR_ARGS, "defaults": TABLE_COLLECTOR_ARGS[1:], "four": ()}[scenario]
    with ThrowawayMariaDB(extra_args=server_args) as server, tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        exporters = []
        try:
            for client in clients:
                for name, user, build in (("mysqld_exporter (Go)", "go", go_command),
                                          ("mysql-snmp exporter", "py", our_command)):
                    my_cnf = make_user(server, directory, f"bench_{user}_{client}")
                    port = free_loopback_port()
                    exporters.append(Exporter(name, build(my_cnf, port, scenario), port, my_cnf.stem, client))
            results = run(exporters, server, args.scrapes)
        finally:
            for exporter in exporters:
                exporter.stop()
    described = {"defaults": "default collectors (query_response_time plugin loaded)", "every": "every collector",
                 "four": "collectors: " + ", ".join(COLLECTORS)}[scenario]
    print(f"{args.scrapes} scrapes each, {described}, throwaway MariaDB, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; all exporters scraped in turn")
    for index, client in enumerate(clients):
        print()
        print_table(results[2 * index:2 * index + 2], f"client: {client}", args.scrapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
