"""Theil-Sen, Mann-Kendall and step removal on hand-computable series."""

import math
import random

import pytest

from mysql_snmp.agents.leak.trend import (
    Hinge,
    estimate_trend,
    find_steps,
    fit_hinge,
    mann_kendall_z,
    median,
    segments_between,
    theil_sen_slope,
)


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
    with pytest.raises(ValueError):
        median([])


def test_theil_sen_ignores_outliers_that_move_least_squares():
    times = list(range(20))
    values = [2.0 * t + 5 for t in times]
    values[3] = 500.0  # one wild sample
    values[15] = -300.0
    assert theil_sen_slope(times, values) == pytest.approx(2.0)


def test_theil_sen_needs_distinct_times():
    with pytest.raises(ValueError):
        theil_sen_slope([1, 1], [1, 2])


def test_mann_kendall_monotone_series():
    # S = n(n-1)/2 for a strictly rising series: 10 points -> S = 45, Var = 10*9*25/18 = 125
    assert mann_kendall_z(list(range(10))) == pytest.approx((45 - 1) / math.sqrt(125))
    assert mann_kendall_z(list(range(10, 0, -1))) == pytest.approx(-(45 - 1) / math.sqrt(125))


def test_mann_kendall_ties_and_constant():
    assert mann_kendall_z([5.0] * 12) == 0.0
    # ties shrink the variance: [1,1,2,2]: S = 4, Var = (4*3*13 - 2*(2*1*9))/18 = 120/18
    assert mann_kendall_z([1, 1, 2, 2]) == pytest.approx(3 / math.sqrt(120 / 18))


def test_mann_kendall_noise_is_not_significant():
    rng = random.Random(42)
    z = [mann_kendall_z([rng.gauss(0, 1) for _ in range(30)]) for _ in range(200)]
    assert sum(abs(v) >= 3.09 for v in z) <= 2  # ~0.2% expected


def test_find_steps_finds_one_jump_and_segments_split_there():
    values = [100.0 + 2 * i for i in range(30)]
    for i in range(15, 30):
        values[i] += 10_000.0
    steps = find_steps(values, step_factor=8.0, resolution=1.0)
    assert steps == [15]
    assert segments_between(steps, 30) == [(0, 15), (15, 30)]
    times = list(range(30))
    assert theil_sen_slope(times, values, segments_between(steps, 30)) == pytest.approx(2.0)


def test_find_steps_keeps_block_quantised_growth():
    # an InnoDB heap: mostly no change, an 8112-byte block every fourth sample
    values = [0.0]
    for i in range(1, 40):
        values.append(values[-1] + (8112 if i % 4 == 0 else 0))
    assert find_steps(values, step_factor=8.0, resolution=8192) == []


def test_estimate_trend_of_step_is_flat_and_of_ramp_is_significant():
    times = [60.0 * i for i in range(30)]
    for seed in range(20):
        rng = random.Random(seed)
        step = [1e6 + (5e6 if i >= 12 else 0) + rng.gauss(0, 2000) for i in range(30)]
        flat = estimate_trend(times, step, resolution=8192)
        assert flat.split == (12,)  # the jump lands at index 12
        assert abs(flat.z) < 3.09, seed
    ramp = estimate_trend(times, [1e6 + 1000.0 * i for i in range(30)], resolution=8192)
    assert ramp.z > 3.09
    assert ramp.rate_per_hour == pytest.approx(1000.0 * 60)
    assert ramp.growth == pytest.approx(1000.0 * 29)


def _hinge_by_normal_equations(times, values, knee):
    """Residual sum of squares, level and slope of level + slope * max(0, t - times[knee])."""
    x = [max(0.0, t - times[knee]) for t in times]
    n, sx, sy = len(x), sum(x), sum(values)
    sxx, sxy = sum(a * a for a in x), sum(a * v for a, v in zip(x, values))
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    level = (sy - slope * sx) / n
    return sum((v - level - slope * a) ** 2 for a, v in zip(x, values)), level, slope


def test_fit_hinge_recovers_a_clean_knee_level_and_slope():
    times = [1.7e9 + 60.0 * i for i in range(100)]
    values = [8e9 + max(0.0, t - times[40]) * 8333.0 for t in times]
    hinge = fit_hinge(times, values)
    assert hinge.knee == 40
    assert hinge.level == pytest.approx(8e9, rel=1e-9)
    assert hinge.slope_per_second == pytest.approx(8333.0, rel=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_fit_hinge_is_the_least_squares_hinge_on_noisy_uneven_points(seed):
    rng = random.Random(seed)
    n = rng.randint(8, 150)
    times = sorted(1.7e9 + rng.uniform(0, 43200) for _ in range(n))
    times = [t + i * 1e-3 for i, t in enumerate(times)]  # distinct
    onset = rng.choice(times)
    values = [8.6e9 + rng.gauss(0, 2.5e7) + max(0.0, t - onset) * 8333.0 for t in times]
    hinge = fit_hinge(times, values)
    fits = {k: _hinge_by_normal_equations(times, values, k) for k in range(n - 1)}
    best = min(fits, key=lambda k: fits[k][0])
    assert fits[hinge.knee][0] == pytest.approx(fits[best][0], rel=1e-9)
    assert hinge.level == pytest.approx(fits[hinge.knee][1], rel=1e-9)
    assert hinge.slope_per_second == pytest.approx(fits[hinge.knee][2], rel=1e-6, abs=1e-6)


def test_fit_hinge_needs_two_points():
    assert fit_hinge([1.0], [5.0]) is None
    assert fit_hinge([1.0, 2.0], [5.0, 7.0]) == Hinge(0, 5.0, 2.0)
