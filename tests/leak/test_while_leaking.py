"""What a series detector serves while it says ``leaking``, and when it stops saying so.

Under wandering noise (the RSS family: 8 GB mean-reverting +-50 MB, +30 MB/h) every trend
window's significance dips now and then while the leak goes on.  Then the detector must go on
serving a positive growth rate and a time to the limit, and stay ``leaking`` (each flap is two
notifications).  A leak that really ends must still end ``leaking``: at once when the level falls
back (a restart), within hours when it goes flat, and not come back while the trend windows
still hold its old growth.  Synthetic data (tests/leak/families.py).
"""

import json

import pytest

from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.forecast import forecast
from mysql_snmp.agents.leak.series_detector import LEAKING, OK, SUSPECT, SeriesDetector
from tests.leak import families, synthetic

HOUR = 3600.0


def detector_for(trace):
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    return SeriesDetector(trace.series, series, LeakConfig(state_file=None)), series


def ended(trace, after: float, change) -> tuple[list[float], float]:
    """The trace's values with the leak ended ``after`` seconds past its onset: ``change(t, value,
    leak_level)`` gives each later value from the noisy one and the noiseless level at the end."""
    end = trace.onset + after
    level_at = trace.extra["level_at"]
    values = [v if t < end else change(t, v - level_at(t) + level_at(end), level_at(end))
              for t, v in zip(trace.times, trace.values)]
    return values, end


# seed 37: the seed engineer A found flapping with a -74 MB/h rate; 3 and 5 cover the swept
# correlation times (30 min to 2 h); 9, 21 and 8 left leaking 17-21 h after their detection, for
# up to a day, while leaking still ended when the 6-hour rate dipped below RSS's minimum rate
@pytest.mark.parametrize("seed", [37, 3, 5, 9, 21, 8])
def test_a_wandering_leak_stays_leaking_with_a_positive_rate_and_a_forecast(seed):
    trace = families.rss_leak(seed, 4.0)
    detector, series = detector_for(trace)
    changes, evaluated, served = [], None, []
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None:
            changes.append((t, change))
        if detector.state == LEAKING and detector.last.time != evaluated:
            evaluated = detector.last.time
            reading = detector.reading()
            seconds, _ = forecast(reading, series, {})
            served.append((t, reading.rate_bytes_per_hour, seconds, bool(detector.leak_fit and detector.leak_fit.recent)))
    after_onset = [(t, new) for t, (_, new) in changes if t >= trace.onset]
    assert after_onset and after_onset[0][1] != OK, trace.notes
    detected = next(t for t, new in after_onset if new == LEAKING)
    # detected once, then never out of leaking to the end of the trace (two days later)
    assert [new for t, new in after_onset if t >= detected] == [LEAKING]
    assert trace.times[-1] - detected > 24 * HOUR
    assert len(served) > 24 * 60
    assert all(rate is not None and rate > 0 for _, rate, _, _ in served)
    assert all(seconds is not None for _, _, seconds, _ in served)
    # the rate served is the leak's, not a short window's swing with the wander (those
    # reached -74 and +150 MB/h): from an hour after detection on, within a factor 3 of the
    # true 30 MB/h (measured now 0.72-1.84x; the longest window's, served before, 15-49 MB/h)
    later = [rate for t, rate, _, _ in served if t >= detected + HOUR]
    assert trace.rate_bytes_per_hour / 3 < min(later) and max(later) < 3 * trace.rate_bytes_per_hour
    # and it steadies as the leak lasts (agents/leak/leak_rate.py): from 12 h after detection on,
    # the fit spans the whole leak, within 20 % of the true rate (measured 0.91-1.13x on these seeds)
    # -- except while the last 2 hours rise significantly faster than the whole leak: then their
    # rate is served (an earlier forecast, the safe side; an accelerating leak needs it), which
    # the wander causes now and then
    settled = [(rate / trace.rate_bytes_per_hour, recent) for t, rate, _, recent in served
               if t >= detected + 12 * HOUR]
    whole = [share for share, recent in settled if not recent]
    assert whole and 0.8 < min(whole) and max(whole) < 1.2
    assert all(share >= min(whole) for share, recent in settled if recent)
    assert sum(recent for _, recent in settled) <= MAX_RECENT_SHARE * len(settled), seed


# The share of evaluations from 12 h after detection on that may serve a recent window's rate
# under this wander (measured 5-9 % on these seeds)
MAX_RECENT_SHARE = 0.15


def run_until(detector, times, values, aux, until):
    changes = []
    for i, t in enumerate(times):
        if t > until:
            break
        change = detector.feed(t, values[i], aux[i] if aux is not None else None)
        if change is not None:
            changes.append((t, change[1]))
    return changes


@pytest.mark.parametrize("make, seed", [(families.seed_leak, 1), (families.rss_leak, 37)])
def test_a_restart_ends_leaking_at_once(make, seed):
    trace = make(seed, 4.0)
    # the server restarts 10 h into the leak: the caches are emptied to a third
    values, end = ended(trace, 10 * HOUR, lambda t, value, level: value - 2 * level / 3)
    detector, _ = detector_for(trace)
    changes = run_until(detector, trace.times, values, trace.aux, end + 6 * HOUR)
    assert (LEAKING in [new for t, new in changes if t < end]), trace.notes
    after = [(t, new) for t, new in changes if t >= end]
    assert after and after[0][1] == OK and after[0][0] - end <= 300
    assert LEAKING not in [new for _, new in after]


# (family, seed, hours from the onset to the stop, bound): the seed's leak at 15 s and 30 s
# sampling and the 400 KB/h leak end within about 2 h of a flat stop (measured on seeds 1-6:
# 35-92 and 84-124 min; before the end was judged against the leak's rate, 158-209 and 179-185).
# Under RSS's wander (up to 2 h correlation) only the 6- and 12-hour spans are long enough to
# show it (measured on seeds 1-6: 260-515 min, seed 3 288 min; before, 173-231).
@pytest.mark.parametrize("make, seed, stop, bound", [
    (families.seed_leak, 1, 4, 2 * HOUR), (families.seed_leak, 2, 4, 2 * HOUR),
    (families.slow_leak, 3, 10, 2 * HOUR), (families.rss_leak, 3, 10, 8 * HOUR),
])
def test_a_leak_that_stops_growing_ends_leaking_within_a_bound_and_stays_ended(make, seed, stop, bound):
    trace = make(seed, 4.0)
    # the leak stops and the level stays where it got to (the noise goes on)
    values, end = ended(trace, stop * HOUR, lambda t, value, level: value)
    detector, _ = detector_for(trace)
    changes = run_until(detector, trace.times, values, trace.aux, trace.times[-1])
    assert LEAKING in [new for t, new in changes if t < end], trace.notes
    after = [(t, new) for t, new in changes if t >= end]
    assert after and after[0][1] == OK and after[0][0] - end <= bound, (after[:3], trace.notes)
    # the windows still hold the old growth for hours: it is neither suspect nor leaking again
    assert [new for _, new in after] == [OK], trace.notes
    assert trace.times[-1] - end > bound + 6 * HOUR


def test_an_agent_restarted_while_leaking_judges_the_end_as_if_it_had_run_on():
    """The rate the leak was confirmed at, its peak and the stop already seen are in the state
    file: a detector loaded from it mid-leak ends leaking when the one that ran on does."""
    short_day_one = LeakConfig(state_file=None, mature_baseline_seconds=3 * HOUR)
    trace = synthetic.dictionary_leak(days=0.6, onset=4 * HOUR)
    values, end = ended(trace, 2 * HOUR, lambda t, value, level: value)
    series = series_config(trace.series)
    ran_on = SeriesDetector(trace.series, series, short_day_one)
    expected = run_until(ran_on, trace.times, values, trace.aux, trace.times[-1])
    assert [new for _, new in expected] == [SUSPECT, LEAKING, OK], trace.notes
    assert end < expected[-1][0] <= end + 2 * HOUR

    saved_at = end + 20 * 60
    first = SeriesDetector(trace.series, series, short_day_one)
    before = run_until(first, trace.times, values, trace.aux, saved_at)
    assert first.state == LEAKING and first.leak_rate is not None
    restored = SeriesDetector(trace.series, series, short_day_one)
    restored.load_dict(json.loads(json.dumps(first.to_dict())))
    assert (restored.leak_rate, restored.leak_rate_window, restored.peak, restored.stopped_evaluations) == (
        first.leak_rate, first.leak_rate_window, first.peak, first.stopped_evaluations)
    later = [i for i, t in enumerate(trace.times) if t > saved_at]
    after = run_until(restored, trace.times[later[0]:], values[later[0]:], trace.aux[later[0]:], trace.times[-1])
    assert before + after == expected
