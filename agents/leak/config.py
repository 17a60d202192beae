"""Leak detector settings: which series to watch, how to judge them, where to keep history.

Loaded from the ``leak:`` section of the agent's YAML config; every key has a default,
so an absent section gives a detector that works untouched.  A series' settings are the
built-in ones of that catalog series (DEFAULT_SERIES), overlaid by the section's
``defaults`` block, overlaid by the series' own entry.  A ``series`` list replaces the
default list of watched series.

```yaml
leak:
  state_file: /var/lib/mysql-snmp/leak-state.json
  windows_seconds: [900, 1800, 7200, 21600]
  series:
    - name: innodb_mem_dictionary_bytes
      explained_by: status_open_table_definitions
      min_rate_bytes_per_hour: 524288
    - name: perf_schema_memory_bytes          # a labelled catalog series:
      labels: {event_name: "memory/innodb/*"}  # one watched series per matching label set
```
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from ..config.names import did_you_mean

DEFAULT_STATE_FILE = "/var/lib/mysql-snmp/leak-state.json"

MIB = 1024 * 1024

# The memory limit of mysqld: the smallest of these present in the snapshot.
PROCESS_LIMIT_SERIES = ("process_cgroup_memory_limit_bytes", "host_memory_total_bytes")
PROCESS_RSS_SERIES = "process_resident_memory_bytes"


class LeakConfigError(ValueError):
    pass


@dataclass(frozen=True)
class SeriesConfig:
    """How one watched series is judged.  Rates are bytes per hour, sizes bytes."""

    name: str
    labels: tuple[tuple[str, str], ...] = ()  # label name -> fnmatch pattern
    # Growth below this rate is never a leak, however significant (allocator churn, caches)...
    min_rate_bytes_per_hour: float = 1 * MIB
    # ...unless it is this share of the series' level per hour: the lower of the two is the
    # minimum (0.4 %/h: a cache doubling in ten days; a 20 MB dictionary growing 200 KB/h
    # doubles in four, far below any absolute rate worth watching on a large one).  At 0.25 %/h
    # the wander of 80 MB dictionaries after a deployment passed for leaks (2 of 40 seeds of
    # tests/leak/test_series_detector.py's deployment case).
    relative_min_rate_per_hour: float = 0.004
    # The level must exceed the baseline's maximum by at least this much.
    min_growth_bytes: float = 256 * 1024
    # Smallest meaningful change: InnoDB heaps grow in blocks of about 8 KiB.
    resolution_bytes: float = 8192
    # Catalog series whose growth explains this one's (reason "tables").
    explained_by: str | None = None
    # Growth per added explanatory unit above this is not explained by it (bytes per table:
    # 2,248 measured on MariaDB 10.11; a slow leak while a few tables open must not pass
    # for dozens of KiB per table).
    max_bytes_per_unit: float = 16 * 1024
    # Fixed limit for the forecast; None: forecast against mysqld's memory headroom.
    limit_bytes: float | None = None
    # Catalog series giving the limit (smallest present wins), for the process itself.
    limit_series: tuple[str, ...] = ()

    def min_rate_at(self, level: float | None) -> float:
        """Bytes per hour below which growth is no leak, at this level of the series."""
        if level is None or level <= 0:
            return self.min_rate_bytes_per_hour
        return min(self.min_rate_bytes_per_hour, self.relative_min_rate_per_hour * level)

    @property
    def is_process_memory(self) -> bool:
        return bool(self.limit_series)


@dataclass(frozen=True)
class LeakConfig:
    state_file: str | None = DEFAULT_STATE_FILE
    # Samples are grouped into bins (median per bin) before trend estimation.
    bin_seconds: float = 60.0
    # Trend windows, shortest first: short ones catch fast leaks, long ones slow leaks.
    windows_seconds: tuple[float, ...] = (900.0, 1800.0, 7200.0, 21600.0)
    # Points per window after grouping bins (keeps the O(n^2) statistics cheap).
    window_points: int = 30
    # A window is judged only when this share of its points holds data.
    min_coverage: float = 0.6
    # Mann-Kendall Z above which growth is significant (3.09: p < 0.001 one-sided).
    significance_z: float = 3.09
    # Increments larger than this many times the median increment (or the resolution) are steps.
    step_factor: float = 8.0
    # Baseline: the history the current level is compared with.
    baseline_seconds: float = 7 * 86400.0
    baseline_bucket_seconds: float = 900.0
    # With less history than this a daily cycle's first rise cannot be told from a leak:
    # the detector says ``suspect`` at most.
    mature_baseline_seconds: float = 86400.0
    # A leak clears the baseline's high-water mark, and grows within its window, by this
    # many times the series' own noise scale (measured on the baseline); never by less
    # than the series' min_growth_bytes.
    noise_margin_factor: float = 3.0
    # The baseline must span at least this long (and at least the window) to count.
    min_baseline_seconds: float = 1800.0
    # Hysteresis (the detector evaluates once per completed bin).
    confirm_evaluations: int = 3
    suspect_clear_seconds: float = 900.0
    # A leak whose growth stopped (agents/leak/leak_end.py) ends leaking only once the level has
    # set no new high for this long; a fall back to the old level ends it at once.
    leaking_clear_seconds: float = 1800.0
    # A fall to below (1 - this) of the level within two minutes is a restart: the climb after
    # it is judged against the fitted warm-up curve (agents/leak/warmup.py).
    restart_drop_share: float = 0.5
    # A gap longer than this in a series' samples restarts its trend windows.
    max_gap_seconds: float = 3600.0
    max_series: int = 32
    save_every_seconds: float = 60.0
    series: tuple[SeriesConfig, ...] = ()

    @property
    def longest_window(self) -> float:
        return max(self.windows_seconds)


DEFAULT_SERIES: tuple[dict[str, Any], ...] = (
    # "Dictionary memory allocated" (InnoDB status) / Innodb_mem_dictionary.
    # The minimum rates are floors: what keeps a leak from noise is the margin tied to the
    # series' own noise (LeakConfig.noise_margin_factor).
    {"name": "innodb_mem_dictionary_bytes", "explained_by": "status_open_table_definitions",
     "min_rate_bytes_per_hour": 256 * 1024},
    # Percona's "Dictionary cache" line (Internal hash tables block), where the seed leak showed.
    {"name": "innodb_mem_dictionary_cache_bytes", "explained_by": "status_open_table_definitions",
     "min_rate_bytes_per_hour": 256 * 1024},
    {"name": "innodb_mem_adaptive_hash_index_bytes", "min_rate_bytes_per_hour": 4 * MIB,
     "min_growth_bytes": 4 * MIB, "resolution_bytes": 16384},
    {"name": "innodb_mem_total_allocated_bytes", "min_rate_bytes_per_hour": 8 * MIB,
     "min_growth_bytes": 8 * MIB, "resolution_bytes": 65536},
    # The same quantities where the status text lacks those lines (MariaDB 10.5+, MySQL 8):
    # what the legacy objects myAdaptiveHashMemory and myTotalMemAlloc serve there, so the
    # OpenNMS InnoDB memory report has a leak state beside each size.
    {"name": "status_innodb_mem_adaptive_hash", "min_rate_bytes_per_hour": 4 * MIB,
     "min_growth_bytes": 4 * MIB, "resolution_bytes": 16384},
    {"name": "innodb_mem_total_large_allocated_bytes", "min_rate_bytes_per_hour": 8 * MIB,
     "min_growth_bytes": 8 * MIB, "resolution_bytes": 65536},
    # performance_schema memory instruments (MariaDB counts the dictionary under mem0mem).
    {"name": "perf_schema_memory_bytes", "labels": {"event_name": "memory/innodb/*"},
     "explained_by": "status_open_table_definitions", "min_rate_bytes_per_hour": 1 * MIB},
    {"name": PROCESS_RSS_SERIES, "min_rate_bytes_per_hour": 16 * MIB, "min_growth_bytes": 64 * MIB,
     "resolution_bytes": 1 * MIB, "limit_series": list(PROCESS_LIMIT_SERIES)},
)

_SERIES_FIELDS = {f.name for f in dataclasses.fields(SeriesConfig)}
_TOP_FIELDS = {f.name for f in dataclasses.fields(LeakConfig)} - {"series"}


def _unknown_keys(unknown: set, known: set) -> str:
    """``unknown keys ['windows'] (did you mean windows_seconds?); known: ...``: one line."""
    keys = sorted(unknown, key=str)
    hints = "".join(did_you_mean(str(key), known) for key in keys)
    return f"unknown keys {keys}{hints}; known: {', '.join(sorted(known))}"


def _builtin(name: Any) -> Mapping[str, Any]:
    return next((raw for raw in DEFAULT_SERIES if raw["name"] == name), {})


def _series(raw: Mapping[str, Any], defaults: Mapping[str, Any], where: str) -> SeriesConfig:
    # built-in settings of a known series < the section's defaults block < the entry itself
    merged = {**_builtin(raw.get("name")), **defaults, **raw}
    unknown = set(merged) - _SERIES_FIELDS
    if unknown:
        raise LeakConfigError(f"{where}: {_unknown_keys(unknown, _SERIES_FIELDS)}")
    if not merged.get("name"):
        raise LeakConfigError(f"{where}: a series needs a name")
    labels = merged.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise LeakConfigError(f"{where}: labels must be a mapping of label name to pattern")
    merged["labels"] = tuple(sorted((str(k), str(v)) for k, v in labels.items()))
    merged["limit_series"] = tuple(merged.get("limit_series") or ())
    for key in ("min_rate_bytes_per_hour", "relative_min_rate_per_hour", "min_growth_bytes", "resolution_bytes",
                "max_bytes_per_unit"):
        merged[key] = _positive(merged.get(key, getattr(SeriesConfig, key)), f"{where}.{key}")
    if merged.get("limit_bytes") is not None:
        merged["limit_bytes"] = _positive(merged["limit_bytes"], f"{where}.limit_bytes")
    return SeriesConfig(**merged)


def _positive(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LeakConfigError(f"{where}: expected a number, got {value!r}") from None
    if not number > 0:
        raise LeakConfigError(f"{where}: must be positive, got {value!r}")
    return number


def load_leak_config(section: Mapping[str, Any] | None) -> LeakConfig:
    """Build the config from the YAML ``leak:`` section (None or {} gives the defaults)."""
    section = dict(section or {})
    defaults = section.pop("defaults", None) or {}
    series_raw = section.pop("series", None)
    unknown = set(section) - _TOP_FIELDS
    if unknown:
        raise LeakConfigError(f"leak: {_unknown_keys(unknown, _TOP_FIELDS | {'defaults', 'series'})}")
    top: dict[str, Any] = {}
    for key, value in section.items():
        if key == "state_file":
            top[key] = None if value in (None, "", False) else str(value)
        elif key == "windows_seconds":
            windows = tuple(sorted(_positive(v, f"leak.windows_seconds") for v in value or ()))
            if not windows:
                raise LeakConfigError("leak.windows_seconds: needs at least one window")
            top[key] = windows
        elif key in ("window_points", "confirm_evaluations", "max_series"):
            top[key] = int(_positive(value, f"leak.{key}"))
        else:
            top[key] = _positive(value, f"leak.{key}")
    if top.get("restart_drop_share", 0.5) >= 1:
        raise LeakConfigError("leak.restart_drop_share: a share of the level, below 1")
    if top.get("window_points", 30) < 5:
        raise LeakConfigError("leak.window_points: at least 5 points per window")
    entries = DEFAULT_SERIES if series_raw is None else series_raw
    if not isinstance(entries, (list, tuple)):
        raise LeakConfigError("leak.series: must be a list")
    top["series"] = tuple(
        _series(raw, defaults, f"leak.series[{i}]") for i, raw in enumerate(entries)
    )
    return LeakConfig(**top)


# Names people use for the watched series (the wording, SHOW STATUS variables)
# -> the catalog series whose settings apply.
SERIES_ALIASES = {
    "innodb_dictionary_memory_bytes": "innodb_mem_dictionary_bytes",
    "status_innodb_mem_dictionary": "innodb_mem_dictionary_bytes",
    "innodb_dictionary_cache_bytes": "innodb_mem_dictionary_cache_bytes",
    "innodb_adaptive_hash_index_memory_bytes": "innodb_mem_adaptive_hash_index_bytes",
    "status_innodb_mem_adaptive_hash": "innodb_mem_adaptive_hash_index_bytes",
    "innodb_total_memory_bytes": "innodb_mem_total_allocated_bytes",
    "process_rss_bytes": PROCESS_RSS_SERIES,
}


def canonical_series_name(name: str) -> str:
    base = name.split("{", 1)[0]
    return SERIES_ALIASES.get(base, base)


def is_known_series(name: str) -> bool:
    return any(raw["name"] == canonical_series_name(name) for raw in DEFAULT_SERIES)


def series_config(name: str, **overrides: Any) -> SeriesConfig:
    """The default settings of a catalog series (those of DEFAULT_SERIES when listed there,
    generic ones otherwise); ``name`` may be an alias or carry labels (``name{k=v}``)."""
    canonical = canonical_series_name(name)
    for raw in DEFAULT_SERIES:
        if raw["name"] == canonical:
            return _series({**raw, "labels": {}, **overrides}, {}, name)
    return _series({"name": canonical, **overrides}, {}, name)


__all__ = [
    "DEFAULT_STATE_FILE",
    "LeakConfig",
    "LeakConfigError",
    "SeriesConfig",
    "load_leak_config",
    "canonical_series_name",
    "is_known_series",
    "series_config",
]
