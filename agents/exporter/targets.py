"""Per-target state: one Collector (one persistent connection), shared collections, counters.

- Single-flight: scrapes of one target that arrive while a collection runs wait for
  that collection instead of starting their own, so N Prometheus replicas cost
  one set of statements.
- ``min_interval``: a scrape closer than this to the last collection is served
  that collection (same values, same timestamp) without touching MySQL.
- One collection at a time per target, on a worker of a shared, bounded pool
  (agents/exporter/collect_pool.py): 500 targets do not hold 500 threads.
- Deadline: a scrape never waits past its deadline.  The collector starts no
  source after ``deadline - grace``, and a statement still running then is
  interrupted (``KILL QUERY`` from a second connection), so a slow or hung source
  costs its own collector_success, not the whole scrape.
- Errors are counted once per collection, by collector and reason, and the
  time of each collector's last success is kept: the exporter's honest account
  of itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from concurrent.futures import Future, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .collect_pool import CollectPool, NotStarted
from .collectors import ExporterCollector
from .encoding import FamilyInterner
from .response import SharedBodies
from ..snapshot import Snapshot, SourceStatus

log = logging.getLogger(__name__)

MAX_REMEMBERED_SOURCE_SETS = 8


# --------------------------------------------------------------------------- scrape results

@dataclass
class CollectionRecord:
    """One finished collection and what the exporter made of it."""

    snapshot: Snapshot
    collectors: tuple[ExporterCollector, ...]
    finished: float  # time.monotonic()
    own_thread_id: int | None = None  # the exporter's connection, as the processlist shows it


@dataclass
class ScrapeOutcome:
    """What one HTTP scrape gets: a collection, or nothing when the deadline passed first."""

    collectors: tuple[ExporterCollector, ...]
    record: CollectionRecord | None
    cached: bool = False


@dataclass
class TargetCounters:
    scrapes: int = 0
    errors: Counter = field(default_factory=Counter)  # (collector label, reason) -> count
    last_success: dict[str, float] = field(default_factory=dict)  # collector label -> unix time
    collections: int = 0
    last_up: float | None = None  # unix time of the last collection that reached the server
    # Bumped whenever errors or last_success change: self metrics encoded for one version
    # stay right for every request until the next.
    version: int = 0

    def copy(self) -> "TargetCounters":
        return TargetCounters(self.scrapes, Counter(self.errors), dict(self.last_success), self.collections,
                              self.last_up, self.version)


def collector_statuses(collector: ExporterCollector, snapshot: Snapshot) -> list[SourceStatus]:
    return [snapshot.sources[s] for s in collector.sources if s in snapshot.sources]


def collector_ok(collector: ExporterCollector, snapshot: Snapshot) -> bool:
    statuses = collector_statuses(collector, snapshot)
    return snapshot.up and bool(statuses) and all(s.ok for s in statuses)


def not_local(collector: ExporterCollector, snapshot: Snapshot) -> bool:
    statuses = collector_statuses(collector, snapshot)
    return bool(statuses) and all(s.reason == "not_local" for s in statuses)


def absent_here(collector: ExporterCollector, snapshot: Snapshot) -> bool:
    """Every source of the collector was skipped because this server lacks its table (a plugin
    not loaded, MySQL-only tables on MariaDB): nothing failed, as mysqld_exporter treats it."""
    statuses = collector_statuses(collector, snapshot)
    return bool(statuses) and all(s.reason == "unsupported" for s in statuses)


class Target:
    """One MySQL server the exporter scrapes (the /metrics one, or a /probe target)."""

    def __init__(self, name: str, collector, *, min_interval: float = 0.0, interrupt_grace: float = 0.5,
                 may_interrupt: bool = True, observers: Sequence = (), clock: Callable[[], float] = time.monotonic,
                 remember_between_scrapes: bool = True, pool: CollectPool | None = None,
                 shared_interner: FamilyInterner | None = None):
        self.name = name
        self.collector = collector
        # Objects with observe(snapshot) / close(), e.g. the leak detector: they see each
        # collection once, in the collecting thread, and may add values to it.
        self.observers = tuple(observers)
        self.min_interval = min_interval
        self.interrupt_grace = interrupt_grace
        self.may_interrupt = may_interrupt
        self._clock = clock
        self._lock = threading.Lock()
        self._inflight: dict[frozenset[str], tuple[Future, float]] = {}
        # The last collection per set of sources, for min_interval: a few sets recur (Prometheus
        # jobs with different collect[]); any further one pushes out the least recently collected.
        self._last: OrderedDict[frozenset[str], CollectionRecord] = OrderedDict()
        # A /probe target (one of up to hundreds) keeps nothing of a scrape once it is answered:
        # no encoded body, no interned families (1.5 MB a MariaDB target); the scrapes that join a
        # collection in flight still share its body.  No target keeps a collection past its scrape
        # unless --exporter.min-interval may serve it again.
        # Collections run one at a time (the collector's one connection) on a worker of ``pool``
        # (shared by the /probe targets; a target given none has a worker of its own), so every
        # waiting scrape can give up at its own deadline.
        self._own_pool = CollectPool(1, "collect-metrics", clock) if pool is None else None
        self._lane = (pool or self._own_pool).lane()
        self.counters = TargetCounters()
        # Families and encoded bytes of values unchanged since the last scrape of this target.
        self._interner = FamilyInterner() if remember_between_scrapes else None
        self._shared_interner = shared_interner
        # The encoded MySQL part of recent collections, shared by the requests that get them,
        # and the encoded self metrics that change only with the collection and the counters.
        kept = 8 if remember_between_scrapes else 0
        self.bodies = SharedBodies(kept)
        self.heads = SharedBodies(kept)
        self._not_local_logged = False
        self.last_used = clock()

    def scrape_interner(self, scrapes: int) -> FamilyInterner | None:
        """The interner the ``scrapes``-th scrape encodes with, if any.  One shared with other
        targets pays at once (they filled it).  The target's own, or one for this scrape alone,
        pays from its second scrape: a /probe target scraped once and pushed out before its
        next scrape (more targets than MAX_PROBE_TARGETS) would only fill it."""
        if self._shared_interner is not None:
            return self._shared_interner
        if scrapes <= 1:
            return None
        return self._interner if self._interner is not None else FamilyInterner()

    def counters_now(self) -> TargetCounters:
        """A consistent copy of the counters (the collecting thread updates them)."""
        with self._lock:
            return self.counters.copy()

    def close(self) -> None:
        # A collection already running stops reading now (a server may stream for ever), and is
        # waited for: its observers (the leak detector) must see it before they close and save
        # their history, never at the same time.
        abort = getattr(self.collector, "abort", None)
        if abort is not None:
            abort()
        self._lane.close()
        if self._own_pool is not None:
            self._own_pool.shutdown()
        self.collector.close()
        for observer in self.observers:
            observer.close()

    def scrape(self, collectors: tuple[ExporterCollector, ...], deadline: float) -> ScrapeOutcome:
        """Collect (or join / reuse a collection) for ``collectors``, waiting at most until ``deadline``."""
        sources = frozenset(s for c in collectors for s in c.sources)
        now = self._clock()
        self.last_used = now
        with self._lock:
            self.counters.scrapes += 1
            last = self._last.get(sources)
            if self.min_interval > 0 and last is not None and now - last.finished < self.min_interval:
                return ScrapeOutcome(collectors, last, cached=True)
            # Shortly before the deadline a statement still running is interrupted and no
            # further source starts, so the collector returns what it has instead of nothing.
            grace = min(self.interrupt_grace, max(0.0, deadline - now) / 4)
            inflight = self._inflight.get(sources)
            if inflight is None:
                source_deadline = deadline - grace
                future = self._lane.submit(lambda: self._collect(sources, collectors, source_deadline),
                                           source_deadline)
                self._inflight[sources] = (future, source_deadline)
                future.add_done_callback(lambda _f, key=sources: self._finished(key))
            else:
                future, source_deadline = inflight
        try:
            record = future.result(timeout=max(0.0, deadline - grace - self._clock()))
        except FutureTimeout:
            # A collection joined from a scrape with a later deadline is left alone, and one
            # still waiting for a worker has no statement to interrupt.
            if self.may_interrupt and source_deadline <= deadline - grace and future.running():
                self._interrupt_running_statement()
            try:
                record = future.result(timeout=max(0.0, deadline - self._clock()))
            except (FutureTimeout, NotStarted):
                return self._missed(collectors, "no collection finished before the scrape deadline")
        except NotStarted:
            return self._missed(collectors, "no collection worker was free before the scrape deadline "
                                            "(raise --exporter.collection-workers)")
        return ScrapeOutcome(collectors, record)

    def _missed(self, collectors: tuple[ExporterCollector, ...], why: str) -> ScrapeOutcome:
        with self._lock:
            self.counters.version += 1
            for collector in collectors:
                self.counters.errors[(collector.label, "deadline")] += 1
        log.warning("%s: %s", self.name, why)
        return ScrapeOutcome(collectors, None)

    def _interrupt_running_statement(self) -> None:
        """``KILL QUERY`` the collection's statement from a second, short-lived connection.

        A user may always kill its own threads, so this needs no extra grant.  It is
        the second of --exporter.max-open-conns' two connections, opened only here.
        """
        connection = getattr(self.collector, "connection", None)
        thread_id = getattr(connection, "thread_id", None)
        settings = getattr(self.collector, "settings", None)
        if thread_id is None or settings is None:
            return
        try:
            import pymysql

            # Bounded reads too: a frozen server accepts the TCP connection and never greets.
            kwargs = dict(settings.pymysql_kwargs(), connect_timeout=min(2.0, settings.connect_timeout),
                          read_timeout=2.0, write_timeout=2.0)
            side = pymysql.connect(**kwargs)
            try:
                with side.cursor() as cursor:
                    cursor.execute(f"KILL QUERY {int(thread_id)}")
            finally:
                side.close()
            log.warning("%s: interrupted a statement still running at the scrape deadline", self.name)
        except Exception as exc:  # the server may be gone too: the deadline still holds
            log.warning("%s: could not interrupt the running statement: %s", self.name, exc)

    def _finished(self, key: frozenset[str]) -> None:
        with self._lock:
            self._inflight.pop(key, None)

    def _collect(self, sources: frozenset[str], collectors: tuple[ExporterCollector, ...],
                 source_deadline: float) -> CollectionRecord:
        snapshot = self.collector.collect(set(sources), deadline=source_deadline)
        for observer in self.observers:
            try:
                observer.observe(snapshot)
            except Exception:  # an observer's bug must not cost the scrape
                log.exception("%s: %s failed on this collection", self.name, type(observer).__name__)
        own_thread = getattr(getattr(self.collector, "connection", None), "thread_id", None)
        record = CollectionRecord(snapshot, collectors, self._clock(), own_thread)
        self._account(record)
        if self.min_interval <= 0:
            return record  # never served again: kept, a big collection would stay in memory until the next
        with self._lock:
            self._last[sources] = record
            self._last.move_to_end(sources)
            while len(self._last) > MAX_REMEMBERED_SOURCE_SETS:
                self._last.popitem(last=False)
        return record

    def _account(self, record: CollectionRecord) -> None:
        snapshot = record.snapshot
        with self._lock:
            self.counters.collections += 1
            self.counters.version += 1
            if snapshot.up:
                self.counters.last_up = snapshot.timestamp
            for collector in record.collectors:
                if not_local(collector, snapshot):
                    self._log_not_local(collector, snapshot)
                    continue
                if collector_ok(collector, snapshot):
                    self.counters.last_success[collector.label] = snapshot.timestamp
                    continue
                statuses = collector_statuses(collector, snapshot)
                reasons = {s.reason or "error" for s in statuses if not s.ok} or {"connection"}
                for reason in reasons:
                    self.counters.errors[(collector.label, reason)] += 1

    def _log_not_local(self, collector: ExporterCollector, snapshot: Snapshot) -> None:
        if self._not_local_logged:
            return
        self._not_local_logged = True
        errors = "; ".join(sorted({s.error or "" for s in collector_statuses(collector, snapshot)}))
        log.info("%s: %s off: the exporter does not run on the database host (%s)",
                 self.name, collector.label, errors)
