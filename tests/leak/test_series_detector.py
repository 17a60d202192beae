"""Qualitative behaviour of one series' detector on short synthetic traces."""

from tests.leak import families, synthetic
from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.series_detector import LEAKING, OK, STATE_NAMES, SUSPECT, SeriesDetector

HOUR = synthetic.HOUR
DAY = synthetic.DAY


# Tests of what happens after the first day shorten it to 3 h, so their traces stay short.
SHORT_DAY_ONE = LeakConfig(state_file=None, mature_baseline_seconds=3 * HOUR)


def run(trace, config=LeakConfig(state_file=None), **series_overrides):
    detector = SeriesDetector(trace.series, series_config(trace.series, **series_overrides), config)
    changes = []
    for t, value, aux in trace.rows():
        change = detector.feed(t, value, aux)
        if change is not None:
            reading = detector.reading()
            changes.append((t, STATE_NAMES[change[1]], reading.reason, reading.rate_bytes_per_hour))
    return detector, changes


def first(changes, state):
    return next((c for c in changes if c[1] == state), None)


def test_seed_leak_is_leaking_unexplained_within_30_minutes():
    trace = synthetic.dictionary_leak(days=0.3, onset=4 * HOUR)
    detector, changes = run(trace, SHORT_DAY_ONE)
    leaking = first(changes, "leaking")
    assert leaking is not None, changes
    t, _, reason, rate = leaking
    assert trace.onset < t <= trace.onset + 30 * 60
    assert reason == "unexplained"
    # the rate at detection is in the right range (the window still holds some flat past)
    assert 0.5 * trace.rate_bytes_per_hour < rate < 1.5 * trace.rate_bytes_per_hour
    assert detector.state == LEAKING
    # an hour into the leak the Theil-Sen rate is within 10% of the truth
    assert abs(detector.reading().rate_bytes_per_hour / trace.rate_bytes_per_hour - 1) < 0.10


def test_table_growth_is_leaking_for_reason_tables_and_clears_when_it_stops():
    trace = synthetic.table_growth(days=0.6, onset=4 * HOUR, hours=3)
    detector, changes = run(trace, SHORT_DAY_ONE)
    leaking = first(changes, "leaking")
    assert leaking is not None and leaking[2] == "tables", changes
    assert changes[-1][1] == "ok" and changes[-1][0] > trace.onset + 3 * HOUR
    assert detector.state == OK


def test_no_leak_without_the_explanatory_series_is_unexplained():
    trace = synthetic.table_growth(days=0.4, onset=4 * HOUR, hours=3)
    trace.aux = None
    _, changes = run(trace, SHORT_DAY_ONE)
    assert first(changes, "leaking")[2] == "unexplained"


def test_steady_server_is_never_leaking():
    _, changes = run(synthetic.steady_dictionary(days=1.0))
    assert first(changes, "leaking") is None


def test_adaptive_hash_warmup_after_restarts_is_never_leaking():
    # first fill from an empty history, then a restart at 12 h and a second fill
    _, changes = run(synthetic.ahi_warmup(days=1.5, restart_every_days=0.5))
    assert first(changes, "leaking") is None


def test_one_off_steps_are_never_leaking():
    _, changes = run(synthetic.one_off_steps(days=2.0))
    assert first(changes, "leaking") is None


def test_table_churn_inside_the_cache_is_never_leaking():
    _, changes = run(synthetic.table_churn(days=1.0))
    assert first(changes, "leaking") is None


def test_daily_cycle_from_the_trough_is_never_leaking():
    _, changes = run(synthetic.daily_cycle_trough_start(days=2.0))
    assert first(changes, "leaking") is None


def test_rss_leak_forecast_is_within_25_percent():
    trace = synthetic.rss_leak(days=1.0, onset=12 * HOUR)
    detector = SeriesDetector(trace.series, series_config(trace.series, limit_bytes=trace.limit_bytes),
                              SHORT_DAY_ONE)
    from mysql_snmp.agents.leak.forecast import forecast

    for t, value, _ in trace.rows():
        detector.feed(t, value)
    assert detector.state == LEAKING and detector.since < trace.onset + 6 * HOUR
    seconds, limit = forecast(detector.reading(), detector.series, {})
    truth = trace.true_time_to_limit(trace.times[-1])
    assert limit == trace.limit_bytes
    assert abs(seconds / truth - 1) < 0.25


def test_a_repeated_sample_is_ignored_an_earlier_one_moves_the_history_back_and_long_gaps_restart_the_windows():
    detector = SeriesDetector("x", series_config("innodb_mem_dictionary_bytes"), LeakConfig(state_file=None))
    detector.feed(100.0, 1e6)
    assert detector.feed(100.0, 9e9) is None  # the same snapshot delivered twice
    assert detector.history.last_time == 100.0 and detector.clock_step is None
    detector.feed(50.0, 1e6)  # the clock stepped back (tests/leak/test_clock_step.py)
    assert detector.clock_step == 50.0 and detector.history.last_time == 50.0
    for i in range(1, 200):
        detector.feed(50.0 + 15 * i, 1e6)
    assert len(detector.history.bins) > 40
    detector.feed(50.0 + 15 * 200 + 7200, 1e6)  # two hours later
    assert len(detector.history.bins) == 0
    assert detector.state in (OK, SUSPECT)


def test_a_leak_from_the_first_sample_is_only_suspect_on_day_one_then_leaking():
    # with no history the growth could be the rising half of a daily cycle not seen yet,
    # even with the table count flat: a flat count explains nothing and confirms nothing
    trace = synthetic.dictionary_leak(days=1.3, onset=0.0)
    _, changes = run(trace)
    assert changes[0][1] == "suspect" and changes[0][0] <= HOUR, changes
    leaking = first(changes, "leaking")
    assert leaking is not None and DAY <= leaking[0] <= 1.3 * DAY and leaking[2] == "unexplained", changes


def test_nothing_is_leaking_before_a_day_of_history_by_default():
    trace = synthetic.dictionary_leak(days=0.5, onset=4 * HOUR)
    _, changes = run(trace)
    assert [c[1] for c in changes] == ["suspect"], changes
    assert trace.onset < changes[0][0] <= trace.onset + 30 * 60


def restart_then_tables(overshoot_tables: int) -> synthetic.Trace:
    """Shaped on the real MariaDB restart (tests/leak/fixtures/mariadb-restart-trace.csv):
    2030 tables at 2248 bytes each, a restart leaving 17, the tables reopening ever more
    slowly (as the square root of the time), the non-table part back 20 KB higher; then,
    once ``overshoot_tables`` is not 0, that many more tables opened over 10 minutes."""
    times, values, tables = [], [], []
    for i in range(int(3600 / 5)):
        t = 5.0 * i
        if t < 420:
            count, rest = 2030.0, 392_700
        else:
            count, rest = min(2030.0, 17.0 + 42.0 * (t - 420) ** 0.5), 412_900
            if overshoot_tables and t > 2400:
                count += min(overshoot_tables, overshoot_tables * (t - 2400) / 600)
        times.append(t)
        tables.append(float(round(count)))
        values.append(rest + 2248 * round(count))
    return synthetic.Trace("restart-then-tables", "innodb_mem_dictionary_bytes", times, values, tables)


def test_a_restart_seen_on_day_one_climbs_back_ok_and_tables_beyond_it_are_tables():
    # with no baseline yet, the climb back stays below the level the agent saw before the
    # restart: not a new high, so not even suspect
    _, changes = run(restart_then_tables(0))
    assert changes == []
    # tables opened beyond the old level: suspect (day one), and the windows that still
    # hold the restart's drop see the tables explain the bytes
    _, changes = run(restart_then_tables(800))
    suspects = [c for c in changes if c[1] == "suspect"]
    assert suspects and all(c[2] == "tables" for c in suspects), changes
    assert "leaking" not in [c[1] for c in changes]


def deployment_after_a_quiet_spell(seed: int):
    """A wandering dictionary (the steps-up family's noise) that steps up once, 1-10 %, after
    its (shortened) first day: its wander just after the step must not pass for a leak."""
    rng = families.random.Random(seed)
    times = families.grid(10 * HOUR / DAY, 30.0)
    level = families.sweep(seed, 50 * families.MB, 300 * families.MB)
    step = (rng.uniform(4, 9) * HOUR, rng.uniform(0.01, 0.1) * level)
    values, tables = families.shifted_dictionary(rng, times, seed, level, [step], offsets=(1, 3))
    return families.trace(f"deployment/{seed}", families.DICTIONARY, times, values, tables)


def test_a_step_up_then_wander_to_the_new_plateau_is_never_leaking():
    # Before the step's rise was taken off the level, 3 of these 40 seeds (21, 26, 36) went
    # leaking within half an hour of the step, as steps-up seeds 1 and 5 did in the 30-day bench.
    leaking = [seed for seed in range(1, 41)
               if first(run(deployment_after_a_quiet_spell(seed), SHORT_DAY_ONE)[1], "leaking")]
    assert leaking == []
