"""Memory the leak detector holds per watched series, as its history fills to its bound.

    .venv/bin/python tests/bench/bench_leak_memory.py              # 9 days, two families
    .venv/bin/python tests/bench/bench_leak_memory.py --days 3

The history is bounded by design (one-minute bins for the longest trend window, 12 h by
default; 15-minute buckets for the baseline, a week), so an agent's RSS rises for its first
week and then stays flat.  An hour's soak cannot show that, so this feeds one series' detector
simulated days at once and prints what tracemalloc counts it holding (the detector, its history,
its memoised fits) after each day: the growth must stop once a week of buckets is kept.
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mysql_snmp.agents.leak.config import LeakConfig, series_config  # noqa: E402
from mysql_snmp.agents.leak.series_detector import SeriesDetector  # noqa: E402
from tests.leak import families  # noqa: E402

DAY = 86400.0


def held_by_day(trace) -> list[tuple[float, float]]:
    """(day, KB held) at the end of each simulated day."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    detector = SeriesDetector(trace.series, series_config(trace.series), LeakConfig(state_file=None))
    start = trace.times[0]
    next_day = start + DAY
    held = []
    for t, value, aux in trace.rows():
        if t >= next_day:
            held.append(((next_day - start) / DAY, (tracemalloc.get_traced_memory()[0] - before) / 1024))
            next_day += DAY
        detector.feed(t, value, aux)
    tracemalloc.stop()
    del detector
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=float, default=9.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for make in (families.steady_mean_reverting, families.restart_warmups):
        trace = make(args.seed, args.days)
        rows = held_by_day(trace)
        print(f"{make.__name__} (seed {args.seed}): KB held per series at the end of each day")
        print("  " + "  ".join(f"d{day:.0f}={kb:,.0f}" for day, kb in rows))
        if len(rows) >= 9:
            print(f"  growth over days 8-9 (the history is full after 7): {rows[8][1] - rows[7][1]:+,.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
