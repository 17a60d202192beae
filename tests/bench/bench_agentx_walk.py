"""AgentX subagent benchmark: full snmpbulkwalk of the legacy tree through a real snmpd.

    .venv/bin/python tests/bench/bench_agentx_walk.py [--walks 50]

Starts a throwaway MariaDB, a private snmpd and ``mysql-snmp agentx`` (as a process, like in
production), then prints:
- wall time per full snmpbulkwalk of the legacy tree (median of --walks runs, client start
  included, as the original's 46 ms figure was measured) and the ratio to 46 ms;
- the client's own start-up cost (snmpget of an object snmpd answers itself);
- agent CPU and RSS per walk;
- snmpget latency while other walks run concurrently;
- the in-process cost of answering one GetNext from the view;
- time to be served again after snmpd is killed and restarted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import timeit
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

import psutil  # noqa: E402

from agents.agentx.codec import GetNext, SearchRange  # noqa: E402
from agents.agentx.responder import answer  # noqa: E402
from agents.agentx.view import TreeLayout, build_view  # noqa: E402
from agents.catalog import format_oid, load_catalog  # noqa: E402
from agents.collection import Collector  # noqa: E402
from agents.connection import settings_from_my_cnf  # noqa: E402
from agents.throwaway import ThrowawayMariaDB  # noqa: E402
from tests.agentx.agent_process import mysql_up, run_agent, stop_agent  # noqa: E402
from tests.agentx.netsnmp import Snmpd, wait_until  # noqa: E402

ORIGINAL_WALK_MS = 46.0  # the Perl mysql-snmp behind snmpd, per ../shared/README.md
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--walks", type=int, default=50)
    parser.add_argument("--gets", type=int, default=200)
    options = parser.parse_args()
    catalog = load_catalog()
    legacy_root = format_oid(catalog.legacy_root)
    my_com_select = format_oid(catalog.by_name("status_com_select").snmp.legacy.oid) + ".0"

    with tempfile.TemporaryDirectory(prefix="bench-agentx-") as tmp, ThrowawayMariaDB() as server:
        tmp = Path(tmp)
        snmpd = Snmpd(tmp / "snmpd")
        snmpd.start()
        agent = run_agent(snmpd, server, tmp, refresh=30.0)
        try:
            agent_process = psutil.Process(agent.process.pid)
            walked = snmpd.bulkwalk(legacy_root)
            for _ in range(3):
                snmpd.bulkwalk(legacy_root)  # warm up
            client_start = statistics.median(timed(lambda: snmpd.get(SYS_UPTIME)) for _ in range(20))

            cpu_before = sum(agent_process.cpu_times()[:2])
            walk_times = [timed(lambda: snmpd.bulkwalk(legacy_root)) for _ in range(options.walks)]
            cpu_per_walk = (sum(agent_process.cpu_times()[:2]) - cpu_before) / options.walks
            full_tree = statistics.median(
                timed(lambda: snmpd.bulkwalk(format_oid(catalog.legacy_root[:-1]))) for _ in range(10))
            full_count = len(snmpd.bulkwalk(format_oid(catalog.legacy_root[:-1])))

            stop_load = threading.Event()
            load_walks = [0]

            def load():
                while not stop_load.is_set():
                    snmpd.bulkwalk(legacy_root)
                    load_walks[0] += 1

            loader = threading.Thread(target=load)
            loader.start()
            get_times = [timed(lambda: snmpd.get(my_com_select)) for _ in range(options.gets)]
            stop_load.set()
            loader.join()

            # In-process: one GetNext answered from a view of a real collection.
            snapshot = Collector(settings_from_my_cnf(agent.my_cnf)).collect()
            view = build_view(TreeLayout.from_catalog(catalog), snapshot)
            request = GetNext(ranges=(SearchRange(catalog.legacy_root + (77, 0)),))
            per_answer = min(timeit.repeat(lambda: answer(request, view), number=2000, repeat=5)) / 2000
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
            rss = agent_process.memory_info().rss
        finally:
            stop_agent(agent)
            snmpd.stop()

    median_walk = statistics.median(walk_times)
    print(f"legacy tree: {len(walked)} objects served on {server.address} (MariaDB)")
    print(f"snmpbulkwalk of the legacy tree, median of {options.walks}: {ms(median_walk)} "
          f"(p90 {ms(percentile(walk_times, 0.9))}, min {ms(min(walk_times))})")
    print(f"  ratio to the original's {ORIGINAL_WALK_MS:.0f} ms: {median_walk * 1000 / ORIGINAL_WALK_MS:.2f}"
          f"  (goal: <= 0.50)")
    print(f"  client start-up (snmpget answered by snmpd itself): {ms(client_start)}; "
          f"walk minus client start: {ms(median_walk - client_start)}")
    print(f"  agent CPU per walk: {ms(cpu_per_walk)} (original: 27 ms); agent RSS: {rss / 2**20:.1f} MB")
    print(f"full walk of enterprises.20267.200 ({full_count} instances), median of 10: {ms(full_tree)}")
    print(f"snmpget latency under a concurrent walk load ({load_walks[0]} walks meanwhile), {options.gets} gets: "
          f"median {ms(statistics.median(get_times))}, p99 {ms(percentile(get_times, 0.99))}")
    print(f"in-process GetNext answer from the view: {per_answer * 1e6:.1f} us; "
          f"view rebuild per collection: {ms(build_time)} ({len(view)} instances)")
    print(f"served again after snmpd kill + restart: {', '.join(f'{r:.2f} s' for r in restarts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
