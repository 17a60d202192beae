"""AgentX subagent benchmark: full snmpbulkwalk of the legacy tree through a real snmpd,
side by side with the original Perl mysql-snmp agent when it is available.

    .venv/bin/python tests/bench/bench_agentx_walk.py [--rounds 6] [--walks 20] \
        [--perl-agent /tmp/perl-mysql-snmp/mysql-snmp]

Starts a throwaway MariaDB and a private snmpd.  Each round runs ``mysql-snmp agentx`` (as a
process, like in production) and then the Perl agent (the order alternates between rounds)
as the AgentX subagent of that snmpd, one at a time since both register the legacy tree;
each is walked --walks times per round, so the shared machine's noise hits both alike.
With --interleave both run at once (the Perl agent's tree moved to a root of the same
length) and are walked in turn, walk by walk: on a machine whose load comes in bursts the
ratio from one run is much steadier that way.
Printed per agent: the median wall time of a walk (client start included, as the
original's 46 ms figure was measured), the median agent CPU per walk (psutil; steadier than
wall time on a loaded machine), snmpd's CPU during its walks (the cost of each AgentX round
trip outside the agent), and the ratio of ours to the Perl agent's from this run.
The two do not serve the same number of objects (the original answers 0 for values it
cannot read, we leave them out), so the ratio per object served is printed too.  Then, for
ours only: the client's own start, snmpget latency under concurrent walks, the in-process
cost of one walk step and of one GetNext, and the time to be served again after snmpd restarts.

The Perl agent (not part of this repository; GPL, another project's code) is set up with:

    apt-get install libsnmp-perl libdbi-perl libdbd-mysql-perl libunix-syslog-perl \
        libmath-bigint-gmp-perl
    # its source: github.com/masterzen/mysql-snmp (e.g. the `fetch github:masterzen/mysql-snmp`
    # tool, or git clone); copy the `mysql-snmp` script somewhere outside the repository:
    git --git-dir=<mirror> archive HEAD mysql-snmp | tar -x -C /tmp/perl-mysql-snmp

and given with --perl-agent PATH or MYSQL_SNMP_PERL_AGENT=PATH.  It reads the MySQL account
from a my.cnf (-c) and finds snmpd's AgentX socket through a ``mysql.conf`` in SNMPCONFPATH.
Without it the benchmark says so and prints our figures only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

import psutil  # noqa: E402

from mysql_snmp.agents.agentx.codec import GetNext, SearchRange, encode  # noqa: E402
from mysql_snmp.agents.agentx.protocol import AgentXProtocol  # noqa: E402
from mysql_snmp.agents.agentx.responder import answer  # noqa: E402
from mysql_snmp.agents.agentx.view import TreeLayout, build_view  # noqa: E402
from mysql_snmp.agents.catalog import format_oid, load_catalog  # noqa: E402
from mysql_snmp.agents.collection import Collector  # noqa: E402
from mysql_snmp.agents.config.settings import settings_from_my_cnf  # noqa: E402
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB  # noqa: E402
from tests.agentx.agent_process import mysql_up, run_agent, stop_agent  # noqa: E402
from tests.agentx.netsnmp import Snmpd, stop_process, wait_until  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402

PERL_AGENT_ENV = "MYSQL_SNMP_PERL_AGENT"
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
REFRESH_SECONDS = 30  # both agents
# --interleave: the Perl agent's tree, as long as the legacy root, so its walk carries the
# same OID lengths while ours serves the real one.
MOVED_ROOT = "1.3.6.1.4.1.20267.201.1"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def agent_cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def cpu_seconds_ns(pid: int) -> float:
    """CPU time of every thread of ``pid`` (schedstat: nanoseconds, fine enough for one walk,
    where psutil's clock ticks are 10 ms)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e9


@dataclass
class Contender:
    """One agent in the comparison: how to start it serving ``root``, and what its walks cost."""

    name: str
    root: str
    start: Callable[[], subprocess.Popen]
    walk_times: list[float] = field(default_factory=list)
    cpu_per_walk: list[float] = field(default_factory=list)  # one figure per round
    snmpd_cpu: list[float] = field(default_factory=list)  # snmpd's CPU during each walk
    objects: int = 0

    def warm_up(self, snmpd: Snmpd) -> None:
        self.objects = len(snmpd.bulkwalk(self.root))
        for _ in range(3):
            snmpd.bulkwalk(self.root)

    def walk(self, snmpd: Snmpd) -> None:
        before = cpu_seconds_ns(snmpd.process.pid)
        self.walk_times.append(timed(lambda: snmpd.bulkwalk(self.root)))
        self.snmpd_cpu.append(cpu_seconds_ns(snmpd.process.pid) - before)

    def round(self, snmpd: Snmpd, walks: int) -> None:
        process = self.start()
        try:
            measured = psutil.Process(process.pid)
            self.warm_up(snmpd)
            cpu_before = agent_cpu(measured)
            for _ in range(walks):
                self.walk(snmpd)
            self.cpu_per_walk.append((agent_cpu(measured) - cpu_before) / walks)
        finally:
            stop_process(process)

    def summary(self) -> str:
        return (f"{self.name}: {self.objects} objects; walk median {ms(statistics.median(self.walk_times))} "
                f"(p90 {ms(percentile(self.walk_times, 0.9))}, min {ms(min(self.walk_times))}, "
                f"{len(self.walk_times)} walks); agent CPU per walk, median of rounds "
                f"{ms(statistics.median(self.cpu_per_walk))}; snmpd CPU per walk, median "
                f"{ms(statistics.median(self.snmpd_cpu))}")


def serves_legacy_tree(snmpd: Snmpd, root: str) -> bool:
    found = snmpd.getnext(root)
    return bool(found) and found[0].oid.startswith(root + ".")


def perl_agent_starter(script: Path, snmpd: Snmpd, server, directory: Path, root: str):
    """The original agent as a subagent of ``snmpd``, with the same MySQL rights as ours."""
    user = create_monitoring_user(server, directory, name="perl_bench")
    config = directory / "perl-snmp-conf"
    config.mkdir(exist_ok=True)
    # NetSNMP::agent named 'mysql' reads mysql.conf from SNMPCONFPATH: the private master's socket.
    (config / "mysql.conf").write_text(f"agentXSocket {snmpd.agentx_socket}\n")
    env = {**os.environ, "SNMPCONFPATH": str(config), "MIBS": ":",
           "SNMP_PERSISTENT_DIR": str(directory / "perl-persistent"), "HOME": str(directory)}
    log_path = directory / "perl-agent.log"

    def start() -> subprocess.Popen:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(["perl", str(script), "--no-daemon", "--config", str(user.my_cnf),
                                        "--oid", root, "--refresh", str(REFRESH_SECONDS)],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until(lambda: serves_legacy_tree(snmpd, root) or process.poll() is not None,
                       what="Perl agent serving")
        except AssertionError:
            stop_process(process)
            raise
        if process.poll() is not None:
            raise SystemExit(f"the Perl agent exited ({process.returncode}):\n{log_path.read_text()[-2000:]}")
        return process

    return start


def report_round(contenders: list[Contender], number: int, rounds: int, walks: int) -> None:
    figures = ", ".join(f"{c.name} {ms(statistics.median(c.walk_times[-walks:]))}" for c in contenders)
    print(f"  round {number + 1}/{rounds}: walk medians {figures}", flush=True)


def one_after_the_other(contenders: list[Contender], snmpd: Snmpd, rounds: int, walks: int) -> None:
    """Both serve the legacy tree, so only one runs at a time; the order alternates per round."""
    for number in range(rounds):
        for contender in contenders if number % 2 == 0 else contenders[::-1]:
            contender.round(snmpd, walks)
        report_round(contenders, number, rounds, walks)


def interleaved(contenders: list[Contender], snmpd: Snmpd, rounds: int, walks: int) -> None:
    """Both serve at once (the Perl agent at a moved root of the same length) and are walked
    in turn, walk by walk: a burst of load on the machine hits both alike."""
    processes = []
    try:
        for contender in contenders:
            processes.append(psutil.Process(contender.start().pid))
            contender.warm_up(snmpd)
        for number in range(rounds):
            cpu_before = [agent_cpu(process) for process in processes]
            for _ in range(walks):
                for contender in contenders if number % 2 == 0 else contenders[::-1]:
                    contender.walk(snmpd)
            for contender, process, before in zip(contenders, processes, cpu_before):
                contender.cpu_per_walk.append((agent_cpu(process) - before) / walks)
            report_round(contenders, number, rounds, walks)
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)


def our_details(snmpd: Snmpd, server, tmp: Path, catalog, root: str, gets: int) -> None:
    """Figures for our agent alone: client start, gets under load, in-process answer, restarts."""
    my_com_select = format_oid(catalog.by_name("status_com_select").snmp.legacy.oid) + ".0"
    agent = run_agent(snmpd, server, tmp, REFRESH_SECONDS)
    try:
        client_start = statistics.median(timed(lambda: snmpd.get(SYS_UPTIME)) for _ in range(20))
        stop_load = threading.Event()
        load_walks = [0]

        def load():
            while not stop_load.is_set():
                snmpd.bulkwalk(root)
                load_walks[0] += 1

        loader = threading.Thread(target=load)
        loader.start()
        get_times = [timed(lambda: snmpd.get(my_com_select)) for _ in range(gets)]
        stop_load.set()
        loader.join()

        snapshot = Collector(settings_from_my_cnf(agent.my_cnf)).collect()
        view = build_view(TreeLayout.from_catalog(catalog), snapshot)
        request = GetNext(ranges=(SearchRange(catalog.legacy_root + (77, 0)),))
        per_answer = min(timeit.repeat(lambda: answer(request, view), number=2000, repeat=5)) / 2000
        protocol = AgentXProtocol([catalog.legacy_root])
        step = encode(GetNext(ranges=(SearchRange(view.oids[0]),)))
        per_step = min(timeit.repeat(lambda: protocol.receive_data(step, view), number=2000, repeat=5)) / 2000
        build_time = min(timeit.repeat(lambda: build_view(TreeLayout.from_catalog(catalog), snapshot),
                                       number=5, repeat=3)) / 5
        restarts = []
        for _ in range(3):
            snmpd.kill()
            time.sleep(0.5)
            snmpd.start()
            started = time.monotonic()
            wait_until(lambda: mysql_up(snmpd), timeout=15, interval=0.01, what="served after restart")
            restarts.append(time.monotonic() - started)
        rss = psutil.Process(agent.process.pid).memory_info().rss
    finally:
        stop_agent(agent)
    print(f"client start-up (snmpget answered by snmpd itself): {ms(client_start)}")
    print(f"snmpget latency under a concurrent walk load ({load_walks[0]} walks meanwhile), {gets} gets: "
          f"median {ms(statistics.median(get_times))}, p99 {ms(percentile(get_times, 0.99))}")
    print(f"in-process: walk step bytes in -> bytes out {per_step * 1e6:.1f} us; "
          f"GetNext PDU answered from the view {per_answer * 1e6:.1f} us; "
          f"view rebuild per collection: {ms(build_time)} ({len(view)} instances); agent RSS {rss / 2**20:.1f} MB")
    print(f"served again after snmpd kill + restart: {', '.join(f'{r:.2f} s' for r in restarts)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="rounds; each walks every agent --walks times")
    parser.add_argument("--walks", type=int, default=20)
    parser.add_argument("--gets", type=int, default=200)
    parser.add_argument("--perl-agent", type=Path, default=os.environ.get(PERL_AGENT_ENV) or None,
                        help=f"the original mysql-snmp Perl script (default: ${PERL_AGENT_ENV})")
    parser.add_argument("--interleave", action="store_true",
                        help=f"run both at once, the Perl agent's tree moved to {MOVED_ROOT}, and alternate "
                             "walk by walk (steadier on a loaded machine)")
    parser.add_argument("--compare-only", action="store_true", help="skip the figures of our agent alone")
    options = parser.parse_args()
    if options.perl_agent is not None and not options.perl_agent.is_file():
        parser.error(f"--perl-agent {options.perl_agent}: no such file")
    catalog = load_catalog()
    root = format_oid(catalog.legacy_root)

    with tempfile.TemporaryDirectory(prefix="bench-agentx-") as tmp, ThrowawayMariaDB() as server:
        tmp = Path(tmp)
        snmpd = Snmpd(tmp / "snmpd")
        snmpd.start()
        try:
            ours_dir = tmp / "ours"
            ours_dir.mkdir()
            contenders = [Contender("mysql-snmp agentx", root,
                                    lambda: run_agent(snmpd, server, ours_dir, REFRESH_SECONDS).process)]
            perl_root = MOVED_ROOT if options.interleave else root
            if options.perl_agent is None:
                print(f"Perl agent not run (give --perl-agent PATH or ${PERL_AGENT_ENV}; see this file's docstring)")
            else:
                contenders.append(Contender("Perl mysql-snmp", perl_root,
                                            perl_agent_starter(options.perl_agent, snmpd, server, tmp, perl_root)))
            how = "interleaved walk by walk" if options.interleave else "one agent after the other"
            print(f"{options.rounds} rounds of {options.walks} walks per agent, {how}; "
                  f"{', '.join(f'{c.name} at {c.root}' for c in contenders)}; MariaDB on {server.address}")
            (interleaved if options.interleave else one_after_the_other)(
                contenders, snmpd, options.rounds, options.walks)
            for contender in contenders:
                print(contender.summary())
            if len(contenders) == 2:
                ours, perl = contenders
                wall = statistics.median(ours.walk_times) / statistics.median(perl.walk_times)
                cpu = statistics.median(ours.cpu_per_walk) / statistics.median(perl.cpu_per_walk)
                per_round = [statistics.median(ours.walk_times[i:i + options.walks])
                             / statistics.median(perl.walk_times[i:i + options.walks])
                             for i in range(0, len(ours.walk_times), options.walks)]
                per_object = wall * perl.objects / ours.objects
                print(f"ratio ours/Perl, same run: walk wall time {wall:.2f}x (goal <= 0.50), "
                      f"agent CPU {cpu:.2f}x; per round: {', '.join(f'{r:.2f}' for r in per_round)}")
                print(f"  per object served ({ours.objects} vs {perl.objects}): wall {per_object:.2f}x, "
                      f"CPU {cpu * perl.objects / ours.objects:.2f}x")
            if not options.compare_only:
                our_details(snmpd, server, tmp / "ours", catalog, root, options.gets)
        finally:
            snmpd.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
