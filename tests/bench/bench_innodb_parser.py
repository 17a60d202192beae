"""Time parse_innodb_status over every corpus file: median microseconds per file.

Run: python tests/bench/bench_innodb_parser.py [repeats]
Compares with the original Perl parser's 1.3 ms median per status text (measured over the same
corpus, /work/shared/README.md).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mysql_snmp.parsers.innodb import parse_innodb_status  # noqa: E402

SHARED = ROOT / ".." / "shared" / "fixtures"
PERL_MEDIAN_US = 1300.0


def corpus() -> list[Path]:
    return sorted((SHARED / "innodb").glob("*/*.txt")) + sorted(
        (SHARED / "live" / "mariadb-10.11").glob("show-engine-innodb-status-*.txt"))


def median_us(text: str, repeats: int) -> tuple[float, float]:
    """Median wall-clock and CPU microseconds of one parse. CPU time (this thread only) is the
    steadier figure on a shared machine, where other processes stretch the wall-clock time."""
    wall, cpu = [], []
    for _ in range(repeats):
        start_wall, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
        parse_innodb_status(text)
        cpu.append(time.thread_time_ns() - start_cpu)
        wall.append(time.perf_counter_ns() - start_wall)
    return statistics.median(wall) / 1000, statistics.median(cpu) / 1000


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    files = corpus()
    if not files:
        print(f"no corpus under {SHARED}")
        return 1
    results = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        parse_innodb_status(text)  # warm up
        wall, cpu = median_us(text, repeats if len(text) < 200_000 else max(5, repeats // 20))
        results.append((wall, cpu, path.name, len(text)))
    print(f"{'wall us':>10} {'cpu us':>10} {'bytes':>8}  file")
    for wall, cpu, name, size in results:
        print(f"{wall:10.1f} {cpu:10.1f} {size:8d}  {name}")
    wall_median = statistics.median(wall for wall, _, _, _ in results)
    cpu_median = statistics.median(cpu for _, cpu, _, _ in results)
    print(f"\n{len(results)} files, {repeats} repeats each: median per file {wall_median:.1f} us wall-clock, "
          f"{cpu_median:.1f} us CPU; the original Perl parser's median is {PERL_MEDIAN_US / 1000:.1f} ms: "
          f"{PERL_MEDIAN_US / wall_median:.1f}x faster (wall), {PERL_MEDIAN_US / cpu_median:.1f}x (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
