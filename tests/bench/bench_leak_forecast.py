"""How good can the time-to-limit forecast be an hour after detection?  A seed sweep.

    .venv/bin/python tests/bench/bench_leak_forecast.py                     # rss-leak, 50 seeds
    .venv/bin/python tests/bench/bench_leak_forecast.py seed-leak slow-leak --seeds 20
    .venv/bin/python tests/bench/bench_leak_forecast.py --later              # the served one, 1-24 h on

For each seed of a leak family (tests/leak/families.py, seeds 1..N: the parameters sweep with
the seed), the detector runs until an hour after it said ``leaking``.  There the forecast it
exports is judged against the noiseless truth, and so are other slope estimators on the very
same history (the detector's bins of the last 12 h, in 6-minute points):

- ``exported``: what the agents serve (agents/leak/leak_rate.py: flat then a line over the leak's span);
- ``ols-hinge``: least squares "flat, then a line" over the 12 h, the knee searched;
- ``gls-hinge``: the same by generalised least squares, the noise an AR(1) whose coefficient
  comes from the residuals (Prais-Winsten, one Cochrane-Orcutt step);
- ``true-noise``: GLS given the trace's true correlation time and level before the onset,
  the knee still searched: the best a detector could do that must find the onset;
- ``oracle``: the same given the onset too.  What no detector knows; its misses are the
  part of the error no estimator can remove.

Printed per estimator: misses (|error| > 25 %), median |error|, worst, mean error (a negative
mean: forecasts too short, the rate overestimated).  For the oracle also the standard error of
its slope relative to the true rate, from the noise model: a +-25 % window is that many
standard errors wide.  Synthetic data: proves only what the families model.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mysql_snmp.agents.leak.config import LeakConfig, series_config  # noqa: E402
from mysql_snmp.agents.leak.forecast import forecast  # noqa: E402
from mysql_snmp.agents.leak.series_detector import LEAKING, SeriesDetector  # noqa: E402
from tests.bench.bench_leak import run  # noqa: E402
from tests.leak.families import FAMILIES  # noqa: E402

GOAL = 0.25
ESTIMATORS = ("exported", "ols-hinge", "gls-hinge", "true-noise", "oracle")
LATER_HOURS = (1, 2, 3, 4, 6, 8, 12, 24)


def _whitening(times: list[float], decay_per_second: float | None) -> list[tuple[float, float]]:
    """(weight of the previous point, scale) per point: AR(1) innovations of unit variance
    ratio, exact for uneven spacing; decay None: independent points."""
    rows = [(0.0, 1.0)]
    for a, b in zip(times, times[1:]):
        keep = math.exp(-decay_per_second * (b - a)) if decay_per_second else 0.0
        rows.append((keep, 1.0 / math.sqrt(max(1e-12, 1.0 - keep * keep))))
    return rows


def _whiten(rows: list[tuple[float, float]], column: list[float]) -> list[float]:
    return [column[0]] + [(column[i] - keep * column[i - 1]) * scale for i, (keep, scale) in enumerate(rows) if i]


def _least_squares(columns: list[list[float]], y: list[float]) -> tuple[list[float], float] | None:
    """Coefficients and residual sum of squares for one or two columns."""
    if len(columns) == 1:
        (x,) = columns
        sxx = sum(v * v for v in x)
        if sxx <= 0:
            return None
        b = sum(a * v for a, v in zip(x, y)) / sxx
        return [b], sum((v - b * a) ** 2 for a, v in zip(x, y))
    x0, x1 = columns
    s00, s11 = sum(v * v for v in x0), sum(v * v for v in x1)
    s01 = sum(a * b for a, b in zip(x0, x1))
    det = s00 * s11 - s01 * s01
    if det <= 1e-12 * s00 * s11:
        return None
    r0, r1 = sum(a * v for a, v in zip(x0, y)), sum(a * v for a, v in zip(x1, y))
    b0, b1 = (r0 * s11 - r1 * s01) / det, (r1 * s00 - r0 * s01) / det
    return [b0, b1], sum((v - b0 * a - b1 * b) ** 2 for a, b, v in zip(x0, x1, y))


def hinge(times: list[float], values: list[float], decay: float | None = None, level: float | None = None,
          knees: range | list[int] | None = None) -> tuple[float, int, float, float] | None:
    """Best fit of level + slope * max(0, t - knee): (slope, knee index, fitted level, residual
    variance of the whitened points).  ``level`` given: not fitted."""
    rows = _whitening(times, decay)
    ones = _whiten(rows, [1.0] * len(times))
    y = _whiten(rows, [v - (level or 0.0) for v in values])
    best = None
    for k in knees if knees is not None else range(len(times) - 3):
        x = _whiten(rows, [max(0.0, t - times[k]) for t in times])
        fit = _least_squares([x] if level is not None else [ones, x], y)
        if fit is not None and (best is None or fit[1] < best[1]):
            best = (fit[0], fit[1], k, x)
    if best is None:
        return None
    coefs, sse, k, _ = best
    return coefs[-1], k, level if level is not None else coefs[0], sse / max(1, len(times) - len(coefs))


def _lag1(values: list[float]) -> float:
    mean = sum(values) / len(values)
    centred = [v - mean for v in values]
    denominator = sum(c * c for c in centred)
    return sum(a * b for a, b in zip(centred, centred[1:])) / denominator if denominator else 0.0


def estimates(detector, trace, t: float) -> dict[str, float | None]:
    """Each peer's rate (bytes per hour) on the detector's history at t, and the oracle's
    relative standard error."""
    config, history = detector.config, detector.history
    points = history.window(t, 2 * config.longest_window, 4 * config.window_points)
    times, values = points.times, points.values
    out: dict[str, float | None] = {}
    ols = hinge(times, values)
    if ols is None:
        return out
    slope, knee, level, _ = ols
    out["ols-hinge"] = slope * 3600
    residuals = [v - level - slope * max(0.0, x - times[knee]) for x, v in zip(times, values)]
    spacing = statistics.median(b - a for a, b in zip(times, times[1:]))
    rho = min(0.999, max(1e-3, _lag1(residuals)))
    gls = hinge(times, values, -math.log(rho) / spacing)
    out["gls-hinge"] = gls[0] * 3600 if gls else None
    tau = trace.extra.get("tau")
    if tau:
        before = trace.extra["level_at"](trace.onset)
        true_noise = hinge(times, values, 1.0 / tau, level=before)
        out["true-noise"] = true_noise[0] * 3600 if true_noise else None
        onset = min(range(len(times)), key=lambda i: abs(times[i] - trace.onset))
        oracle = hinge(times, values, 1.0 / tau, level=before, knees=[onset])
        if oracle:
            out["oracle"] = oracle[0] * 3600
            x = _whiten(_whitening(times, 1.0 / tau), [max(0.0, v - times[onset]) for v in times])
            out["oracle-se"] = math.sqrt(oracle[3] / sum(v * v for v in x)) * 3600 / trace.rate_bytes_per_hour
    return out


def run_seed(args: tuple[str, int, bool]) -> dict:
    name, seed, verbose = args
    family = next(f for f in FAMILIES if f.name == name)
    trace = family.make(seed, family.days)
    found: dict = {}

    def at_forecast(detector, t):
        found.update(estimates(detector, trace, t), t=t, level=detector.reading().level)

    result = run(trace, at_forecast)
    errors = {"exported": result["forecast_error"]}
    if found:
        truth = trace.true_time_to_limit(found["t"])
        room = trace.limit_bytes - found["level"]
        for key in ESTIMATORS[1:]:
            rate = found.get(key)
            errors[key] = (room / (rate / 3600) - truth) / truth if rate and rate > 0 else float("inf")
        errors["oracle-se"] = found.get("oracle-se")
    errors["delay"] = result["delay"]
    if verbose:  # as each trace ends
        print(f"    {trace.name:16} {trace.notes:28}" + "".join(
            f" {key} {errors[key]:+.2f}" for key in ESTIMATORS if errors.get(key) is not None), flush=True)
    return errors


def served_later(args: tuple[str, int, bool]) -> dict[int, float]:
    """The served forecast's relative error at each of LATER_HOURS after detection."""
    name, seed, verbose = args
    family = next(f for f in FAMILIES if f.name == name)
    trace = family.make(seed, family.days)
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    detected, errors = None, {}
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if detected is None and change is not None and change[1] == LEAKING and t >= trace.onset:
            detected = t
        for hours in LATER_HOURS:
            if detected is not None and hours not in errors and t >= detected + hours * 3600:
                seconds, _ = forecast(detector.reading(), series, {})
                truth = trace.true_time_to_limit(t)
                errors[hours] = float("inf") if seconds is None else (seconds - truth) / truth
    if verbose:
        print(f"    {trace.name:16}" + "".join(f" +{h} h {e:+.2f}" for h, e in errors.items()), flush=True)
    return errors


def summarise_later(name: str, rows: list[dict[int, float]]) -> None:
    print(f"{name}: {len(rows)} seeds, the served forecast after detection")
    print(f"  {'after':>6} {'misses':>12} {'median |e|':>10} {'worst':>7}")
    for hours in LATER_HOURS:
        errors = [r[hours] for r in rows if hours in r]
        if errors:
            misses = sum(abs(e) > GOAL for e in errors)
            print(f"  {hours:>4} h {misses:>3} of {len(errors):<3} {misses / len(errors):4.0%} "
                  f"{statistics.median(abs(e) for e in errors):10.3f} {max(errors, key=abs):+7.2f}")


def summarise(name: str, rows: list[dict]) -> None:
    print(f"{name}: {len(rows)} seeds, detected {sum(r['delay'] is not None for r in rows)}")
    print(f"  {'estimator':14} {'misses':>12} {'median |e|':>10} {'worst':>7} {'mean':>7}")
    for key in ESTIMATORS:
        errors = [r[key] for r in rows if r.get(key) is not None]
        if not errors:
            continue
        misses = sum(abs(e) > GOAL for e in errors)
        print(f"  {key:14} {misses:>3} of {len(errors):<3} {misses / len(errors):4.0%} "
              f"{statistics.median(abs(e) for e in errors):10.3f} {max(errors, key=abs):+7.2f} "
              f"{statistics.mean(e for e in errors if math.isfinite(e)):+7.3f}")
    se = [r["oracle-se"] for r in rows if r.get("oracle-se")]
    if se:
        print(f"  oracle slope standard error / true rate: median {statistics.median(se):.1%}, "
              f"max {max(se):.1%} (a +-25 % window is {GOAL / statistics.median(se):.1f} standard errors wide)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*", default=["rss-leak"], help="leak families with a limit")
    parser.add_argument("--seeds", type=int, default=50, help="seeds 1..N per family (default 50)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--verbose", action="store_true", help="each seed's errors too, as it ends")
    parser.add_argument("--later", action="store_true",
                        help=f"only the served forecast, {', '.join(map(str, LATER_HOURS))} h after detection")
    args = parser.parse_args(argv)
    cases = [(name, seed, args.verbose) for name in args.families for seed in range(1, args.seeds + 1)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(served_later if args.later else run_seed, cases))
    for name in args.families:
        (summarise_later if args.later else summarise)(name, [r for (n, *_), r in zip(cases, results) if n == name])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
