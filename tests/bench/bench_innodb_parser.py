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

from parsers.innodb import parse_innodb_status  # noqa: E402

SHARED = ROOT / ".." / "shared" / "fixtures"
PERL_MEDIAN_US = 1300.0


def corpus() -> list[Path]:
    return sorted((SHARED / "innodb").glob("*/*.txt")) + sorted(
        (SHARED / "live" / "mariadb-10.11").glob("show-engine-innodb-status-*.txt"))


def median_us(text: str, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        parse_innodb_status(text)
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


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
        results.append((median_us(text, repeats if len(text) < 200_000 else max(5, repeats // 20)), path.name, len(text)))
    for us, name, size in results:
        print(f"{us:10.1f} us  {size:8d} B  {name}")
    overall = statistics.median(us for us, _, _ in results)
    print(f"\n{len(results)} files, {repeats} repeats each: median {overall:.1f} us per file "
          f"({overall / 1000:.3f} ms); original Perl parser 1.3 ms median: {PERL_MEDIAN_US / overall:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
