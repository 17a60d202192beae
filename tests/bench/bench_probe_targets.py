"""Benchmark: many /probe targets from one exporter, on one core, against a real MariaDB.

The default run is the multi-target case of issue 24: ``--targets`` auth modules ([client.mNNNN],
each the same monitoring user and address, so each is a target of its own, as that many servers
would be), each probed once per ``--interval`` seconds for ``--seconds``, spread evenly, the
exporter pinned to one core (``taskset``'s affinity).  It prints: probes answered, failed and over
their ``--timeout``; latency median, p99 and max; CPU per probe and probes per CPU-second, for the
first round (each target new: connect, option file, first collection) and the later ones; RSS and
thread count at peak (sampled every 100 ms) and steady (``--settle`` seconds after the last probe).

``--remembered`` instead measures the RSS N remembered targets add (each probed twice, 4 at a time):
the per-target budget docs/security.md states.

    .venv/bin/python tests/bench/bench_probe_targets.py [--targets 500] [--interval 15] [--seconds 60]
        [--flag=--exporter.collection-workers=8 ...]
    .venv/bin/python tests/bench/bench_probe_targets.py --remembered --targets 500
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port  # noqa: E402
from tests.bench.bench_exporter import our_program  # noqa: E402
from tests.bench.bench_exporter_scale import Exporter, fresh_user  # noqa: E402
from tests.faults.hostile_kit import MB, remembered_targets_rss  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402


class ProcessSampler(threading.Thread):
    """RSS and thread count of a process every 100 ms: their peaks."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak_rss = 0
        self.peak_threads = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            try:
                with self.process.oneshot():
                    self.peak_rss = max(self.peak_rss, self.process.memory_info().rss)
                    self.peak_threads = max(self.peak_threads, self.process.num_threads())
            except psutil.Error:
                return


@dataclass
class Round:
    probes: int = 0
    cpu: float = 0.0

    def text(self) -> str:
        if not self.probes:
            return "-"
        return (f"{self.cpu / self.probes * 1000:.1f} ms CPU per probe "
                f"({self.probes / max(self.cpu, 1e-9):.0f} probes per CPU-second)")


def probe_run(server: ThrowawayMariaDB, directory: Path, targets: int, interval: float, seconds: float,
              timeout: float, flags: tuple[str, ...] = (), settle: float = 5.0, core: int = 0) -> None:
    """``targets`` /probe targets (one auth module each), each probed once per ``interval`` for
    ``seconds``, spread evenly; the exporter pinned to ``core``."""
    my_cnf = fresh_user(server, directory, "bench_probe")
    body = my_cnf.read_text()
    sections = "".join(f"\n[client.m{n:04d}]\n" + body.split("\n", 1)[1] for n in range(targets))
    my_cnf.write_text(body + sections)
    port = free_loopback_port()
    exporter = Exporter("ours", [*our_program(), "exporter", f"--web.listen-address=127.0.0.1:{port}",
                                 f"--config.my-cnf={my_cnf}", "--no-collect.host",
                                 f"--exporter.leak-state-file={directory / 'probe-leak.json'}", *flags], port)
    exporter.start()
    os.sched_setaffinity(exporter.process.pid, {core})
    sampler = ProcessSampler(exporter.process.pid)
    sampler.start()
    late = errors = answered = 0
    latencies: list[float] = []
    lock = threading.Lock()

    def probe(n: int) -> None:
        nonlocal late, errors, answered
        try:
            took, text = exporter.get(f"/probe?target=127.0.0.1:{server.port}&auth_module=client.m{n:04d}", timeout)
            ok = "\nmysql_up 1" in "\n" + text
        except Exception:
            took, ok = timeout, False
        with lock:
            latencies.append(took)
            answered += ok
            errors += not ok
            late += took > timeout

    try:
        time.sleep(1.0)
        idle_rss, idle_threads = exporter.rss(), exporter.ps.num_threads()
        first, later = Round(), Round()
        cpu_before = exporter.cpu()
        cpu_mark = None
        started = time.monotonic()
        threads = []
        sent = 0
        while time.monotonic() - started < seconds:
            due = started + sent * interval / targets
            time.sleep(max(0.0, due - time.monotonic()))
            if sent == targets:
                cpu_mark = exporter.cpu()
            thread = threading.Thread(target=probe, args=(sent % targets,), daemon=True)
            thread.start()
            threads.append(thread)
            sent += 1
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        cpu = exporter.cpu() - cpu_before
        if cpu_mark is not None:
            first = Round(targets, cpu_mark - cpu_before)
            later = Round(sent - targets, cpu - first.cpu)
        time.sleep(settle)
        sampler.done.set()
        latencies.sort()
        print(f"/probe: {targets} targets every {interval:g}s for {elapsed:.0f}s, exporter on core {core} "
              f"{' '.join(flags) or '(defaults)'}; load average {os.getloadavg()[0]:.1f}\n"
              f"  {sent} probes: {answered} up, {errors} failed, {late} over the {timeout:g}s timeout; latency "
              f"median {statistics.median(latencies) * 1000:.0f} ms, p99 "
              f"{latencies[int(len(latencies) * 0.99)] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms\n"
              f"  CPU: {cpu / sent * 1000:.1f} ms per probe ({sent / max(cpu, 1e-9):.0f} probes per CPU-second, "
              f"{cpu / elapsed * 100:.0f}% of the core); first round {first.text()}; later rounds {later.text()}\n"
              f"  RSS {idle_rss:.0f} MB before, peak {max(sampler.peak_rss / 1e6, exporter.rss()):.0f} MB, "
              f"steady {exporter.rss():.0f} MB ({settle:g}s after); threads {idle_threads} before, peak "
              f"{max(sampler.peak_threads, exporter.ps.num_threads())}, steady {exporter.ps.num_threads()}",
              flush=True)
    finally:
        sampler.done.set()
        exporter.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=500)
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--flag", action="append", default=[], help="an exporter flag (repeatable)")
    parser.add_argument("--remembered", action="store_true", help="RSS of N remembered targets instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, \
            ThrowawayMariaDB(extra_args=(f"--max-connections={args.targets + 50}",)) as server:
        if args.remembered:
            user = create_monitoring_user(server, Path(directory))
            measured = remembered_targets_rss(user.my_cnf, server.port, args.targets, Path(directory))
            print(f"{measured.count} targets ({measured.body_bytes} bytes a probe body): RSS "
                  f"{measured.alone / MB:.1f} MB alone, +{measured.grown / MB:.1f} MB with the targets, "
                  f"{measured.per_target / 1024:.0f} KiB a target; {measured.threads} threads, "
                  f"{measured.descriptors} fds")
        else:
            probe_run(server, Path(directory), args.targets, args.interval, args.seconds, args.timeout,
                      tuple(args.flag), args.settle, args.core)
    return 0


if __name__ == "__main__":
    sys.exit(main())
