"""A restart whose warm-up follows a logistic curve (tests/leak/shaped_families.logistic_warmups,
agents/leak/warmup.py): a climb that accelerates first, which no exponential approach can follow,
must not pass for a leak.

Each trace is a day of an 8 GB server's steady RSS (so the detector may confirm at all), a
restart to 0.5 GB, and the 12 hours after it in which the detector fits the warm-up's curve,
sampled every 30 s under the family's wander.  The benchmark's 30-day traces saw it go wrong
with a week of history before the restart: logistic-warmup seed 3, 39 hours, leaking 9 hours
into the climb (the exponential approaches fitted fell behind it), and, with a logistic fitted
but extrapolated before its midpoint, seed 2, 21 hours, 8 hours in.
"""

import random

import pytest

from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.series_detector import LEAKING, SeriesDetector
from mysql_snmp.agents.leak.warmup import fit_warmup
from tests.leak.families import RSS, grid, mean_reverting, trace
from tests.leak.shaped_families import logistic
from tests.leak.synthetic import DAY, HOUR

RESTART = 1.1 * DAY
PLATEAU, LOW = 4.5e9, 0.5e9


def logistic_restart(seed: int, hours: float):
    rng = random.Random(seed)
    times = grid(RESTART / DAY + 12 / 24, 30.0)
    wander = mean_reverting(rng, times, 1800, 0.001 * PLATEAU)
    values = [(PLATEAU if t < RESTART else LOW + (PLATEAU - LOW) * logistic(t - RESTART, hours * HOUR)) + w
              for t, w in zip(times, wander)]
    return trace(f"logistic-restart/{seed}", RSS, times, values, notes=f"logistic warm-up over {hours:.0f} h")


@pytest.mark.parametrize("seed, hours", [(1, 11), (2, 21), (1, 39), (2, 72)])
def test_a_logistic_warm_up_after_a_restart_is_never_leaking(seed, hours):
    trace = logistic_restart(seed, hours)
    detector = SeriesDetector(trace.series, series_config(trace.series), LeakConfig(state_file=None))
    states = [detector.feed(t, value, aux) for t, value, aux in trace.rows()]
    assert not any(change is not None and change[1] == LEAKING for change in states), trace.notes


def test_the_accelerating_first_hours_of_a_logistic_climb_are_fitted_as_one():
    rng = random.Random(5)
    hours = 39
    times = [360.0 * i for i in range(int(7 * HOUR / 360))]  # its first 7 hours
    values = [LOW + (PLATEAU - LOW) * logistic(t, hours * HOUR) + rng.gauss(0, 2e6) for t in times]
    curve = fit_warmup(times, values, None, 0.0, 0.0)
    assert curve.delay > 0  # a midpoint after the start: the climb accelerates
    assert curve.misfit < 3e6
    later = times[-1] + 1800
    truth = LOW + (PLATEAU - LOW) * logistic(later, hours * HOUR)
    assert abs(curve.predict(later) - truth) < 10e6
