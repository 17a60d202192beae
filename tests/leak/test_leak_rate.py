"""The rate served while ``leaking``: the flat-then-line fit over the leak's whole span
(agents/leak/leak_rate.py), on noiseless series where the answer is known exactly."""

import pytest

from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.leak_rate import rate_over_leak
from mysql_snmp.agents.leak.series_detector import SeriesDetector

RSS = "process_resident_memory_bytes"
HOUR = 3600.0
GIB = 1024.0**3
RATE = 30e6 / HOUR  # bytes per second


def history_of(level_at, hours: float, step: float = 30.0):
    detector = SeriesDetector(RSS, series_config(RSS), LeakConfig(state_file=None))
    t0 = 1_700_000_000.0
    t = t0
    while t <= t0 + hours * HOUR:
        detector.history.add(t, level_at(t - t0))
        t += step
    return detector.history, detector.series, detector.config, t - step


@pytest.mark.parametrize("leak_hours", [3.0, 20.0, 60.0])
def test_the_rate_is_the_leaks_from_its_onset_also_beyond_the_bins_kept(leak_hours):
    onset = 30 * HOUR
    history, series, config, now = history_of(lambda t: 8 * GIB + max(0.0, t - onset) * RATE, 30 + leak_hours)
    # the confirming window (6 h) before a leak confirmed an hour after its onset
    fit = rate_over_leak(history, series, config, now, now - (1_700_000_000.0 + onset + HOUR) + 6 * HOUR)
    # the knee sits on a point (6 min over the bins kept, 15 min in the buckets), the onset inside
    # one: up to half a point's growth is spread over the fit's span
    assert fit.rate_per_second == pytest.approx(RATE, rel=0.02)
    assert fit.seconds == pytest.approx(leak_hours * HOUR, abs=16 * 60)
    assert fit.growth == pytest.approx(fit.rate_per_second * fit.seconds)


def test_a_restart_inside_the_span_starts_the_fit_after_it():
    def level(t):
        if t < 5 * HOUR:  # a fast climb before the restart: would tilt a fit across the drop
            return 8 * GIB + t * 10 * RATE
        if t < 9 * HOUR:  # restarted at 5 h, flat until the leak starts at 9 h
            return 3 * GIB
        return 3 * GIB + (t - 9 * HOUR) * RATE

    history, series, config, now = history_of(level, 11.5)
    fit = rate_over_leak(history, series, config, now, 11 * HOUR)
    assert fit.rate_per_second == pytest.approx(RATE, rel=0.02)
    assert fit.seconds == pytest.approx(2.5 * HOUR, abs=7 * 60)


def test_no_rate_when_the_span_does_not_rise_or_the_leak_is_younger_than_five_points():
    history, series, config, now = history_of(lambda t: 8 * GIB - t * RATE, 8)
    assert rate_over_leak(history, series, config, now, 6 * HOUR) is None
    history, series, config, now = history_of(lambda t: 8 * GIB + max(0.0, t - 7.8 * HOUR) * RATE, 8)
    assert rate_over_leak(history, series, config, now, 6 * HOUR) is None
