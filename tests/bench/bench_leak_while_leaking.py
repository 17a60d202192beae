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

    .venv/bin/python tests/bench/bench_leak_while_leaking.py seed-leak --seeds 20 --stop-after 10

With ``--stop-after H`` the leak stops H hours after its onset and the level stays where it got to
(the family's noise goes on): per seed, how long after the stop ``leaking`` ended, and whether it
came back (a stopped leak that is ``leaking`` again is a false alarm).
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


def cleared_after_stop(name: str, seed: int, hours: float) -> dict:
    """When ``leaking`` ends after the leak stops ``hours`` after its onset (see the docstring)."""
    family = next(f for f in FAMILIES if f.name == name)
    trace = family.make(seed, family.days)
    level_at = trace.extra["level_at"]
    stop = trace.onset + hours * 3600.0
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    leaking_at_stop, cleared, back = False, None, 0
    for t, value, aux in trace.rows():
        if t >= stop:
            value += level_at(stop) - level_at(t)
        change = detector.feed(t, value, aux)
        if t < stop:
            leaking_at_stop = detector.state == LEAKING
        elif change is not None and change[1] == LEAKING:
            back += 1
        elif change is not None and change[0] == LEAKING and cleared is None:
            cleared = t - stop
    return {"family": name, "seed": seed, "leaking_at_stop": leaking_at_stop, "cleared": cleared, "back": back,
            "left": trace.times[-1] - stop}


def _case(args: tuple) -> dict:
    if len(args) == 3:
        return cleared_after_stop(*args)
    return served_while_leaking(*args)


def report_stops(results: list[dict], families: list[str], hours: float) -> None:
    print(f"{'family':16} {'seed':>4} {'leaking at stop':>15} {'cleared after min':>17} {'leaking again':>13} "
          f"{'trace left h':>12}")
    for r in results:
        cleared = "never" if r["cleared"] is None else f"{r['cleared'] / 60:.0f}"
        print(f"{r['family']:16} {r['seed']:>4} {str(r['leaking_at_stop']):>15} {cleared:>17} {r['back']:>13} "
              f"{r['left'] / 3600:>12.1f}")
    for name in families:
        mine = [r for r in results if r["family"] == name and r["leaking_at_stop"]]
        delays = sorted(r["cleared"] / 60 for r in mine if r["cleared"] is not None)
        never = sum(r["cleared"] is None for r in mine)
        median = delays[len(delays) // 2] if delays else None
        print(f"{name}: stopped {hours:g} h after onset; {len(mine)} seeds leaking at the stop; cleared in "
              f"{len(delays)} (median {median if median is None else round(median)} min, worst "
              f"{round(delays[-1]) if delays else '-'} min), not by the trace's end: {never}; "
              f"leaking again after the stop: {sum(r['back'] for r in mine)}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*", default=["rss-leak"], help="leak families")
    parser.add_argument("--seeds", type=int, default=50, help="seeds 1..N per family (default 50)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--stop-after", type=float, metavar="H",
                        help="stop the leak H hours after its onset and report when leaking ends")
    args = parser.parse_args(argv)
    stop = () if args.stop_after is None else (args.stop_after,)
    cases = [(name, seed, *stop) for name in args.families for seed in range(1, args.seeds + 1)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_case, cases))
    if stop:
        report_stops(results, args.families, args.stop_after)
        return 0
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
