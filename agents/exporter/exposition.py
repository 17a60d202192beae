"""One scrape as metric families: mysql_up, compatible families, catalog families, self metrics.

Built fresh for every request from one finished collection (plus the target's
counters); nothing here mutates shared state except through the target's interner.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import replace
from types import MappingProxyType
from typing import Callable, Mapping

from ..catalog import Catalog
from .collectors import ALWAYS_EXPORTED_KINDS, CompatOptions
from .encoding import FamilyInterner
from .families import catalog_families, exposed_names
from .metric_types import CounterMetricFamily, GaugeMetricFamily, Metric
from ..snapshot import Snapshot
from .targets import (
    ScrapeOutcome,
    TargetCounters,
    absent_here,
    collector_ok,
    collector_statuses,
    not_local,
)

log = logging.getLogger(__name__)


def _collection_families(outcome: ScrapeOutcome, counters: TargetCounters, up: float) -> list[Metric]:
    """The self metrics that change only with the collection and the error counters."""
    mysql_up = GaugeMetricFamily("mysql_up", "1 if the server answered the last collection, 0 if it could not be reached.")
    mysql_up.add_metric([], up)
    success = GaugeMetricFamily("mysql_exporter_collector_success", "1 if the collector's statements ran in the last collection, 0 if one failed.",
                                labels=["collector"])
    duration = GaugeMetricFamily("mysql_exporter_collector_duration_seconds", "Seconds the collector's statements took in the last collection.",
                                 labels=["collector"])
    snapshot = outcome.record.snapshot if outcome.record else None
    any_failed = snapshot is None
    for collector in outcome.collectors:
        if snapshot is not None and not_local(collector, snapshot):
            continue
        ok = snapshot is not None and collector_ok(collector, snapshot)
        any_failed = any_failed or not (ok or absent_here(collector, snapshot))
        success.add_metric([collector.label], 1.0 if ok else 0.0)
        if snapshot is not None and snapshot.up:
            seconds = sum(s.duration_seconds for s in collector_statuses(collector, snapshot))
            duration.add_metric([collector.label], seconds)

    errors = CounterMetricFamily("mysql_exporter_scrape_errors_total",
                                 "Collections in which a collector failed, by collector and reason "
                                 "(connection, privilege, timeout, deadline, unsupported, parse, error).",
                                 labels=["collector", "reason"])
    for (label, reason), count in sorted(counters.errors.items()):
        errors.add_metric([label, reason], count)
    last_success = GaugeMetricFamily("mysql_exporter_last_success_timestamp_seconds",
                                     "Unix time of the last collection in which the collector succeeded.",
                                     labels=["collector"])
    for label, stamp in sorted(counters.last_success.items()):
        last_success.add_metric([label], stamp)
    last_error = GaugeMetricFamily("mysql_exporter_last_scrape_error",
                                   "1 if any collector failed in the last collection, else 0.")
    last_error.add_metric([], 1.0 if any_failed else 0.0)
    families = [mysql_up, success, errors, last_success, last_error]
    if duration.samples:
        families.insert(2, duration)
    return families


def _scrapes_family(counters: TargetCounters) -> Metric:
    scrapes = CounterMetricFamily("mysql_exporter_scrapes_total", "Collections made for scrapes of this target.")
    scrapes.add_metric([], counters.scrapes)
    return scrapes


def _data_age_families(catalog: Catalog, counters: TargetCounters, taken: set[str]) -> list[Metric]:
    """The age of the newest values read from the server, as of this scrape (absent before the first).

    Computed here, not in the collection: a scrape served from an earlier collection
    (``--exporter.min-interval``) or while the server hangs shows how old the values are.
    """
    if counters.last_up is None:
        return []
    ages = Snapshot(target="", values={"agent_data_age_seconds": max(0.0, time.time() - counters.last_up)})
    return catalog_families(catalog, ages, {"agent"}, taken)


def scrape_families(outcome: ScrapeOutcome, counters: TargetCounters, catalog: Catalog,
                    options: CompatOptions, interner: FamilyInterner | None = None) -> list[Metric]:
    """Everything one scrape exposes.  MySQL down: mysql_up 0 and self metrics, no MySQL values."""
    return self_families(outcome, counters, catalog) + server_families(outcome, catalog, options, interner)


def self_families(outcome: ScrapeOutcome, counters: TargetCounters, catalog: Catalog) -> list[Metric]:
    """mysql_up, the exporter's own metrics and the data age: what differs from one request to the next."""
    return collection_self_families(outcome, counters) + request_self_families(counters, catalog)


def collection_self_families(outcome: ScrapeOutcome, counters: TargetCounters) -> list[Metric]:
    """mysql_up and the self metrics that change only when a collection ends or fails: the same for
    every request that gets the same collection while ``counters.version`` holds.

    A scrape whose deadline passed before any collection finished says mysql_up 0 too, even
    with the connection still open: a server that does not answer in time is not up.
    """
    record = outcome.record
    up = record is not None and record.snapshot.up
    return _collection_families(outcome, counters, 1.0 if up else 0.0)


def request_self_families(counters: TargetCounters, catalog: Catalog) -> list[Metric]:
    """The self metrics each request has its own value of: the scrape count and the data age."""
    families = [_scrapes_family(counters)]
    families.extend(_data_age_families(catalog, counters, set(_SELF_NAMES)))
    return families


# Every name the self metrics expose: the server's families never take them.
_SELF_NAMES = frozenset(
    name for family in [*_collection_families(ScrapeOutcome((), None), TargetCounters(), 0.0),
                        _scrapes_family(TargetCounters())]
    for name in exposed_names(family)) | {"mysql_exporter_collector_duration_seconds"}


def server_families(outcome: ScrapeOutcome, catalog: Catalog, options: CompatOptions,
                    interner: FamilyInterner | None = None) -> list[Metric]:
    """The MySQL values of the scrape's collection: the same for every request sharing it."""
    record = outcome.record
    if record is None or not record.snapshot.up:
        return []
    snapshot = record.snapshot
    if interner is not None:
        interner.new_scrape()
    options = replace(options, exclude_thread_id=record.own_thread_id)
    families: list[Metric] = []
    # The data age is the scrape's own (self_families), never the collection's.
    taken: set[str] = set(_SELF_NAMES) | {catalog.by_name("agent_data_age_seconds").prometheus.name}
    kinds: set[str] = set(ALWAYS_EXPORTED_KINDS)
    for collector in outcome.collectors:
        kinds.update(collector.catalog_kinds)
        if collector.compat is None or not collector_ok(collector, snapshot):
            continue
        try:
            built = collector.compat(snapshot, options, interner, catalog)
        except Exception:  # a row shape we did not expect: log it, keep the other collectors
            log.exception("%s: building the %s families failed", snapshot.target, collector.label)
            continue
        for family in built:
            names = family.wire_names()
            if taken.isdisjoint(names):
                families.append(family)
                taken.update(names)
    # The every-row sources reach /metrics through their projection above, only.
    kinds.difference_update(catalog.families.rows)
    families.extend(catalog_families(catalog, snapshot, kinds, taken, interner,
                                     _removing_prefix(options.memory_events_remove_prefix)))
    return families


@functools.lru_cache(maxsize=8)
def _removing_prefix(prefix: str) -> Mapping[str, Callable[[str], str]] | None:
    """The relabel of --collect.perf_schema.memory_events.remove_prefix: one object per prefix, so
    the interner finds unchanged labelled families again (agents/exporter/families.py)."""
    if not prefix:
        return None
    return MappingProxyType({"event_name": lambda name: name.removeprefix(prefix)})
