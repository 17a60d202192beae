"""What the detector serves while it says ``leaking``: a seed sweep over leak families.

    .venv/bin/python tests/bench/bench_leak_while_leaking.py                 # rss-leak, 50 seeds
    .venv/bin/python tests/bench/bench_leak_while_leaking.py seed-leak --seeds 5

Each trace of a leak family (tests/leak/families.py) runs to its end.  Per seed, over the
evaluations (one per completed bin) after the leak was first detected and while the state is
``leaking``: how many served no time to the limit, how many served a growth rate that was not
positive (a leaking series does not shrink), and how many times the state left ``leaking`` and
came back within an hour (each such flap is two notifications to an operator).  Also the
detection delay, and the evaluations spent out of ``leaking`` after detection (the leak never
stops in these traces, so any is a defect).  Synthetic data: proves only what the families model.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mysql_snmp.agents.leak.config import LeakConfig, series_config  # noqa: E402
from mysql_snmp.agents.leak.forecast import forecast  # noqa: E402
from mysql_snmp.agents.leak.series_detector import LEAKING, SeriesDetector  # noqa: E402
from tests.leak.families import FAMILIES  # noqa: E402

FLAP_SECONDS = 3600.0


def served_while_leaking(name: str, seed: int) -> dict:
    """Counts for one trace (see the module docstring)."""
    family = next(f for f in FAMILIES if f.name == name)
    trace = family.make(seed, family.days)
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    detected = left = None
    counts = {"leaking": 0, "no_forecast": 0, "not_positive": 0, "flaps": 0, "out": 0, "worst_rate": None}
    evaluated = None
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None and trace.onset is not None and t >= trace.onset:
            old, new = change
            if new == LEAKING:
                if detected is None:
                    detected = t
                elif left is not None and t - left <= FLAP_SECONDS:
                    counts["flaps"] += 1
            elif old == LEAKING:
                left = t
        if detected is None or detector.last is None or detector.last.time == evaluated:
            continue
        evaluated = detector.last.time
        if detector.state != LEAKING:
            counts["out"] += 1
            continue
        reading = detector.reading()
        counts["leaking"] += 1
        seconds, _ = forecast(reading, series, {})
        counts["no_forecast"] += seconds is None
        rate = reading.rate_bytes_per_hour
        counts["not_positive"] += rate is None or rate <= 0
        if rate is not None and (counts["worst_rate"] is None or rate < counts["worst_rate"]):
            counts["worst_rate"] = rate
    counts["delay"] = None if detected is None else detected - trace.onset
    return {"family": name, "seed": seed, **counts}


def _case(args: tuple[str, int]) -> dict:
    return served_while_leaking(*args)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*", default=["rss-leak"], help="leak families")
    parser.add_argument("--seeds", type=int, default=50, help="seeds 1..N per family (default 50)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    cases = [(name, seed) for name in args.families for seed in range(1, args.seeds + 1)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_case, cases))
    print(f"{'family':16} {'seed':>4} {'delay min':>9} {'leaking':>7} {'no fcst':>7} {'rate<=0':>7} "
          f"{'flaps<1h':>8} {'out':>5} {'lowest MB/h':>11}")
    for r in results:
        delay = "-" if r["delay"] is None else f"{r['delay'] / 60:.0f}"
        worst = "-" if r["worst_rate"] is None else f"{r['worst_rate'] / 1e6:.1f}"
        print(f"{r['family']:16} {r['seed']:>4} {delay:>9} {r['leaking']:>7} {r['no_forecast']:>7} "
              f"{r['not_positive']:>7} {r['flaps']:>8} {r['out']:>5} {worst:>11}")
    for name in args.families:
        mine = [r for r in results if r["family"] == name]
        total = {k: sum(r[k] for r in mine) for k in ("leaking", "no_forecast", "not_positive", "flaps", "out")}
        affected = sum(r["no_forecast"] + r["not_positive"] + r["flaps"] + r["out"] > 0 for r in mine)
        print(f"{name}: {len(mine)} seeds, {affected} with a defect; evaluations leaking {total['leaking']}, "
              f"no forecast {total['no_forecast']}, rate <= 0 {total['not_positive']}, "
              f"flaps within 1 h {total['flaps']}, out of leaking after detection {total['out']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
