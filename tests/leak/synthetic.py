"""Labelled synthetic memory traces for the leak detector's tests and benchmark.

Each trace is what an agent sampling every 15 s would see, with the truth attached:
when the leak starts (None for servers that do not leak), its rate, and the limit the
forecast should count towards.  Shapes follow the cases the detector must tell apart:

- the seed leak: a dictionary cache of a few hundred MB that a RENAME TABLE every 10 s
  grows by ~16 KB (two strdup'd names), in the 8112-byte blocks of an InnoDB heap;
- slower and faster leaks, an RSS leak towards physical memory;
- steady servers, daily load cycles, table churn inside table_definition_cache, adaptive
  hash index warm-up after restarts, one-off steps (schema deployments);
- table growth: a dictionary that grows because more tables are cached (reason ``tables``).

Deterministic for a given seed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable

DAY = 86400.0
HOUR = 3600.0
MIB = 1024 * 1024
INNODB_BLOCK = 8112  # mem_heap block growth of the table heap, in bytes
BYTES_PER_TABLE = 2248  # MariaDB 10.11, measured (../shared dictionary-growth-measurements.json)


@dataclass
class Trace:
    name: str
    series: str
    times: list[float]
    values: list[float]
    aux: list[float] | None = None  # Open_table_definitions, when the trace has it
    onset: float | None = None  # when the leak (or table growth) starts; None: never
    rate_bytes_per_hour: float | None = None
    limit_bytes: float | None = None
    expected_reason: str | None = None
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def leaks(self) -> bool:
        return self.onset is not None

    @property
    def days(self) -> float:
        return (self.times[-1] - self.times[0]) / DAY

    def true_time_to_limit(self, t: float) -> float | None:
        """Seconds from t until the noiseless leak reaches the limit."""
        if self.limit_bytes is None or not self.rate_bytes_per_hour or self.onset is None or t < self.onset:
            return None
        if "time_to_limit" in self.extra:  # a leak whose rate changes
            return self.extra["time_to_limit"](t)
        level = self.extra["level_at"](t)
        return (self.limit_bytes - level) / (self.rate_bytes_per_hour / HOUR)

    def rows(self):
        for i, t in enumerate(self.times):
            yield t, self.values[i], (self.aux[i] if self.aux is not None else None)


def _grid(days: float, step: float = 15.0) -> list[float]:
    return [i * step for i in range(int(days * DAY / step) + 1)]


def _bounded_walk(rng: random.Random, n: int, start: float, low: float, high: float, step: float) -> list[float]:
    """A random walk reflected inside [low, high], rounded to whole units (tables)."""
    out, x = [], start
    for _ in range(n):
        x += rng.gauss(0.0, step)
        if x < low:
            x = 2 * low - x
        if x > high:
            x = 2 * high - x
        out.append(float(round(min(max(x, low), high))))
    return out


def _dictionary(
    rng: random.Random,
    times: list[float],
    base: float,
    tables: list[float],
    leak: Callable[[float], float],
    noise: float = 4096.0,
) -> list[float]:
    """Dictionary bytes: base + cached tables + leaked heap blocks + small allocator noise."""
    values = []
    for t, n in zip(times, tables):
        leaked = leak(t)
        blocks = math.ceil(leaked / INNODB_BLOCK) * INNODB_BLOCK if leaked > 0 else 0
        values.append(float(round(base + n * BYTES_PER_TABLE + blocks + rng.gauss(0.0, noise))))
    return values


def dictionary_leak(
    rate_bytes_per_hour: float = 16 * 1024 * 360,  # ~16 KB per 10 s: the seed's RENAME TABLE daemon
    days: float = 3.0,
    onset: float = 2 * DAY,
    base: float = 300 * MIB,
    seed: int = 1,
    name: str = "seed-leak",
    noise: float = 4096.0,
    sample_seconds: float = 15.0,
) -> Trace:
    rng = random.Random(seed)
    times = _grid(days, sample_seconds)
    tables = _bounded_walk(rng, len(times), 390, 370, 400, 0.7)

    def leaked(t: float) -> float:
        return max(0.0, t - onset) * rate_bytes_per_hour / HOUR

    values = _dictionary(rng, times, base, tables, leaked, noise)
    limit = 2048 * MIB
    return Trace(
        name, "innodb_mem_dictionary_bytes", times, values, tables, onset, rate_bytes_per_hour,
        limit_bytes=limit, expected_reason="unexplained",
        notes=f"dictionary {base / MIB:.0f} MiB, leak {rate_bytes_per_hour / MIB:.2f} MiB/h from day {onset / DAY:g}",
        extra={"level_at": lambda t: base + 390 * BYTES_PER_TABLE + leaked(t)},
    )


def rss_leak(
    rate_bytes_per_hour: float = 64 * MIB, days: float = 4.0, onset: float = 2 * DAY, seed: int = 2
) -> Trace:
    """mysqld RSS of 4 GiB with 8 MiB noise, leaking towards 16 GiB of physical memory."""
    rng = random.Random(seed)
    times = _grid(days)
    base = 4096 * MIB

    def level(t: float) -> float:
        return base + max(0.0, t - onset) * rate_bytes_per_hour / HOUR

    values = [float(round(level(t) + rng.gauss(0.0, 8 * MIB))) for t in times]
    return Trace(
        "rss-linear-leak", "process_resident_memory_bytes", times, values, None, onset, rate_bytes_per_hour,
        limit_bytes=16384 * MIB, expected_reason="unexplained",
        notes="RSS 4 GiB, 8 MiB noise, +64 MiB/h from day 2, limit 16 GiB",
        extra={"level_at": level},
    )


def table_growth(days: float = 2.0, onset: float = 1 * DAY, tables_per_hour: float = 400, hours: float = 8,
                 seed: int = 3) -> Trace:
    """More tables cached (table_definition_cache 10000): dictionary grows 2,248 bytes per table."""
    rng = random.Random(seed)
    times = _grid(days)
    tables = []
    for t in times:
        grown = min(max(0.0, t - onset), hours * HOUR) * tables_per_hour / HOUR
        tables.append(float(math.floor(500 + grown + rng.gauss(0.0, 2.0))))
    values = _dictionary(rng, times, 200 * MIB, tables, lambda t: 0.0)
    return Trace(
        "table-growth", "innodb_mem_dictionary_bytes", times, values, tables, onset,
        tables_per_hour * BYTES_PER_TABLE, expected_reason="tables",
        notes=f"{tables_per_hour:g} more cached tables per hour for {hours:g} h (tdc 10000)",
    )


def steady_dictionary(days: float = 30.0, seed: int = 4) -> Trace:
    rng = random.Random(seed)
    times = _grid(days)
    tables = _bounded_walk(rng, len(times), 390, 370, 400, 0.7)
    values = _dictionary(rng, times, 300 * MIB, tables, lambda t: 0.0, noise=16384.0)
    return Trace("steady-dictionary", "innodb_mem_dictionary_bytes", times, values, tables,
                 notes="tables wander in 370..400, 16 KiB noise")


def steady_rss(days: float = 30.0, seed: int = 5) -> Trace:
    rng = random.Random(seed)
    times = _grid(days)
    values = []
    for _ in times:
        spike = rng.random() < 0.002  # a big sort or temp table now and then
        values.append(float(round(4096 * MIB + rng.gauss(0.0, 8 * MIB) + (rng.uniform(50, 300) * MIB if spike else 0))))
    return Trace("steady-rss", "process_resident_memory_bytes", times, values,
                 notes="RSS 4 GiB, 8 MiB noise, rare 50-300 MiB spikes")


def daily_cycle_rss(days: float = 30.0, seed: int = 6) -> Trace:
    """Connections by day, fewer by night: RSS swings 600 MiB, each day's amplitude differs by up to 10%."""
    rng = random.Random(seed)
    times = _grid(days)
    amplitudes = [300 * MIB * rng.uniform(0.9, 1.1) for _ in range(int(days) + 2)]
    phase = rng.uniform(0, 2 * math.pi)
    values = []
    for t in times:
        day = int(t // DAY)
        values.append(float(round(4096 * MIB + amplitudes[day] * math.sin(2 * math.pi * t / DAY + phase)
                                  + rng.gauss(0.0, 8 * MIB))))
    return Trace("daily-cycle-rss", "process_resident_memory_bytes", times, values,
                 notes="RSS 4 GiB +- 300 MiB daily (amplitude +-10% per day), 8 MiB noise")


def daily_cycle_trough_start(days: float = 30.0, seed: int = 7) -> Trace:
    """A daily cycle whose trace starts at the night's trough: the first rise has no history before it."""
    rng = random.Random(seed)
    times = _grid(days)
    values = [float(round(4096 * MIB - 300 * MIB * math.cos(2 * math.pi * t / DAY) + rng.gauss(0.0, 8 * MIB)))
              for t in times]
    return Trace("daily-cycle-from-trough", "process_resident_memory_bytes", times, values,
                 notes="RSS 4 GiB +- 300 MiB daily, starting at the trough")


def table_churn(days: float = 30.0, seed: int = 8) -> Trace:
    """Tables opened and evicted inside table_definition_cache=400: bounded, so no leak."""
    rng = random.Random(seed)
    times = _grid(days)
    tables = []
    hour_target = 200.0
    for t in times:
        if int(t) % int(HOUR) == 0:
            hour_target = rng.uniform(40, 400)
        previous = tables[-1] if tables else 200.0
        tables.append(float(round(min(400.0, max(30.0, previous + 0.02 * (hour_target - previous) + rng.gauss(0, 1.5))))))
    values = _dictionary(rng, times, 250 * MIB, tables, lambda t: 0.0)
    return Trace("table-churn", "innodb_mem_dictionary_bytes", times, values, tables,
                 notes="Open_table_definitions wanders 30..400 (tdc 400) towards an hourly random target")


def ahi_warmup(days: float = 30.0, restart_every_days: float = 3.0, seed: int = 9) -> Trace:
    """Adaptive hash index filling after each restart (saturating, tau 2 h), restarts every 3 days."""
    rng = random.Random(seed)
    times = _grid(days)
    values = []
    period = restart_every_days * DAY
    for t in times:
        since = t % period
        plateau = 600 * MIB * (1 + 0.05 * math.sin(int(t // period)))
        level = 2 * MIB + plateau * (1 - math.exp(-since / (2 * HOUR)))
        values.append(float(round(level + rng.gauss(0.0, 1 * MIB))))
    return Trace("ahi-warmup", "innodb_mem_adaptive_hash_index_bytes", times, values,
                 notes="AHI refills to ~600 MiB with tau 2 h after a restart every 3 days (first at t=0)")


def one_off_steps(days: float = 30.0, seed: int = 10) -> Trace:
    """Schema deployments: the dictionary jumps by 2-20 MiB now and then (and once down after a cleanup)."""
    rng = random.Random(seed)
    times = _grid(days)
    steps = sorted((rng.uniform(0.5, days) * DAY, rng.uniform(2, 20) * MIB) for _ in range(6))
    steps.append((days * DAY * 0.8, -15 * MIB))
    tables = _bounded_walk(rng, len(times), 390, 370, 400, 0.7)

    def offset(t: float) -> float:
        return sum(size for at, size in steps if t >= at)

    values = [v + offset(t) for t, v in zip(times, _dictionary(rng, times, 300 * MIB, tables, lambda t: 0.0))]
    return Trace("one-off-steps", "innodb_mem_dictionary_bytes", times, values, tables,
                 notes=f"{len(steps)} steps of 2..20 MiB (one -15 MiB)")


LEAK_TRACES: dict[str, Callable[[], Trace]] = {
    "seed-leak": dictionary_leak,
    "slow-leak": lambda: dictionary_leak(rate_bytes_per_hour=1 * MIB, days=4.0, name="slow-leak", seed=11),
    "fast-leak": lambda: dictionary_leak(rate_bytes_per_hour=50 * MIB, days=2.5, name="fast-leak", seed=12),
    "seed-leak-noisy-60s": lambda: dictionary_leak(days=2.5, name="seed-leak-noisy-60s", seed=13, noise=64 * 1024,
                                                   sample_seconds=60.0),
    "seed-leak-from-start": lambda: dictionary_leak(days=1.0, onset=0.0, name="seed-leak-from-start", seed=14),
    "rss-linear-leak": rss_leak,
    "table-growth": table_growth,
}

NON_LEAK_TRACES: dict[str, Callable[[], Trace]] = {
    "steady-dictionary": steady_dictionary,
    "steady-rss": steady_rss,
    "daily-cycle-rss": daily_cycle_rss,
    "daily-cycle-from-trough": daily_cycle_trough_start,
    "table-churn": table_churn,
    "ahi-warmup": ahi_warmup,
    "one-off-steps": one_off_steps,
}
