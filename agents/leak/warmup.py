"""Warm-ups after a restart: the curve a refilling cache follows, and growth beyond it.

After a restart a memory series drops and climbs back towards its old level, each minute by
a share of what is still missing: an exponential approach, always slowing down.  The trend
windows see that climb as growth, but it stays below the pre-restart high, so it is never
confirmed.  A leak that starts during the climb stays below that high too, for hours.

This module fits the approach (level, depth and time constant, plus bytes per table when
the table count is sampled) to the points since the drop, leaving out the last window, and
extrapolates it over that window.  A real warm-up can have a second, slower stage (a real
MariaDB's table count came back a fifth with a time constant of 5.5 min, the rest with one
of 20 min or more): one exponential fitted to its first hours then predicts the climb
levelling off too soon, and the slower stage's climb would pass for a leak.  So a curve of
two stages is fitted too, and kept when it fits clearly better.  Both stages only ever slow
down (positive depths): a leak starting during the climb bends it upwards, which no such
curve can follow.  Fitted to the first hour or so, even two stages can level off too soon
when the second is slow: its asymptote is poorly known yet.  A warm-up returns to where the
series stood before the restart, so a curve made to return there (``returns_to``) is
fitted too, and the detector asks for growth beyond both.  Growth the curve does not
predict -- the climb no longer slowing down, or a steady rise after the plateau -- is left
over in the residuals; it is a leak when it keeps rising, significantly, above what the
series' noise and the fit's own misfit allow.  A large buffer pool warming over a day or more
climbs slowly first, then faster, then levels off (a logistic curve): no exponential approach
follows its first half, and its acceleration would pass for a leak.  So a logistic climb is
fitted too, and kept when it fits clearly better; until a time scale past its midpoint, where
it levels off is barely known from the points, and the detector judges nothing beyond it
(agents/leak/assessment.py).  Bytes per table are bounded to what tables
can plausibly cost, so a flat or wandering table count cannot soak up (or fake) the growth.

Pure math on time-ordered points; no I/O.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

# Time constants tried, in seconds: 5 min to 12 h, log-spaced (a warm-up of a few minutes
# to one that takes a working day to refill a buffer pool).
TAUS = tuple(300.0 * (144.0 ** (i / 23)) for i in range(24))


def find_restart(values: Sequence[float], drop_share: float, min_drop: float) -> int | None:
    """Index of the lowest point right after the last sudden drop to below ``1 - drop_share``
    of the level before it, by at least ``min_drop`` (a restart), or None.

    Sudden: within two points.  A daily cycle's evening decline is spread over hours, so it
    never qualifies; a FLUSH TABLES or a gap's small shift does not drop far enough; and
    ``min_drop`` keeps the wander of a series near zero (an AHI at night) from looking like one."""
    for i in range(len(values) - 1, 0, -1):
        before = max(values[max(0, i - 2):i])
        if before > 0 and values[i] < (1.0 - drop_share) * before and before - values[i] >= min_drop:
            end = min(len(values), i + 3)
            return min(range(i, end), key=lambda k: values[k])
    return None


# A curve of two stages is kept when its squared misfit is under this share of the best
# single stage's: on a one-stage climb with noise the extra freedom gains a few per cent.
TWO_STAGE_GAIN = 0.5
# Points a curve of two stages needs (five parameters and the time constants' grid).
TWO_STAGE_POINTS = 12
# A logistic climb's delay from the start to its midpoint, in its time scales: a logistic from
# 1 % of the climb at the start reaches its midpoint 4.6 time scales later.
DELAY_SHARES = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)


@dataclass(frozen=True)
class WarmupCurve:
    start: float  # time of the drop's lowest point
    tau: float
    level: float  # the level the climb approaches (without tables)
    depth: float  # how far below it the climb started (its first stage's share with two)
    per_unit: float  # bytes per explanatory unit (table); 0 without one
    misfit: float  # root mean square of the fit's residuals
    slow_tau: float = 0.0  # the second, slower stage, when there is one
    slow_depth: float = 0.0
    # a logistic climb instead of the first stage: its midpoint this long after the start (the
    # climb accelerates until then), ``tau`` its time scale; 0: an exponential approach
    delay: float = 0.0

    def predict(self, t: float, aux: float | None = None) -> float:
        value = self.level - self.depth * _shape(t - self.start, self.tau, self.delay)
        if self.slow_depth:
            value -= self.slow_depth * math.exp(-(t - self.start) / self.slow_tau)
        return value + (self.per_unit * aux if aux is not None else 0.0)


def _shape(since: float, tau: float, delay: float) -> float:
    """How much of the climb is still to come ``since`` seconds after the start, 1 at the start:
    an exponential approach (``delay`` 0), or a logistic curve whose midpoint is ``delay`` after
    the start and whose time scale is ``tau``."""
    if not delay:
        return math.exp(-since / tau)
    # 1 / (1 + e^x), kept finite however far from the midpoint
    x = (since - delay) / tau
    to_come = math.exp(-x) / (1.0 + math.exp(-x)) if x > 0 else 1.0 / (1.0 + math.exp(x))
    return to_come * (1.0 + math.exp(-delay / tau))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(vector)
    rows = [row[:] + [v] for row, v in zip(matrix, vector)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-12 * max(1.0, max(abs(x) for row in rows for x in row[:n])):
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            for c in range(col, n + 1):
                rows[r][c] -= factor * rows[col][c]
    solution = [0.0] * n
    for r in range(n - 1, -1, -1):
        solution[r] = (rows[r][n] - sum(rows[r][c] * solution[c] for c in range(r + 1, n))) / rows[r][r]
    return solution


def least_squares(columns: list[list[float]], target: list[float]) -> tuple[list[float], float] | None:
    """Coefficients and sum of squared residuals of target ~ columns."""
    k = len(columns)
    matrix = [[sum(a * b for a, b in zip(columns[i], columns[j])) for j in range(k)] for i in range(k)]
    vector = [sum(a * b for a, b in zip(columns[i], target)) for i in range(k)]
    coefficients = _solve(matrix, vector)
    if coefficients is None:
        return None
    residuals = [y - sum(c * col[i] for c, col in zip(coefficients, columns)) for i, y in enumerate(target)]
    return coefficients, sum(r * r for r in residuals)


# Where a warm-up is heading: the level before the restart, and the table count then (None
# without one).  A curve made to return there is fitted with one parameter less.
Anchor = tuple[float, float | None]


def fit_warmup(times: Sequence[float], values: Sequence[float], aux: Sequence[float] | None,
               start: float, max_per_unit: float, returns_to: Anchor | None = None) -> WarmupCurve | None:
    """See _fit_warmup.  The points since a restart change only when a new point closes
    (every few minutes) while the detector asks every minute, for each window: memoised."""
    return _fit_warmup(tuple(times), tuple(values), None if aux is None else tuple(aux), start, max_per_unit,
                       returns_to)


@functools.lru_cache(maxsize=256)
def _fit_warmup(times: tuple[float, ...], values: tuple[float, ...], aux: tuple[float, ...] | None,
                start: float, max_per_unit: float, returns_to: Anchor | None) -> WarmupCurve | None:
    """The approach curve that fits the points best (least squares): the time constant from
    a coarse grid, then refined between the grid's neighbours of the best one (a few per cent
    off in the time constant is megabytes off in the extrapolation of a large cache); bytes
    per unit are kept within [0, max_per_unit].  With ``returns_to`` the curve's level is
    not fitted but set so that it reaches that value at that table count."""
    if len(times) < 8:
        return None

    decays = {tau: [math.exp(-(t - start) / tau) for t in times] for tau in TAUS}

    def fit(tau: float) -> tuple[float, WarmupCurve] | None:
        decay = decays.get(tau) or [math.exp(-(t - start) / tau) for t in times]
        fitted = _fit_one([decay], values, aux, max_per_unit, returns_to)
        if fitted is None:
            return None
        (level, per_unit, minus_depth), sse = fitted
        return sse, WarmupCurve(start, tau, level, -minus_depth, per_unit, math.sqrt(sse / len(times)))

    grid = [(i, fit(tau)) for i, tau in enumerate(TAUS)]
    grid = [(i, found) for i, found in grid if found is not None]
    if not grid:
        return None
    i, best = min(grid, key=lambda item: item[1][0])
    best = _refine(lambda log_tau: fit(math.exp(log_tau)), best, _neighbours(TAUS, i))
    two = _fit_two_stages(times, values, aux, start, max_per_unit, decays, returns_to)
    if two is not None and two[0] < TWO_STAGE_GAIN * best[0]:
        best = two
    logistic = _fit_logistic(times, values, aux, start, max_per_unit, returns_to)
    if logistic is not None and logistic[0] < TWO_STAGE_GAIN * best[0]:
        best = logistic
    return best[1]


Fit = tuple[float, WarmupCurve]  # (sum of squared residuals, curve)


def _neighbours(grid: Sequence[float], i: int) -> tuple[float, float]:
    """log of the grid's neighbours of its i-th value: where to refine a grid's best."""
    return math.log(grid[max(0, i - 1)]), math.log(grid[min(len(grid) - 1, i + 1)])


def _refine(cost, best: Fit, span: tuple[float, float]) -> Fit:
    """Golden-section search of ``cost`` (x -> Fit or None) over ``span``, from ``best``:
    12 steps shrink the span to 0.3 %."""
    low, high = span
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(12):
        a, b = high - golden * (high - low), low + golden * (high - low)
        fa, fb = cost(a), cost(b)
        for found in (fa, fb):
            if found is not None and found[0] < best[0]:
                best = found
        if fa is not None and (fb is None or fa[0] < fb[0]):
            high = b
        else:
            low = a
    return best


def _fit_two_stages(times, values, aux, start: float, max_per_unit: float,
                    decays: dict[float, list[float]], returns_to: Anchor | None) -> Fit | None:
    """The best curve of two stages (the slow one at least twice the fast one, both depths
    positive): a coarse grid of pairs, then each time constant refined in turn; None when
    no pair fits so."""
    if len(times) < TWO_STAGE_POINTS:
        return None

    def fit(fast: float, slow: float) -> Fit | None:
        if slow < 2 * fast:
            return None
        columns = [decays.get(tau) or [math.exp(-(t - start) / tau) for t in times] for tau in (fast, slow)]
        fitted = _fit_one(columns, values, aux, max_per_unit, returns_to)
        if fitted is None:
            return None
        (level, per_unit, minus_fast, minus_slow), sse = fitted
        if minus_fast >= 0 or minus_slow >= 0:
            return None
        return sse, WarmupCurve(start, fast, level, -minus_fast, per_unit, math.sqrt(sse / len(times)),
                                slow, -minus_slow)

    grid = TAUS
    found = [(i, j, fit(grid[i], grid[j])) for i in range(len(grid)) for j in range(i + 1, len(grid))]
    found = [item for item in found if item[2] is not None]
    if not found:
        return None
    i, j, best = min(found, key=lambda item: item[2][0])
    for _ in range(3):
        fast, slow = best[1].tau, best[1].slow_tau
        best = _refine(lambda log_tau: fit(math.exp(log_tau), slow), best, _neighbours(grid, i))
        fast = best[1].tau
        best = _refine(lambda log_tau: fit(fast, math.exp(log_tau)), best, _neighbours(grid, j))
    return best


def _fit_logistic(times, values, aux, start: float, max_per_unit: float, returns_to: Anchor | None) -> Fit | None:
    """The best logistic climb (midpoint after the start, positive depth): a coarse grid of
    time scales and delays, then each refined in turn; None when none fits so."""
    if len(times) < TWO_STAGE_POINTS:
        return None

    def fit(tau: float, delay: float) -> Fit | None:
        shape = [_shape(t - start, tau, delay) for t in times]
        fitted = _fit_one([shape], values, aux, max_per_unit, returns_to)
        if fitted is None:
            return None
        (level, per_unit, minus_depth), sse = fitted
        if minus_depth >= 0:
            return None
        return sse, WarmupCurve(start, tau, level, -minus_depth, per_unit, math.sqrt(sse / len(times)),
                                delay=delay)

    found = [(i, j, fit(tau, share * tau)) for i, tau in enumerate(TAUS) for j, share in enumerate(DELAY_SHARES)]
    found = [item for item in found if item[2] is not None]
    if not found:
        return None
    i, j, best = min(found, key=lambda item: item[2][0])
    for _ in range(2):
        share = best[1].delay / best[1].tau
        best = _refine(lambda log_tau: fit(math.exp(log_tau), share * math.exp(log_tau)), best,
                       _neighbours(TAUS, i))
        tau = best[1].tau
        best = _refine(lambda log_share: fit(tau, math.exp(log_share) * tau), best, _neighbours(DELAY_SHARES, j))
    return best


def _fit_one(decays: list[list[float]], values: Sequence[float], aux: Sequence[float] | None,
             max_per_unit: float, returns_to: Anchor | None = None) -> tuple[tuple[float, ...], float] | None:
    """Least squares of values ~ level + per_unit x aux + one coefficient per decay column:
    (level, per_unit, *coefficients), sse; bytes per unit kept within [0, max_per_unit].
    With ``returns_to`` (value, count) the level is that value less per_unit x count: what
    is fitted then is how far the values and counts are from there, without a constant."""
    if returns_to is None:
        return _fit_linear(decays, values, aux, max_per_unit, constant=True)
    value, count = returns_to
    if aux is not None and count is None:
        return None  # the table count now but not then: no known place to return to
    fitted = _fit_linear(decays, [v - value for v in values], None if aux is None else [a - count for a in aux],
                         max_per_unit, constant=False)
    if fitted is None:
        return None
    (_, per_unit, *coefficients), sse = fitted
    return (value - per_unit * (count or 0.0), per_unit, *coefficients), sse


def _fit_linear(decays: list[list[float]], values: Sequence[float], aux: Sequence[float] | None,
                max_per_unit: float, constant: bool) -> tuple[tuple[float, ...], float] | None:
    """_fit_one's least squares, with a constant level or none (then reported as 0)."""
    ones = [[1.0] * len(values)] if constant else []
    if aux is not None and max(aux) > min(aux):
        solved = least_squares([*ones, list(aux), *decays], list(values))
        per_unit = None if solved is None else solved[0][len(ones)]
        if per_unit is not None and 0.0 <= per_unit <= max_per_unit:
            coefficients, sse = solved
            return (coefficients[0] if constant else 0.0, *coefficients[len(ones):]), sse
        # outside the plausible range: fix bytes per unit at the nearest bound
        per_unit = 0.0 if per_unit is None or per_unit < 0 else max_per_unit
    else:
        per_unit = 0.0
    target = [v - per_unit * a for v, a in zip(values, aux)] if aux is not None and per_unit else list(values)
    solved = least_squares([*ones, *decays], target)
    if solved is None:
        return None
    coefficients, sse = solved
    return (coefficients[0] if constant else 0.0, per_unit, *coefficients[len(ones):]), sse
