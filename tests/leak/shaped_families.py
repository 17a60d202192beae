"""Families of real-shaped workloads the first families (tests/leak/families.py) do not model.

Quiet (every ``leaking`` is a false alarm):

- a weekly cycle on top of the daily one: a quiet weekend, busy weekdays;
- restarts whose warm-up follows a logistic curve (slow, then fast, then levelling off) over
  6 h to 3 days, as an 8 GB server's buffer pool warms to about 4.5 GB of RSS; the first
  restart is the agent's first sample (no history), the later ones come after days of plateau;
- small caches (10-50 MB) that wander, and caches that move only in whole 8-16 KB blocks.

Leaks:

- a leak riding on a daily cycle (amplitude 1-50 % of the level; the leak adds half to twice
  the cycle's amplitude per day, never less than the series' minimum rate), and on a weekly one;
- accelerating leaks: the seed's rate at onset, the rate doubling every 6 h to 3 days;
- relative leaks on small caches: 0.5-2 %/h of a 10-50 MB dictionary.

Same conventions as families.py: (seed, days) -> Trace, the parameters swept by the seed.
"""

from __future__ import annotations

import math
import random

from mysql_snmp.agents.leak.config import series_config
from tests.leak.families import (
    DICTIONARY, MB, RSS, SEED_LEAK_BYTES_PER_HOUR, WANDER_TAU, Family, grid, in_blocks, mean_reverting, sweep,
    table_walk, trace, workload,
)
from tests.leak.synthetic import BYTES_PER_TABLE, DAY, HOUR, MIB, Trace

WEEK = 7 * DAY
DICTIONARY_LIMIT = 2048 * MIB
RSS_LIMIT = 16384 * MIB


def _cycle_series(seed: int) -> tuple[str, float]:
    """The RSS of an 8 GiB server (odd seeds) or a dictionary of 50-300 MB."""
    if seed % 2:
        return RSS, 8 * 1024 * MIB
    return DICTIONARY, sweep(seed, 50 * MB, 300 * MB, offset=3)


def _cycled(rng: random.Random, times: list[float], level: float, amplitude: float, weekly: bool,
            smooth: bool = False) -> list[float]:
    """The level following the working day (each day's amplitude within +-10 %), with a
    quieter weekend when ``weekly`` (two days at a third of the weekday's load), plus wander.
    The amplitude changes at midnight, or when ``smooth`` drifts from one day's to the next's
    over the day (no jump anywhere: how a real day's load ends where the next begins)."""
    phase = rng.uniform(0, 2 * math.pi)
    week_start = rng.uniform(0, WEEK)  # where in the week the trace starts
    daily = [amplitude * rng.uniform(0.9, 1.1) for _ in range(int(times[-1] // DAY) + 2)]
    wander = mean_reverting(rng, times, 1800, 0.0005 * level)
    values = []
    for t, w in zip(times, wander):
        load = workload(t, phase)
        if weekly and ((t + week_start) % WEEK) >= 5 * DAY:
            load /= 3
        day, into = divmod(t / DAY, 1.0)
        today = daily[int(day)]
        swing = today + (daily[int(day) + 1] - today) * into if smooth else today
        values.append(level * (1 + swing * (2 * load - 1)) + w)
    return values


def weekly_cycle(seed: int, days: float) -> Trace:
    rng = random.Random(seed)
    times = grid(days, 30.0)
    series, level = _cycle_series(seed)
    amplitude = sweep(seed, 0.01, 0.5)
    values = _cycled(rng, times, level, amplitude, weekly=True)
    return trace(f"weekly-cycle/{seed}", series, times, values,
                 notes=f"{series} {level / MB:.0f} MB +- {amplitude:.0%} daily, quiet weekends")


def cycle_steps(seed: int, days: float) -> Trace:
    """Deployments on a cycling server: the daily cycle of weekly_cycle (every third seed with
    quiet weekends), and 3-7 times the level steps up 1-10 % for good at any hour."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    series, level = _cycle_series(seed)
    amplitude = sweep(seed, 0.01, 0.5)
    values = _cycled(rng, times, level, amplitude, weekly=seed % 3 == 0)
    count = 3 + seed % 5
    steps = sorted((rng.uniform(0.2, days) * DAY, rng.uniform(0.01, 0.1) * level) for _ in range(count))
    values = [v + sum(size for at, size in steps if t >= at) for t, v in zip(times, values)]
    return trace(f"cycle-steps/{seed}", series, times, values,
                 notes=f"{series} {level / MB:.0f} MB +- {amplitude:.0%} daily, {count} steps of 1-10 %",
                 extra={"steps": steps})


def _linear_leak(level: float, onset: float, rate: float):
    return lambda t: level + max(0.0, t - onset) * rate / HOUR


def _cycle_leak(seed: int, days: float, weekly: bool, smooth: bool = False) -> Trace:
    """A leak under a daily (and weekly) cycle, from a random time of day three days before the
    end: two days or more after the onset, so the forecast is judged a day after a detection
    that took up to a day."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    series, level = _cycle_series(seed)
    amplitude = sweep(seed, 0.01, 0.5)
    per_day = sweep(seed, 0.5, 2.0, offset=2) * amplitude * level
    floor = series_config(series).min_rate_bytes_per_hour
    rate = max(per_day / 24, floor)
    onset = (days - 3) * DAY + rng.uniform(0, 24) * HOUR
    cycled = _cycled(rng, times, level, amplitude, weekly, smooth)
    values = [v + max(0.0, t - onset) * rate / HOUR for t, v in zip(times, cycled)]
    limit = RSS_LIMIT if series == RSS else DICTIONARY_LIMIT
    name = "weekly-cycle-leak" if weekly else "smooth-cycle-leak" if smooth else "daily-cycle-leak"
    return trace(f"{name}/{seed}", series, times, values, onset=onset, rate_bytes_per_hour=rate, limit_bytes=limit,
                 expected_reason="unexplained",
                 notes=f"{series} {level / MB:.0f} MB +- {amplitude:.0%}, leak {rate * 24 / (amplitude * level):.1f}x "
                       f"the amplitude per day ({rate / MB:.2f} MB/h)",
                 extra={"level_at": _linear_leak(level, onset, rate)})


def daily_cycle_leak(seed: int, days: float) -> Trace:
    return _cycle_leak(seed, days, weekly=False)


def smooth_cycle_leak(seed: int, days: float) -> Trace:
    """daily_cycle_leak on a cycle whose amplitude drifts through the day instead of jumping at midnight."""
    return _cycle_leak(seed, days, weekly=False, smooth=True)


def weekly_cycle_leak(seed: int, days: float) -> Trace:
    return _cycle_leak(seed, days, weekly=True)


def accelerating_leak(seed: int, days: float) -> Trace:
    """The seed's rate at onset on a 50-300 MB dictionary, doubling every 6 h to 3 days, towards
    2 GiB.  The true time to the limit is the noiseless curve's at its rate of the moment."""
    return _accelerating(seed, days, from_start=False)


def accelerating_leak_from_start(seed: int, days: float) -> Trace:
    """The same leak running from the agent's first sample (an agent installed on a server that
    already leaks, or started with a mysqld that leaks from its start): no flat history before
    it, so its first hours look like the first half of a warm-up."""
    return _accelerating(seed, days, from_start=True)


def seed_leak_from_start(seed: int, days: float) -> Trace:
    """The accelerating leaks' peer: the seed's rate from the first sample, constant."""
    return _accelerating(seed, days, from_start=True, doubling=math.inf)


def _accelerating(seed: int, days: float, from_start: bool, doubling: float | None = None) -> Trace:
    rng = random.Random(seed)
    times = grid(days, 30.0)
    base = sweep(seed, 50 * MB, 300 * MB, offset=1)
    doubling = doubling or sweep(seed, 6 * HOUR, 3 * DAY)
    onset = (days - 2) * DAY + rng.uniform(0, 12) * HOUR
    if from_start:
        onset = times[0]
    start_rate = SEED_LEAK_BYTES_PER_HOUR / HOUR  # bytes per second
    growth = doubling / math.log(2)  # e-folding time of the rate

    def leaked(t: float) -> float:
        if math.isinf(growth):
            return start_rate * max(0.0, t - onset)
        return start_rate * growth * math.expm1(max(0.0, t - onset) / growth)

    level_at = lambda t: base + 390 * BYTES_PER_TABLE + leaked(t)  # noqa: E731
    # the trace ends where the leak reaches the limit: mysqld would not go on
    times = [t for t in times if level_at(t) < DICTIONARY_LIMIT]
    tables = table_walk(rng, len(times), 390, 370, 400, 0.7)
    wander = mean_reverting(rng, times, WANDER_TAU, 0.0002 * base)
    values = [base + n * BYTES_PER_TABLE + in_blocks(leaked(t)) + w + rng.gauss(0.0, 4096)
              for t, n, w in zip(times, tables, wander)]

    def time_to_limit(t: float) -> float:
        # what the forecast promises: the time to the limit at the rate of now (the rate
        # going on doubling would reach it sooner still)
        return (DICTIONARY_LIMIT - level_at(t)) / (start_rate * math.exp(max(0.0, t - onset) / growth))

    name = "accelerating-leak-from-start" if from_start else "accelerating-leak"
    name = "seed-leak-from-start" if math.isinf(doubling) else name
    return trace(f"{name}/{seed}", DICTIONARY, times, values, tables, onset=onset,
                 rate_bytes_per_hour=SEED_LEAK_BYTES_PER_HOUR, limit_bytes=DICTIONARY_LIMIT,
                 expected_reason="unexplained",
                 notes=f"{base / MB:.0f} MB, seed's rate doubling every {doubling / HOUR:.0f} h".replace("every inf h", "never"),
                 extra={"level_at": level_at, "time_to_limit": time_to_limit})


def _small_cache(rng: random.Random, times: list[float], seed: int) -> tuple[float, list[float], list[float]]:
    """(level, values, tables) of a 10-50 MB dictionary whose tables and noise wander."""
    level = sweep(seed, 10 * MB, 50 * MB)
    tables = table_walk(rng, len(times), 120, 100, 130, 0.5)
    wander = mean_reverting(rng, times, sweep(seed, 600, 7200, offset=2), sweep(seed, 0.0005, 0.005, offset=4) * level)
    values = [level + (n - 120) * BYTES_PER_TABLE + w + rng.gauss(0.0, 2048) for n, w in zip(tables, wander)]
    return level, values, tables


def small_cache(seed: int, days: float) -> Trace:
    rng = random.Random(seed)
    times = grid(days, 30.0)
    level, values, tables = _small_cache(rng, times, seed)
    return trace(f"small-cache/{seed}", DICTIONARY, times, values, tables, notes=f"{level / MB:.0f} MB dictionary")


def small_cache_leak(seed: int, days: float) -> Trace:
    rng = random.Random(seed)
    times = grid(days, 30.0)
    level, values, tables = _small_cache(rng, times, seed)
    share = sweep(seed, 0.005, 0.02, offset=3)
    rate = share * level
    onset = (days - 2) * DAY + rng.uniform(0, 12) * HOUR
    values = [v + in_blocks(max(0.0, t - onset) * rate / HOUR) for t, v in zip(times, values)]
    return trace(f"small-cache-leak/{seed}", DICTIONARY, times, values, tables, onset=onset, rate_bytes_per_hour=rate,
                 limit_bytes=DICTIONARY_LIMIT, expected_reason="unexplained",
                 notes=f"{level / MB:.0f} MB at {share:.1%}/h ({rate / 1000:.0f} KB/h)",
                 extra={"level_at": _linear_leak(level, onset, rate)})


def quantised(seed: int, days: float) -> Trace:
    """A 10-50 MB cache that moves only in whole blocks of 8-16 KB, allocated and freed around
    a steady level (a mean-reverting count of blocks)."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    level = sweep(seed, 10 * MB, 50 * MB)
    block = round(sweep(seed, 8192, 16384, offset=2))
    spread = sweep(seed, 0.001, 0.01, offset=1) * level / block  # in blocks
    wander = mean_reverting(rng, times, sweep(seed, 600, 7200, offset=3), spread)
    values = [level + round(w) * block for w in wander]
    return trace(f"quantised/{seed}", DICTIONARY, times, values,
                 notes=f"{level / MB:.0f} MB in {block / 1024:.0f} KiB blocks, +-{spread:.0f} blocks")


def logistic(since: float, duration: float) -> float:
    """Share of a warm-up done ``since`` seconds after the restart: a logistic curve from 1 %
    to 99 % over ``duration``, half-way at its middle."""
    steepness = 2 * math.log(99) / duration
    return 1 / (1 + math.exp(-steepness * (since - duration / 2)))


def logistic_warmups(seed: int, days: float) -> Trace:
    """An 8 GB server's RSS after restarts: 0.5 GB, then a logistic climb to about 4.5 GB over
    6 h to 3 days as the buffer pool warms.  Restarts at the first sample and every 5-7 days."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    duration = sweep(seed, 6 * HOUR, 3 * DAY)
    plateau = 4.5e9 * rng.uniform(0.95, 1.05)
    low = 0.5e9
    restarts, at = [], 0.0
    while at < days * DAY:
        restarts.append(at)
        at += rng.uniform(5, 7) * DAY
    wander = mean_reverting(rng, times, 1800, 0.001 * plateau)
    values, r = [], 0
    for t, w in zip(times, wander):
        while r + 1 < len(restarts) and restarts[r + 1] <= t:
            r += 1
        values.append(low + (plateau - low) * logistic(t - restarts[r], duration) + w)
    return trace(f"logistic-warmup/{seed}", RSS, times, values,
                 notes=f"RSS to {plateau / 1e9:.1f} GB over {duration / HOUR:.0f} h, {len(restarts)} restarts")


SHAPED_FAMILIES: tuple[Family, ...] = (
    Family("weekly-cycle", False, weekly_cycle),
    Family("cycle-steps", False, cycle_steps),
    Family("logistic-warmup", False, logistic_warmups),
    Family("small-cache", False, small_cache),
    Family("quantised", False, quantised),
    Family("daily-cycle-leak", True, daily_cycle_leak, days=6.0, detect_within=24 * 3600),
    Family("smooth-cycle-leak", True, smooth_cycle_leak, days=6.0, detect_within=24 * 3600),
    Family("weekly-cycle-leak", True, weekly_cycle_leak, days=12.0, detect_within=24 * 3600),
    # the goal of a constant leak at the seed's rate, which is where these start
    Family("accelerating-leak", True, accelerating_leak, days=4.0, detect_within=1800),
    # from the first sample: a constant leak at the seed's rate is leaking when day one ends
    # (mature_baseline_seconds), at 24.3 h; the goal is that, with the seed-leak's 30 minutes
    Family("accelerating-leak-from-start", True, accelerating_leak_from_start, days=3.0, detect_within=DAY + 1800),
    Family("seed-leak-from-start", True, seed_leak_from_start, days=3.0, detect_within=DAY + 1800),
    Family("small-cache-leak", True, small_cache_leak, days=4.0, detect_within=24 * 3600),
)
