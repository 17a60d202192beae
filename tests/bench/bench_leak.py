"""Leak detector benchmark on labelled synthetic traces (15 s sampling).

    .venv/bin/python tests/bench/bench_leak.py            # every trace (several minutes)
    .venv/bin/python tests/bench/bench_leak.py seed-leak  # some traces

Per trace: delay from leak onset to ``leaking``, the reason given, the forecast error
(time to the trace's limit, against the noiseless truth) at detection and one hour
later, and the false ``leaking`` entries (and ``suspect`` entries) per simulated day.
Goals: the seed's rate reaches leaking within 30 min of onset; no false leaking in
30 days of any non-leak trace; the forecast within 25% on a linear leak.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agents.leak import synthetic  # noqa: E402
from agents.leak.config import LeakConfig, series_config  # noqa: E402
from agents.leak.forecast import forecast  # noqa: E402
from agents.leak.series_detector import LEAKING, SUSPECT, SeriesDetector  # noqa: E402


def run(trace: synthetic.Trace) -> dict:
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    started = time.process_time()
    detected_at = reason = None
    leaking_entries = suspect_entries = 0
    forecast_errors: dict[str, float] = {}
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None:
            new = change[1]
            leaking_entries += new == LEAKING
            suspect_entries += new == SUSPECT
            if new == LEAKING and detected_at is None and trace.leaks and t >= trace.onset:
                detected_at, reason = t, detector.reading().reason
        if detected_at is not None and trace.limit_bytes is not None:
            for label, at in (("at detection", detected_at), ("+1 h", detected_at + 3600)):
                if label not in forecast_errors and t >= at:
                    seconds, _ = forecast(detector.reading(), series, {})
                    truth = trace.true_time_to_limit(t)
                    if seconds is not None and truth:
                        forecast_errors[label] = (seconds - truth) / truth
    return {
        "trace": trace,
        "cpu": time.process_time() - started,
        "delay": None if detected_at is None else detected_at - trace.onset,
        "reason": reason,
        "leaking_entries": leaking_entries,
        "suspect_entries": suspect_entries,
        "forecast_errors": forecast_errors,
    }


def main(names: list[str]) -> int:
    selected = {**synthetic.LEAK_TRACES, **synthetic.NON_LEAK_TRACES}
    if names:
        selected = {n: selected[n] for n in names}
    failures = 0
    print(f"{'trace':26} {'days':>5} {'result':52} {'cpu s':>6}")
    for name, make in selected.items():
        result = run(make())
        trace = result["trace"]
        if trace.leaks:
            delay = result["delay"]
            ok = delay is not None and result["reason"] == trace.expected_reason
            if name.startswith("seed-leak"):  # the seed's rate: leaking within 30 min of onset
                ok = ok and delay <= 1800
            errors = ", ".join(f"{k} {v:+.0%}" for k, v in result["forecast_errors"].items())
            text = ("never leaking" if delay is None else f"leaking after {delay / 60:.1f} min, {result['reason']}")
            if errors:
                text += f"; forecast {errors}"
                ok = ok and abs(result["forecast_errors"].get("+1 h", 1.0)) <= 0.25
        else:
            per_day = result["leaking_entries"] / trace.days
            ok = result["leaking_entries"] == 0
            text = (f"false leaking {per_day:.3f}/day ({result['leaking_entries']}), "
                    f"suspect {result['suspect_entries'] / trace.days:.2f}/day")
        failures += not ok
        print(f"{name:26} {trace.days:5.1f} {text:52} {result['cpu']:6.1f} {'' if ok else 'MISSED GOAL'}")
        sys.stdout.flush()
    print(f"{failures} trace(s) missed a goal")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
