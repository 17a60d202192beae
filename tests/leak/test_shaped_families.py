"""A short version of the benchmark's real-shaped families (tests/leak/shaped_families.py; the
benchmark, tests/bench/bench_leak.py, runs 5 seeds of each): one case of each shape the detector
used to get wrong, and a quiet control of each new quiet family."""

import pytest

from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.forecast import forecast, forecast_band
from mysql_snmp.agents.leak.series_detector import LEAKING, SeriesDetector
from tests.leak import families
from tests.leak import shaped_families as shaped
from tests.leak.synthetic import DAY, HOUR


def detector_for(trace):
    series = series_config(trace.series, limit_bytes=trace.limit_bytes)
    return SeriesDetector(trace.series, series, LeakConfig(state_file=None)), series


def first_leaking(trace, until=None, since=0.0):
    detector, _ = detector_for(trace)
    for t, value, aux in trace.rows():
        if until is not None and t > until:
            return None
        if t < since:  # an agent started then
            continue
        change = detector.feed(t, value, aux)
        if change is not None and change[1] == LEAKING:
            return t
    return None


@pytest.mark.parametrize("make, seed, days", [
    # an agent started with mysqld: RSS climbs a logistic curve for 3 days (was leaking at 30 h)
    (shaped.logistic_warmups, 4, 4.0),
    # its acceleration fades as an accelerating leak's does not (agents/leak/young_climb.py)
    (shaped.logistic_warmups, 14, 3.0),
    (shaped.small_cache, 5, 3.0),  # 10 MB: the relative minimum rate is 25 KB/h there
    (shaped.quantised, 3, 3.0),
    (shaped.weekly_cycle, 3, 4.0),
])
def test_quiet_shapes_are_never_leaking(make, seed, days):
    trace = make(seed, days)
    assert first_leaking(trace) is None, trace.notes


@pytest.mark.parametrize("make, seed, within, days", [
    (shaped.small_cache_leak, 2, 24 * HOUR, 5.0),  # 112 KB/h on 22 MB: under the absolute minimum rate
    (shaped.daily_cycle_leak, 4, 24 * HOUR, 6.0),  # 0.7x the cycle's amplitude a day, under a 50 % cycle
    # started just after the quiet hours of the agent's first week: waited for the next ones (27.3 h)
    (shaped.smooth_cycle_leak, 3, 24 * HOUR, 6.0),
    # 0.31 MB/h on a 78 MB dictionary +-19 %: the leak's own rise widened the day-over-day noise
    # its margin was taken from, and it was not leaking in 2.8 days
    (shaped.daily_cycle_leak, 8, 24 * HOUR, 6.0),
    (shaped.accelerating_leak, 5, 1800, 5.0),  # the seed's rate, doubling every 6 h
])
def test_leaks_of_new_shapes_are_caught_in_time(make, seed, within, days):
    trace = make(seed, days)
    t = first_leaking(trace)
    assert t is not None and trace.onset <= t <= trace.onset + within, trace.notes


@pytest.mark.parametrize("seed", [5, 1])  # the seed's rate doubling every 6 h and every 11 h
def test_an_accelerating_leak_from_the_first_sample_is_no_warm_up(seed):
    """Its first day is shaped like a warm-up's first half, and the warm-up rule held it back
    until it reached the limit; then, with the baseline's noise measured around a straight line
    (which took in the climb's curvature), it was caught at 26.0-26.2 h.  Now at 24.3 h, when a
    constant leak at its starting rate is: when day one ends, hours before the limit (32 h and
    50 h)."""
    trace = shaped.accelerating_leak_from_start(seed, 3.0)
    detector, series = detector_for(trace)
    t = fed_until_after_detection(trace, detector, 1)
    assert detector.state == LEAKING
    assert 24 * HOUR <= t - HOUR <= 24.5 * HOUR, trace.notes
    seconds, _ = forecast(detector.reading(), series, {})
    assert seconds <= 1.25 * trace.true_time_to_limit(t)


def fed_until_after_detection(trace, detector, hours: float) -> float:
    """Feed the trace until ``hours`` after the detector went leaking; the time reached."""
    detected = None
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None and change[1] == LEAKING:
            detected = t
        if detected is not None and t >= detected + hours * HOUR:
            break
    return t


def test_a_leak_under_a_daily_cycle_serves_its_own_rate_not_the_cycles():
    # read a day into the leak: detected 13.9 h in, the ramp reads 0.66-0.71x the rate for the
    # next 6 h (docs/leak-detection.md, known gaps: a busier day tilts the day-over-day ramp)
    trace = shaped.daily_cycle_leak(4, 6.0)
    detector, series = detector_for(trace)
    for t, value, aux in trace.rows():
        detector.feed(t, value, aux)
        if t >= trace.onset + DAY:
            break
    assert detector.state == LEAKING
    assert detector.reading().rate_bytes_per_hour == pytest.approx(trace.rate_bytes_per_hour, rel=0.25)


def test_an_accelerating_leak_is_forecast_at_its_recent_rate_inside_the_band():
    trace = shaped.accelerating_leak(5, 5.0)  # doubling every 6 h
    detector, series = detector_for(trace)
    t = fed_until_after_detection(trace, detector, 6)
    seconds, _ = forecast(detector.reading(), series, {})
    lower, upper = forecast_band(detector.reading(), series, {})
    truth = trace.true_time_to_limit(t)
    assert detector.leak_fit.recent  # the whole leak's rate would be 1.5x late here
    assert seconds <= 1.25 * truth
    assert lower <= truth <= upper


# -- weekly cycles (the benchmark: weekly-cycle over 30 days and seeds 1-10, weekly-cycle-leak) --


@pytest.mark.parametrize("seed", [1, 6])
def test_a_busy_monday_in_the_agents_first_week_is_not_a_leak(seed):
    """Both agents start at the end of a quiet weekend: the first weekday sets new highs and
    lifts the daily mean above every day the agent has seen (both went leaking on it)."""
    trace = shaped.weekly_cycle(seed, 9.0)
    assert first_leaking(trace) is None, trace.notes


@pytest.mark.parametrize("seed", [1, 5])
def test_a_leak_under_a_weekly_cycle_is_caught_within_a_day_and_not_before(seed):
    # seed 1 started on a Saturday and went leaking on its first Tuesday, before the leak
    trace = shaped.weekly_cycle_leak(seed, 12.0)
    detector, series = detector_for(trace)
    detected = band = None
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None and change[1] == LEAKING and detected is None:
            detected = t
        if detected is not None and t >= detected + HOUR:
            band = forecast_band(detector.reading(), series, {}), trace.true_time_to_limit(t)
            break
    assert detected is not None and trace.onset <= detected <= trace.onset + 24 * HOUR, trace.notes
    (lower, upper), truth = band
    assert lower <= truth <= (upper if upper is not None else float("inf"))


def test_a_daily_swing_is_told_from_a_wander_and_from_a_climb():
    import math
    import random

    from mysql_snmp.agents.leak.seasonal import swings_daily

    times = [900.0 * i + 450 for i in range(96 + 24)]
    rng = random.Random(3)
    cycle = [1e8 + 5e6 * math.cos(2 * math.pi * t / 86400 + 1) + rng.gauss(0, 2e5) for t in times]
    assert swings_daily(times, cycle)
    wander, x = [], 0.0
    for _ in times:  # a wander correlated over two hours, as large as the cycle
        x = x * math.exp(-900 / 7200) + 5e6 * math.sqrt(1 - math.exp(-1800 / 7200)) * rng.gauss(0, 1)
        wander.append(1e8 + x)
    assert not swings_daily(times, wander)
    climb = [1e8 + 0.5 * t + rng.gauss(0, 2e5) for t in times]  # a leak since the first sample
    assert not swings_daily(times, climb)
    assert not swings_daily(times[:80], cycle[:80])  # less than a day


def test_two_steps_a_day_apart_at_one_hour_are_no_daily_cycle():
    """Two deployment steps a day apart at the same hour repeat like a daily cycle's rise, and
    the second step then lifted the daily mean above the pattern: leaking at 2.9 days in the
    30-day trace of this seed.  A cycle's busy hours end, so its daily profile falls back; a
    step's does not."""
    assert first_leaking(families.steps_up(9, 30.0), until=3.5 * DAY) is None


@pytest.mark.parametrize("seed, since, until", [
    # a 50 MB dictionary cycling +-7 % a day steps up 4.5 MB at 2.09 days: leaking at 2.74
    (2, 0.0, 3.5),
    # 8 GB of RSS cycling +-3 % steps up 672 MB at 9.26 days: leaking at 9.38; once the jump in
    # the day-over-day differences counted for nothing, again at 10.26, when the step was a day
    # old and every difference of the last day stood on it, flat as under a leak older than a day
    (1, 6.0, 10.6),
    # held-out: 300 MB cycling +-3 % with quiet weekends steps up 10 MB, then 15 MB a day and a
    # half later; the Monday after, its daily mean stood above the Friday's before the first step
    (6, 12.0, 16.0),
])
def test_a_deployment_on_a_cycling_server_is_no_leak(seed, since, until):
    """A step up lifts the daily mean above every earlier day's as a leak does, and the
    day-over-day differences (a jump, flat for a day, a jump back) passed for a leak's ramp."""
    trace = shaped.cycle_steps(seed, 30.0)
    assert first_leaking(trace, until=until * DAY, since=since * DAY) is None, trace.notes


def test_a_day_without_a_restart_after_days_each_with_one_is_no_leak():
    """RSS restarting about daily (held-out seed 8 of the restart family): each earlier day held
    a restart and its warm-up, and the first day without one stood above them all, its
    day-over-day differences read 623 MB/h off the drops: leaking at 18.9 days from an agent
    started on day 15.  The comparison with earlier days is not made across a restart."""
    trace = families.restart_warmups(8, 30.0)
    assert first_leaking(trace, until=19.1 * DAY, since=15 * DAY) is None


def test_a_busier_day_than_the_same_weekday_before_is_no_leak():
    """An AHI whose days each run 0.9-1.1x busier (held-out seed 8): a day a fifth busier than
    the same weekday a week before stood above it by the margin from the few days of
    week-over-week differences kept (leaking at 22.4 days from an agent started on day 13.5).
    A busier day lifts itself from its start, scaled by its cycle; a leak rises inside it."""
    trace = families.ahi_daily(8, 23.2)
    assert first_leaking(trace, until=23.2 * DAY, since=13.5 * DAY) is None, trace.notes


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_steps_between_flat_days_are_no_daily_cycle(seed):
    """A dictionary that steps up now and then (schema deployments) has a wide plain noise and a
    narrow day-over-day one, as a cycle has; but its hours do not differ within a day in a way
    that repeats, so it is not judged against a daily pattern (that route gave 10 false leaks in
    5 seeds x 30 days)."""
    from mysql_snmp.agents.leak.seasonal import cycles, daily_pattern

    def patterns(trace):
        """(pattern, plain noise) at the end of each day from the third on."""
        config = LeakConfig(state_file=None)
        history = SeriesDetector(trace.series, series_config(trace.series), config).history
        found = []
        for t, value, _ in trace.rows():
            if t % 300 < 30:  # a sample every five minutes is plenty for 15-minute buckets
                history.add(t, value)
            if t % DAY < 30 and t >= 3 * DAY:
                found.append((daily_pattern(history, t), history.baseline(t, config.longest_window).noise))
        return found

    stepped = patterns(families.steps_up(seed, 30.0))
    # the trap: the steps widen the plain noise while the same hour a day apart moves much less
    assert any(p.noise < 0.5 * noise for p, noise in stepped)
    assert not any(cycles(p, noise) for p, noise in stepped)
    assert all(cycles(p, noise) for p, noise in patterns(families.daily_cycle(seed, 10.0)))
