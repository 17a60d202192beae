"""A short version of the benchmark's table (tests/bench/bench_leak.py): a few seeds of each
family over a few days, first day included.  The benchmark runs 5 seeds x 30 days."""

import pytest

from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.forecast import forecast, forecast_band
from mysql_snmp.agents.leak.series_detector import LEAKING, SeriesDetector
from tests.leak import families

QUIET_DAYS = 3.0


def replay(trace):
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    leaking = []
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None and change[1] == LEAKING:
            leaking.append((t, detector.reading().reason))
    return detector, series, leaking


QUIET = [(f.make, seed) for f in families.FAMILIES if not f.leaks for seed in (1, 4)]


@pytest.mark.parametrize("make, seed", QUIET, ids=[f"{m.__name__}-{s}" for m, s in QUIET])
def test_quiet_families_are_never_leaking(make, seed):
    trace = make(seed, QUIET_DAYS)
    assert not trace.leaks
    _, _, leaking = replay(trace)
    assert leaking == [], trace.notes


def test_the_first_day_of_a_daily_cycle_is_at_most_suspect():
    trace = families.ahi_daily(2, 1.0)  # 98 % of the AHI gone at night: a leak-like first rise
    detector, _, leaking = replay(trace)
    assert leaking == []
    assert max(trace.values) > 10 * min(trace.values)


@pytest.mark.parametrize("make, seed, within", [
    (families.seed_leak, 1, 1800), (families.seed_leak, 2, 1800),
    # still refilling after the restart when the leak starts (13-17 % of the climb left):
    # caught by the growth the warm-up curve does not predict, long before the old high
    (families.seed_leak_after_restart, 1, 1800), (families.seed_leak_after_restart, 4, 1800),
    (families.table_growth, 3, 7200),
])
def test_leaks_are_caught_in_time_with_their_reason(make, seed, within):
    trace = make(seed, 3.0)
    _, _, leaking = replay(trace)
    assert leaking, trace.notes
    t, reason = leaking[0]
    assert trace.onset <= t <= trace.onset + within
    assert reason == trace.expected_reason


@pytest.mark.parametrize("make, seed, days, within", [
    (families.seed_leak, 3, 4.0, 0.25),
    (families.seed_leak, 5, 4.0, 0.25),  # detected in the 2 h window, still holding 48 min before onset
    # RSS: 30 MB/h under a +-25 MB wander correlated over up to 2 h.  An hour after detection the
    # onset is known to about an hour, and no estimator is within 25 % on every seed
    # (tests/bench/bench_leak_forecast.py); a 2-hour window rising faster than the whole leak is
    # served (an early forecast rather than a late one), so the point may be far early: the band
    # holds the true time, and the point is never more than 1.25x late.
    (families.rss_leak, 4, 4.0, None),
    (families.rss_leak, 1, 4.0, None),
])
def test_forecast_an_hour_after_detection(make, seed, days, within):
    trace = make(seed, days)
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    detector = SeriesDetector(trace.series, series, LeakConfig(state_file=None))
    detected = None
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None and change[1] == LEAKING and detected is None:
            detected = t
        if detected is not None and t >= detected + 3600:
            seconds, _ = forecast(detector.reading(), series, {})
            lower, upper = forecast_band(detector.reading(), series, {})
            truth = trace.true_time_to_limit(t)
            assert lower <= truth <= (upper if upper is not None else float("inf"))
            if within is None:
                assert seconds <= 1.25 * truth
            else:
                assert seconds == pytest.approx(truth, rel=within)
            return
    pytest.fail("never leaking")


def test_no_leak_is_confirmed_on_day_one_even_beyond_a_warm_up():
    trace = families.seed_leak_after_restart(4, 1.5)  # installed, restarted 12 h later, leaking 2 h after that
    series = series_config(trace.series)

    def first_leaking(config):
        detector = SeriesDetector(trace.series, series, config)
        for t, value, aux in trace.rows():
            change = detector.feed(t, value, aux)
            if change is not None and change[1] == LEAKING:
                return t
        return None

    assert first_leaking(LeakConfig(state_file=None)) is None
    # the same trace with 6 h counting as enough history: the growth beyond the warm-up is caught
    early = first_leaking(LeakConfig(state_file=None, mature_baseline_seconds=6 * 3600.0))
    assert early is not None and trace.onset < early <= trace.onset + 1800
