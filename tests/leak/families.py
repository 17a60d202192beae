"""Families of labelled synthetic memory traces: real-shaped noise, cycles, restarts, steps, gaps.

Each family is a list of cases -- one trace per seed, the family's parameters swept over
their range by the seed -- so a detector is judged on the range, not on one lucky trace.
The shapes are those a real server shows and a leak detector must not call a leak:

- noise that wanders: memory counters are mean-reverting random walks (an Ornstein-Uhlenbeck
  process, correlation time 10 min to 2 h, spread 0.05-0.5 % of the level), not white noise;
- daily cycles of 1-50 % of the level, including an adaptive hash index that follows the
  workload from a quiet night to a busy day;
- one-off steps up (schema deployments), restart drops with warm-ups back to the old level,
  hours-long sampling gaps with a small level change across them, table churn inside
  ``table_definition_cache`` with a nightly FLUSH TABLES;

and the leaks it must catch: the seed's (2 x 8112 bytes every 10 s), also a few hours after a
restart, a 400 KB/h leak on a small dictionary, an RSS leak on a wandering 8 GB process, and
growth explained by tables.  Every trace starts with no history, so the first day is included.

Test-only code: the benchmark (tests/bench/bench_leak.py) prints a table over every family;
tests/leak/test_families.py runs a short version.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from tests.leak.synthetic import BYTES_PER_TABLE, DAY, HOUR, INNODB_BLOCK, MIB, Trace

MB = 1_000_000
DICTIONARY = "innodb_mem_dictionary_bytes"
AHI = "innodb_mem_adaptive_hash_index_bytes"
RSS = "process_resident_memory_bytes"
SEED_LEAK_BYTES_PER_HOUR = 2 * INNODB_BLOCK * 360  # two heap blocks every 10 s: about 5.8 MB/h


@dataclass(frozen=True)
class Family:
    name: str
    leaks: bool
    make: Callable[[int, float], Trace]  # (seed, days) -> trace
    seeds: tuple[int, ...] = (1, 2, 3, 4, 5)
    days: float = 30.0
    detect_within: float | None = None  # the goal: leaking within this many seconds of onset


def sweep(seed: int, low: float, high: float, offset: int = 0, log: bool = True) -> float:
    """The seed's point in [low, high]: five consecutive seeds cover it end to end,
    ``offset`` shuffles which seed gets which end, so two swept parameters combine differently."""
    share = ((seed + offset) % 5) / 4
    if log:
        return low * (high / low) ** share
    return low + (high - low) * share


def grid(days: float, step: float) -> list[float]:
    return [i * step for i in range(int(days * DAY / step) + 1)]


def mean_reverting(rng: random.Random, times: list[float], tau: float, sigma: float) -> list[float]:
    """Ornstein-Uhlenbeck noise: stationary spread ``sigma``, correlation time ``tau`` (exact across gaps)."""
    out, x, last = [], rng.gauss(0.0, sigma), None
    for t in times:
        if last is not None:
            keep = math.exp(-(t - last) / tau)
            x = x * keep + sigma * math.sqrt(1.0 - keep * keep) * rng.gauss(0.0, 1.0)
        out.append(x)
        last = t
    return out


def table_walk(rng: random.Random, n: int, start: float, low: float, high: float, step: float) -> list[float]:
    """Open_table_definitions wandering inside [low, high] (whole tables)."""
    out, x = [], start
    for _ in range(n):
        x = min(max(x + rng.gauss(0.0, step), low), high)
        out.append(float(round(x)))
    return out


def in_blocks(leaked: float) -> float:
    """InnoDB heaps grow in whole blocks."""
    return math.ceil(leaked / INNODB_BLOCK) * INNODB_BLOCK if leaked > 0 else 0.0


def trace(name: str, series: str, times, values, aux=None, **kwargs) -> Trace:
    return Trace(name, series, list(times), [float(round(v)) for v in values], aux, **kwargs)


def workload(t: float, phase: float) -> float:
    """Share of the daily peak load at t: 0 at night, 1 at the busiest hour, smooth in between."""
    return 0.5 - 0.5 * math.cos(2 * math.pi * t / DAY + phase)


# -- quiet families: every leaking is a false alarm ------------------------------------------


def steady_white(seed: int, days: float) -> Trace:
    rng = random.Random(seed)
    times = grid(days, 30.0)
    base = sweep(seed, 50 * MB, 300 * MB)
    noise = sweep(seed, 4096, 65536, offset=2)
    tables = table_walk(rng, len(times), 390, 370, 400, 0.7)
    values = [base + n * BYTES_PER_TABLE + rng.gauss(0.0, noise) for n in tables]
    return trace(f"steady-white/{seed}", DICTIONARY, times, values, tables,
                 notes=f"dictionary {base / MB:.0f} MB, white noise {noise / 1024:.0f} KiB")


def steady_mean_reverting(seed: int, days: float) -> Trace:
    """The dictionary (tables flat) or RSS wandering as a mean-reverting walk."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    tau = sweep(seed, 600, 7200)
    spread = sweep(seed, 0.0005, 0.005, offset=2)
    if seed % 2:
        level = sweep(seed, 50 * MB, 300 * MB, offset=1)
        series, tables = DICTIONARY, table_walk(rng, len(times), 390, 385, 395, 0.3)
    else:
        level, series, tables = 8 * 1024 * MIB, RSS, None
    wander = mean_reverting(rng, times, tau, spread * level)
    values = [level + w + rng.gauss(0.0, 2048) for w in wander]
    return trace(f"mean-reverting/{seed}", series, times, values, tables,
                 notes=f"{series} {level / MB:.0f} MB, tau {tau / 60:.0f} min, spread {spread:.2%}")


def daily_cycle(seed: int, days: float) -> Trace:
    """Load by day, quiet by night; each day's amplitude differs by up to 10 %."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    amplitude = sweep(seed, 0.01, 0.5)
    phase = rng.uniform(0, 2 * math.pi)  # the first day starts anywhere in the cycle
    if seed % 2:
        level, series = 8 * 1024 * MIB, RSS
    else:
        level, series = sweep(seed, 50 * MB, 300 * MB, offset=3), DICTIONARY
    daily = [amplitude * rng.uniform(0.9, 1.1) for _ in range(int(days) + 2)]
    wander = mean_reverting(rng, times, 1800, 0.0005 * level)
    values = [level * (1 + daily[int(t // DAY)] * (2 * workload(t, phase) - 1)) + w for t, w in zip(times, wander)]
    return trace(f"daily-cycle/{seed}", series, times, values,
                 notes=f"{series} {level / MB:.0f} MB +- {amplitude:.0%} daily")


def ahi_daily(seed: int, days: float) -> Trace:
    """The adaptive hash index follows the workload: built up by day, shrinking at night."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    peak = sweep(seed, 64 * MIB, 1024 * MIB)
    night = sweep(seed, 0.5, 0.98, offset=2, log=False)  # share of the peak lost overnight
    phase = rng.uniform(0, 2 * math.pi)
    busy = [rng.uniform(0.9, 1.1) for _ in range(int(days) + 2)]
    wander = mean_reverting(rng, times, 1200, 0.003 * peak)
    values = [max(0.0, peak * busy[int(t // DAY)] * (1 - night * (1 - workload(t, phase))) + w)
              for t, w in zip(times, wander)]
    return trace(f"ahi-daily/{seed}", AHI, times, values,
                 notes=f"AHI up to {peak / MIB:.0f} MiB by day, {night:.0%} of it gone by night")


def shifted_dictionary(rng: random.Random, times: list[float], seed: int, level: float,
                       shifts: list[tuple[float, float]], offsets: tuple[int, int]) -> tuple[list[float], list[float]]:
    """(values, tables) of a dictionary whose tables and noise wander (correlation time and
    spread swept by the seed, ``offsets`` apart) and whose level moves by each (time, bytes)
    of ``shifts`` for good."""
    tables = table_walk(rng, len(times), 390, 370, 400, 0.7)
    wander = mean_reverting(rng, times, sweep(seed, 600, 7200, offset=offsets[0]),
                            sweep(seed, 0.0005, 0.002, offset=offsets[1]) * level)
    values = [level + n * BYTES_PER_TABLE + w + sum(size for at, size in shifts if t >= at)
              for t, n, w in zip(times, tables, wander)]
    return values, tables


def steps_up(seed: int, days: float) -> Trace:
    """Schema deployments: the dictionary jumps up 1-10 % now and then and stays there."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    level = sweep(seed, 50 * MB, 300 * MB)
    count = 3 + seed % 5
    steps = sorted((rng.uniform(0.2, days) * DAY, rng.uniform(0.01, 0.1) * level) for _ in range(count))
    values, tables = shifted_dictionary(rng, times, seed, level, steps, offsets=(1, 3))
    return trace(f"steps-up/{seed}", DICTIONARY, times, values, tables,
                 notes=f"{count} steps of 1-10 % on {level / MB:.0f} MB")


def restarted(seed: int, days: float, family: str, climbed: Callable[[float], float], notes: str) -> Trace:
    """Restarts every 1-7 days of the AHI, the dictionary (with its tables) or RSS, the seed
    picking which: the series drops, then climbs back by ``climbed(seconds since the restart)``
    (0 at the restart, towards 1) of the way to its old level."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    every = sweep(seed, 1 * DAY, 7 * DAY, offset=2)
    series = (AHI, DICTIONARY, RSS)[seed % 3]
    level = {AHI: 600 * MIB, DICTIONARY: sweep(seed, 50 * MB, 300 * MB), RSS: 8 * 1024 * MIB}[series]
    floor = {AHI: 0.0, DICTIONARY: 0.1, RSS: 0.3}[series]  # what is left right after a restart
    restarts = []
    at = rng.uniform(0.3, 1.0) * every
    while at < days * DAY:
        restarts.append(at)
        at += every * rng.uniform(0.8, 1.2)
    wander = mean_reverting(rng, times, 1800, 0.001 * level)
    values, tables, r = [], [], 0
    for t, w in zip(times, wander):
        while r < len(restarts) and restarts[r] <= t:
            r += 1
        filled = floor + (1 - floor) * climbed(t - restarts[r - 1] if r else 30 * DAY)
        values.append(level * filled + w)
        tables.append(float(round(390 * filled)))
    return trace(f"{family}/{seed}", series, times, values, tables if series == DICTIONARY else None,
                 notes=f"{series}: {len(restarts)} restarts, {notes}")


def restart_warmups(seed: int, days: float) -> Trace:
    """Restarts every 1-7 days: the series drops, then climbs back to its old level."""
    tau = sweep(seed, 1800, 6 * 3600)
    return restarted(seed, days, "restart-warmup", lambda since: 1 - math.exp(-since / tau),
                     f"warm-up tau {tau / 3600:.1f} h")


def restart_two_stage_warmups(seed: int, days: float) -> Trace:
    """Restarts whose warm-up has a second, slower stage, as a real MariaDB 10.11 showed
    (tests/leak/fixtures/mariadb-restart-trace.csv): its table count came back 20 % with a
    time constant of 5.5 min and the rest with one of 20 min or more, its RSS 30 % at once
    and the rest with one of 27 min.  Here the first stage is 20-70 % of the climb with a
    time constant of 10 min-1 h, the second 3-8 times slower (on a larger server everything
    refills more slowly than on the recording's)."""
    fast = sweep(seed, 600, 3600)
    slow = fast * sweep(seed, 3, 8, offset=1)
    share = sweep(seed, 0.2, 0.7, offset=3, log=False)
    return restarted(seed, days, "restart-two-stage",
                     lambda since: 1 - share * math.exp(-since / fast) - (1 - share) * math.exp(-since / slow),
                     f"{share:.0%} at tau {fast / 60:.0f} min, the rest at {slow / 60:.0f} min")


def sampling_gaps(seed: int, days: float) -> Trace:
    """Hours without samples (agent or network down), the level a little different after each."""
    rng = random.Random(seed)
    level = sweep(seed, 50 * MB, 300 * MB)
    full = grid(days, 30.0)
    gaps = sorted((rng.uniform(0.3, days - 1) * DAY, rng.uniform(1, 6) * HOUR) for _ in range(4 + seed % 4))
    times = [t for t in full if not any(start <= t < start + length for start, length in gaps)]
    shifts = [(start + length, rng.choice((-1, 1)) * rng.uniform(0.001, 0.01) * level) for start, length in gaps]
    values, tables = shifted_dictionary(rng, times, seed, level, shifts, offsets=(2, 1))
    return trace(f"gaps/{seed}", DICTIONARY, times, values, tables,
                 notes=f"{len(gaps)} gaps of 1-6 h, level shifts up to 1 %")


def churn_and_flush(seed: int, days: float) -> Trace:
    """Tables opened and evicted inside table_definition_cache, FLUSH TABLES every night."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    cache = sweep(seed, 400, 4000)
    base = sweep(seed, 50 * MB, 300 * MB, offset=2)
    tables, target, x = [], cache / 2, cache / 2
    flush_at = rng.uniform(1, 4) * HOUR  # a time of night
    for t, previous_t in zip(times, [-30.0] + times[:-1]):
        if int(t // HOUR) != int(previous_t // HOUR):
            target = rng.uniform(0.1, 1.0) * cache
        if (t - flush_at) // DAY != (previous_t - flush_at) // DAY:
            x = 20.0  # FLUSH TABLES: every cached definition evicted
        x = min(cache, max(10.0, x + 0.01 * (target - x) + rng.gauss(0, 2)))
        tables.append(float(round(x)))
    wander = mean_reverting(rng, times, 1800, 0.0005 * base)
    values = [base + n * BYTES_PER_TABLE + w for n, w in zip(tables, wander)]
    return trace(f"churn-flush/{seed}", DICTIONARY, times, values, tables,
                 notes=f"tdc {cache:.0f}, nightly FLUSH TABLES, dictionary {base / MB:.0f} MB")


# -- leaks: every case must reach leaking, and in time ---------------------------------------


WANDER_TAU = 1800.0  # correlation time of the dictionary leaks' wander


def _dictionary_leak(rng, times, base, onset, rate, tables, wander_spread=0.0002) -> list[float]:
    wander = mean_reverting(rng, times, WANDER_TAU, wander_spread * base)
    return [base + n * BYTES_PER_TABLE + in_blocks(max(0.0, t - onset) * rate / HOUR) + w + rng.gauss(0.0, 4096)
            for t, n, w in zip(times, tables, wander)]


def seed_leak(seed: int, days: float) -> Trace:
    """The seed's leak on a dictionary of 50-300 MB, sampled every 15 s or 30 s, after days of history."""
    rng = random.Random(seed)
    sample = 15.0 if seed % 2 else 30.0
    times = grid(days, sample)
    base = sweep(seed, 50 * MB, 300 * MB)
    # a day and more of the leak: the forecast's band is judged up to 24 h after detection
    onset = (days - 2) * DAY + rng.uniform(0, 12) * HOUR
    tables = table_walk(rng, len(times), 390, 370, 400, 0.7)
    values = _dictionary_leak(rng, times, base, onset, SEED_LEAK_BYTES_PER_HOUR, tables)
    limit = 2048 * MIB
    return trace(f"seed-leak/{seed}", DICTIONARY, times, values, tables, onset=onset,
                 rate_bytes_per_hour=SEED_LEAK_BYTES_PER_HOUR, limit_bytes=limit, expected_reason="unexplained",
                 notes=f"{base / MB:.0f} MB, every {sample:g} s", extra={
                     "level_at": lambda t: base + 390 * BYTES_PER_TABLE + max(0.0, t - onset) * SEED_LEAK_BYTES_PER_HOUR / HOUR,
                     "tau": WANDER_TAU})


def seed_leak_after_restart(seed: int, days: float) -> Trace:
    """A restart empties the dictionary; tables reopen (tau 30 min-2 h); the leak starts 2-5 h later."""
    rng = random.Random(seed)
    sample = 15.0 if seed % 2 else 30.0
    times = grid(days, sample)
    base = sweep(seed, 50 * MB, 300 * MB)
    restart = (days - 1) * DAY
    onset = restart + sweep(seed, 2, 5, offset=1, log=False) * HOUR
    tau = sweep(seed, 1800, 7200, offset=3)
    walk = table_walk(rng, len(times), 390, 370, 400, 0.7)
    tables = [float(round(n * (1 - math.exp(-(t - restart) / tau)))) if t >= restart else n
              for t, n in zip(times, walk)]
    # after the restart the server holds a fraction of its heaps until the tables are back
    base_at = [base * (0.3 + 0.7 * (1 - math.exp(-(t - restart) / tau))) if t >= restart else base for t in times]
    wander = mean_reverting(rng, times, 1800, 0.0002 * base)
    values = [b + n * BYTES_PER_TABLE + in_blocks(max(0.0, t - onset) * SEED_LEAK_BYTES_PER_HOUR / HOUR)
              + w + rng.gauss(0.0, 4096) for t, b, n, w in zip(times, base_at, tables, wander)]
    return trace(f"seed-leak-after-restart/{seed}", DICTIONARY, times, values, tables, onset=onset,
                 rate_bytes_per_hour=SEED_LEAK_BYTES_PER_HOUR, expected_reason="unexplained",
                 notes=f"{base / MB:.0f} MB, restart then leak {(onset - restart) / HOUR:.1f} h later")


def slow_leak(seed: int, days: float) -> Trace:
    """400 KB/h on a 60 MB dictionary."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    base, rate = 60 * MB, 400_000.0
    onset = (days - 2) * DAY + rng.uniform(0, 12) * HOUR
    tables = table_walk(rng, len(times), 390, 370, 400, 0.7)
    values = _dictionary_leak(rng, times, base, onset, rate, tables)
    limit = 1024 * MIB
    return trace(f"slow-leak/{seed}", DICTIONARY, times, values, tables, onset=onset, rate_bytes_per_hour=rate,
                 limit_bytes=limit, expected_reason="unexplained", notes="400 KB/h on 60 MB",
                 extra={"level_at": lambda t: base + 390 * BYTES_PER_TABLE + max(0.0, t - onset) * rate / HOUR,
                        "tau": WANDER_TAU})


def rss_leak(seed: int, days: float) -> Trace:
    """30 MB/h on an 8 GB mysqld wandering +-50 MB, towards 16 GiB of RAM."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    level, rate = 8 * 1024 * MIB, 30 * MB
    onset = (days - 2) * DAY + rng.uniform(0, 12) * HOUR
    tau = sweep(seed, 1800, 7200)
    wander = mean_reverting(rng, times, tau, 25 * MB)
    values = [level + w + max(0.0, t - onset) * rate / HOUR for t, w in zip(times, wander)]
    return trace(f"rss-leak/{seed}", RSS, times, values, onset=onset, rate_bytes_per_hour=rate,
                 limit_bytes=16384 * MIB, expected_reason="unexplained", notes="8 GiB +- 50 MB, +30 MB/h",
                 extra={"level_at": lambda t: level + max(0.0, t - onset) * rate / HOUR, "tau": tau})


def table_growth(seed: int, days: float) -> Trace:
    """More and more tables cached (a large table_definition_cache): reason tables."""
    rng = random.Random(seed)
    times = grid(days, 30.0)
    per_hour = sweep(seed, 200, 800)
    base = sweep(seed, 50 * MB, 300 * MB, offset=2)
    onset = (days - 1) * DAY + rng.uniform(0, 6) * HOUR
    tables = [float(math.floor(500 + min(max(0.0, t - onset), 12 * HOUR) * per_hour / HOUR + rng.gauss(0, 2)))
              for t in times]
    wander = mean_reverting(rng, times, 1800, 0.0002 * base)
    values = [base + n * BYTES_PER_TABLE + w for n, w in zip(tables, wander)]
    return trace(f"table-growth/{seed}", DICTIONARY, times, values, tables, onset=onset,
                 rate_bytes_per_hour=per_hour * BYTES_PER_TABLE, expected_reason="tables",
                 notes=f"{per_hour:.0f} tables/h on {base / MB:.0f} MB")


FAMILIES: tuple[Family, ...] = (
    Family("steady-white", False, steady_white),
    Family("mean-reverting", False, steady_mean_reverting),
    Family("daily-cycle", False, daily_cycle),
    Family("ahi-daily", False, ahi_daily),
    Family("steps-up", False, steps_up),
    Family("restart-warmup", False, restart_warmups),
    Family("restart-two-stage", False, restart_two_stage_warmups),
    Family("gaps", False, sampling_gaps),
    Family("churn-flush", False, churn_and_flush),
    Family("seed-leak", True, seed_leak, days=5.0, detect_within=1800),
    Family("seed-leak-after-restart", True, seed_leak_after_restart, days=4.0, detect_within=1800),
    Family("slow-leak", True, slow_leak, days=4.0, detect_within=24 * 3600),
    Family("rss-leak", True, rss_leak, days=4.0, detect_within=6 * 3600),
    Family("table-growth", True, table_growth, days=3.0, detect_within=2 * 3600),
)
