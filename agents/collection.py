"""One collection: run the scrapers against one server, build a Snapshot keyed by catalog name.

``Collector`` owns one persistent ``MySQLConnection``.  It is safe to call from
several threads but serialises them: one collection at a time (the exporter and
the AgentX agent already do one at a time; the lock only makes misuse harmless).

What a snapshot promises:
- every value comes from *this* collection (nothing is carried over from the
  previous one); a value the server did not print is absent;
- each selected source has a SourceStatus: ok, duration, statements run, error
  and a reason code (privilege, timeout, connection, unsupported, parse, deadline,
  not_local, error);
- when the server goes away mid-collection the snapshot has ``up=False``, the
  error, and no server values at all (only the ``agent_*`` ones describing the
  collection), rather than half of a collection;
- a connection lost during a collection is reopened once and the source that
  lost it is run again, so one dropped connection does not cost a collection;
- a source denied for a missing grant, or running a statement this server does
  not know, is logged once and then skipped without sending anything until its
  retry time: ``disabled_retry_seconds`` after the first failure, doubling up to
  ``disabled_retry_max_seconds``, and at once whenever the connection is reopened.
  A retry runs on a fresh session (the server applies new global grants to new
  sessions only), and a source that works again says so in the log;
- while a source is denied for a missing grant, each collection first reads ``SHOW GRANTS``
  (the current user's, one cheap statement) and, when they differ from those read at the
  denial, retries every denied source at once on a new session: a GRANT is picked up at the
  next collection however long the denial lasted, and the back-off above is only the fallback
  for grant changes ``SHOW GRANTS`` does not show (a role's privileges on MySQL 8).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from .catalog import Catalog, load_catalog
from .mysql.errors import CONNECTION_ERRORS, QUERY_INTERRUPTED, MySQLUnavailable, QueryError
from .config.settings import ConnectionSettings
from .mysql.connection import MySQLConnection
from .derived import apply_derivations
from .config.names import unknown_names_message
from .config.redact import describe_exception
from .snapshot import Snapshot, SourceStatus
from .sources import (
    SCRAPER_NAMES,
    LocalScraper,
    Scraper,
    SourceResult,
    SourceUnavailable,
    default_source_names,
    scraper_classes,
)
from .sources.local_mysqld import LocalMysqld
from .sources.options import SourceOptions
from .config.version import installed_version

if TYPE_CHECKING:
    from .sources.heartbeat import HeartbeatOptions

log = logging.getLogger(__name__)


AGENT_VERSION = installed_version()

HOST_METRICS_MODES = ("auto", "on", "off")
# How long after a collection's deadline a statement may still be answering before its read is
# cut off: the exporter interrupts it (KILL QUERY) at the deadline and answers the scrape this
# much later at most; a server that keeps sending is not read on after it.
READ_OVERRUN_SECONDS = 0.5
# Sources skipped on purpose: not a collection error.
QUIET_REASONS = frozenset({"unsupported", "not_local"})
# Errors that would repeat at every collection (a missing grant, a table this server
# lacks): the source is skipped, with no statement sent, until the retry time.
PERSISTENT_REASONS = frozenset({"privilege", "unsupported"})
# A KILL QUERY this close to the deadline is the exporter's own, sent as the deadline came.
DEADLINE_SLACK = 0.25


@dataclass
class _Disabled:
    """A source switched off after an error that repeats by nature, until ``retry_at``
    or until the connection is reopened (``session`` is the one it failed on)."""

    error: str
    reason: str
    retry_at: float
    session: int


class Collector:
    def __init__(
        self,
        settings: ConnectionSettings,
        catalog: Catalog | None = None,
        sources: set[str] | frozenset[str] | tuple[str, ...] | None = None,
        *,
        statement_timeout: float = 5.0,
        lock_wait_timeout: int = 1,
        log_slow_filter: bool = False,
        heartbeat: HeartbeatOptions | None = None,
        host_metrics: str = "auto",
        disabled_retry_seconds: float = 15.0,
        disabled_retry_max_seconds: float = 900.0,
        connection: MySQLConnection | None = None,
        source_options: SourceOptions | None = None,
    ):
        if host_metrics not in HOST_METRICS_MODES:
            raise ValueError(f"host_metrics must be one of {HOST_METRICS_MODES}, not {host_metrics!r}")
        names = set(default_source_names()) if sources is None else set(sources)
        if heartbeat is not None:
            names.add("heartbeat")
        unknown = names - set(SCRAPER_NAMES)
        if unknown:
            raise ValueError(unknown_names_message("source", sorted(unknown), SCRAPER_NAMES))
        classes = scraper_classes(names)
        if host_metrics == "off":
            names -= {name for name, cls in classes.items() if issubclass(cls, LocalScraper)}
        self.settings = settings
        self.catalog = catalog if catalog is not None else load_catalog()
        self.host_metrics = host_metrics
        self.disabled_retry_seconds = disabled_retry_seconds
        self.disabled_retry_max_seconds = disabled_retry_max_seconds
        self.connection = connection or MySQLConnection(
            settings, statement_timeout=statement_timeout, lock_wait_timeout=lock_wait_timeout,
            log_slow_filter=log_slow_filter,
        )
        self.local_mysqld = LocalMysqld(settings, host_metrics)
        # Ordered as SCRAPER_MODULES: host/process read the pid_file that global_variables found.
        self.source_options = source_options or SourceOptions()
        self.scrapers: dict[str, Scraper] = {
            name: self._build(cls, heartbeat) for name, cls in classes.items() if name in names
        }
        self._disabled: dict[str, _Disabled] = {}
        # Consecutive collections in which each source was denied: sets its next retry delay.
        self._denials: dict[str, int] = {}
        # Sources whose last run failed, and why: a failure is logged when it starts or changes.
        self._failing: dict[str, str] = {}
        # What SHOW GRANTS said after the last privilege denial (a digest: its text holds the
        # password hash), None while no source is denied for a grant; a source denied in the
        # collection in progress.
        self._grants_at_denial: str | None = None
        self._denied_now = False
        # Sources of the collection in progress whose statement the server left unanswered.
        self._unanswered_sources: dict[str, str] = {}
        self._mapping_plans: dict[tuple, MappingPlan] = {}
        # Seconds each heavy source took when it last ran (a lower bound when it was cut short):
        # heavy sources run the quickest first.
        self._heavy_seconds: dict[str, float] = {}
        self._lock = threading.Lock()
        self.collections = 0
        self.collection_errors = 0

    def _build(self, cls: type[Scraper], heartbeat: HeartbeatOptions | None) -> Scraper:
        if cls.name == "heartbeat":
            return cls(heartbeat)
        if issubclass(cls, LocalScraper):
            return cls(self.local_mysqld)
        if cls.takes_options:
            return cls(self.source_options)
        return cls()

    @property
    def source_names(self) -> tuple[str, ...]:
        return tuple(self.scrapers)

    def close(self) -> None:
        with self._lock:
            self.connection.close()

    def abort(self) -> None:
        """From another thread: end the collection in progress now (its reads stop, no reconnect)."""
        self.connection.abort()

    def __enter__(self) -> "Collector":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ collection

    def collect(self, sources: set[str] | None = None, deadline: float | None = None) -> Snapshot:
        """Run the selected sources (default: all of this collector's) and return a Snapshot.

        ``deadline`` is a ``time.monotonic()`` instant: sources not started by then are
        reported with reason "deadline" (a statement already running is bounded by the
        statement timeout instead).
        """
        with self._lock:
            started = time.monotonic()
            # A statement still answering this long after the deadline is cut off, not read on.
            self.connection.read_deadline = None if deadline is None else deadline + READ_OVERRUN_SECONDS
            try:
                snapshot = self._collect(sources, deadline)
            finally:
                self.connection.read_deadline = None
            self._add_agent_values(snapshot, time.monotonic() - started)
            return snapshot

    def _add_agent_values(self, snapshot: Snapshot, duration: float) -> None:
        """The catalog's ``agent`` values that describe this collection (not the server)."""
        self.collections += 1
        failed = [s for s in snapshot.sources.values() if not s.ok and s.reason not in QUIET_REASONS]
        if not snapshot.up or failed:
            self.collection_errors += 1
        last_error = snapshot.error or next((f"{s.name}: {s.error}" for s in failed), "")
        values = {
            "mysql_up": int(snapshot.up),
            "collections": self.collections,
            "collection_errors": self.collection_errors,
            "collection_duration_seconds": duration,
            "last_collection_timestamp_seconds": snapshot.timestamp,
            "last_error": last_error,
            "version": AGENT_VERSION,
        }
        if snapshot.server is not None:
            values["server_version"] = snapshot.server.version_string
            values["server_flavour"] = snapshot.server.flavour
        map_to_catalog(self.catalog, {"agent": [SourceResult(values=values)]}, snapshot, self._mapping_plans)

    def _ordered(self, sources: set[str] | None) -> list[Scraper]:
        """The selected scrapers: the light ones in SCRAPER_MODULES order (later ones read what earlier
        ones found), then the heavy ones, quickest last time first (one not timed yet goes first: it is
        bounded by its share of the time like the others, and then known)."""
        chosen = [s for name, s in self.scrapers.items() if sources is None or name in sources]
        heavy = sorted((s for s in chosen if s.heavy), key=lambda s: self._heavy_seconds.get(s.name, 0.0))
        return [s for s in chosen if not s.heavy] + heavy

    def _heavy_budget(self, scraper: Scraper, selected: list[Scraper], index: int,
                      deadline: float | None) -> float | None:
        """Seconds ``scraper`` (heavy) may run, when less than the statement timeout: an equal share of the
        time left before the deadline among the heavy sources still to run, so a slow one costs itself, not
        those after it (the quick ones run first and leave their unused share to the slower)."""
        if deadline is None or not scraper.heavy:
            return None
        left = sum(1 for s in selected[index:] if s.heavy)
        share = (deadline - time.monotonic()) / left
        return share if share < self.connection.statement_timeout else None

    def _collect(self, sources: set[str] | None, deadline: float | None) -> Snapshot:
        selected = self._ordered(sources)
        snapshot = Snapshot(target=self.settings.target)
        now = time.monotonic()
        if any(d.retry_at <= now for d in self._disabled.values()):
            # The server applies global grants to new sessions only: retrying a statement
            # denied for lack of one needs a fresh connection.
            self.connection.close()
        try:
            server = self.connection.ensure_connected()
            if self._grants_changed_since_denial():
                # Every source disabled on the old session is retried on the new one (_skipped).
                self.connection.close()
                server = self.connection.ensure_connected()
        except QueryError as exc:
            return self._down(snapshot, selected, str(exc), exc.reason)
        snapshot.server = server
        self._unanswered_sources.clear()
        self._denied_now = False
        results: dict[str, SourceResult] = {}
        context: dict[str, object] = {}
        batch_ends = 0  # selected[:batch_ends] have been pipelined (or needed no batch)
        # Sources run while the server worked on a batch (Scraper.runs_before_answers), by name.
        ran_early: dict[str, tuple[SourceStatus, SourceResult | None]] = {}
        reopened = False
        index = 0
        try:
            while index < len(selected):
                scraper = selected[index]
                if deadline is not None and time.monotonic() >= deadline:
                    snapshot.sources[scraper.name] = SourceStatus(
                        scraper.name, ok=False, duration_seconds=0.0, error="collection deadline passed",
                        reason="deadline")
                    index += 1
                    continue
                if index >= batch_ends:
                    batch_ends = self._pipeline_run(selected, index, server)
                    if self.connection.batch_unread:
                        ran_early.update(self._run_early(selected[batch_ends:], server, context, ran_early))
                budget = self._heavy_budget(scraper, selected, index, deadline)
                self.connection.statement_limit = budget
                try:
                    early = ran_early.pop(scraper.name, None)
                    status, result = early or self._run(scraper, server, context, deadline, budget is not None)
                except MySQLUnavailable as exc:
                    lost = exc
                    if not reopened:
                        reopened = True
                        try:
                            server = snapshot.server = self._reopen(scraper, exc)
                        except QueryError as again:
                            lost = again
                        else:
                            batch_ends = index  # the rest of the run goes again, on the new session
                            continue
                    log.warning("%s: lost the server during %s: %s", self.settings.target, scraper.name, lost)
                    return self._down(Snapshot(target=snapshot.target, timestamp=snapshot.timestamp), selected,
                                      f"{self.settings.target}: {lost}", "connection")
                finally:
                    self.connection.statement_limit = None
                snapshot.sources[scraper.name] = status
                if scraper.heavy and status.statements:
                    self._heavy_seconds[scraper.name] = status.duration_seconds
                if result is not None:
                    results[scraper.name] = result
                    context.update(result.raw)
                index += 1
        finally:
            self.connection.discard_pipelined()
        self._remember_grants_at_denial()
        unanswered = self._unanswered(snapshot)
        if unanswered is not None:
            log.warning("%s: the server answered nothing in this collection: %s", self.settings.target, unanswered)
            return self._down(Snapshot(target=snapshot.target, timestamp=snapshot.timestamp), selected,
                              f"{self.settings.target}: no answer from the server: {unanswered}", "timeout")
        for result in results.values():
            snapshot.raw.update(result.raw)
        by_kind: dict[str, list[SourceResult]] = {}
        for name, result in results.items():
            kind = self.scrapers[name].catalog_kind
            if kind:
                by_kind.setdefault(kind, []).append(result)
        map_to_catalog(self.catalog, by_kind, snapshot, self._mapping_plans)
        apply_derivations(self.catalog, snapshot, results)
        snapshot.up = True
        return snapshot

    def _grants_digest(self) -> str | None:
        """A digest of the current user's SHOW GRANTS, None when they cannot be read."""
        try:
            rows = self.connection.query("SHOW GRANTS").rows
        except QueryError as exc:
            log.debug("%s: SHOW GRANTS failed: %s", self.settings.target, exc)
            return None
        return hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()

    def _waiting_for_grant(self) -> list[str]:
        """Sources denied for a grant that this session would skip without a statement."""
        now = time.monotonic()
        return [name for name, d in self._disabled.items() if d.reason == "privilege"
                and d.session == self.connection.sessions and now < d.retry_at]

    def _grants_changed_since_denial(self) -> bool:
        waiting = self._waiting_for_grant()
        if not waiting or self._grants_at_denial is None:
            return False
        current = self._grants_digest()
        if current is None or current == self._grants_at_denial:
            return False
        log.info("%s: the monitoring user's grants changed; retrying %s now", self.settings.target,
                 ", ".join(waiting))
        return True

    def _remember_grants_at_denial(self) -> None:
        if not any(d.reason == "privilege" for d in self._disabled.values()):
            self._grants_at_denial = None
        elif self._denied_now and self.connection.connected:
            self._grants_at_denial = self._grants_digest()

    def _unanswered(self, snapshot: Snapshot) -> str | None:
        """Why the server is not up although connected: a statement of this collection got no
        answer in time (the client gave up, not the server) and no other got one, even an
        error (a frozen or drowning server).  None otherwise."""
        if not self._unanswered_sources:
            return None
        if any(s.statements and s.name not in self._unanswered_sources for s in snapshot.sources.values()):
            return None
        name, error = next(iter(self._unanswered_sources.items()))
        return f"{name}: {error}"

    def _reopen(self, scraper: Scraper, lost: MySQLUnavailable):
        """One new connection within this collection, after ``scraper`` lost the old one.

        A connection the server closed (wait_timeout, a KILL, a restart behind a proxy)
        says nothing about the server: only a failure to open a new one does.
        """
        log.info("%s: connection lost during %s (%s); reconnecting", self.settings.target, scraper.name, lost)
        self.connection.discard_pipelined()
        return self.connection.ensure_connected()

    def _pipeline_run(self, selected: list[Scraper], start: int, server) -> int:
        """Send the statements of the run of pipelined sources from ``start`` in one round trip.

        A run ends at the first source that decides what to send from what it reads (or
        sends nothing): a statement that hangs then holds up its own run only.  Returns
        where the run ends.
        """
        end = start
        while end < len(selected) and selected[end].pipelined and not selected[end].heavy:
            end += 1
        statements = [statement for scraper in selected[start:end] if self._skipped(scraper, server) is None
                      for statement in scraper.statements(server)]
        self.connection.pipeline(statements)
        return max(end, start + 1)

    def _run_early(self, later: list[Scraper], server, context, ran: dict) -> dict:
        """Run the sources of ``later`` that need no answer (psutil's reading of the host and of mysqld)
        while the server works on the batch just sent: their time then costs the collection nothing."""
        return {scraper.name: self._run(scraper, server, context) for scraper in later
                if scraper.name not in ran and scraper.runs_before_answers()}

    def _down(self, snapshot: Snapshot, selected: list[Scraper], error: str, reason: str) -> Snapshot:
        snapshot.up = False
        snapshot.error = error
        for scraper in selected:
            snapshot.sources[scraper.name] = SourceStatus(
                scraper.name, ok=False, duration_seconds=0.0, error=error, reason=reason
            )
        return snapshot

    def _skipped(self, scraper: Scraper, server) -> SourceStatus | None:
        """The status of a source that sends nothing this time (disabled, or unsupported here); else None."""
        name = scraper.name
        disabled = self._disabled.get(name)
        if disabled is not None:
            same_session = disabled.session == self.connection.sessions
            if same_session and time.monotonic() < disabled.retry_at:
                return SourceStatus(name, ok=False, duration_seconds=0.0, error=disabled.error,
                                    reason=disabled.reason)
            del self._disabled[name]
        reason = scraper.unsupported_reason(server)
        if reason:
            return SourceStatus(name, ok=False, duration_seconds=0.0, error=reason, reason="unsupported")
        return None

    def _run(self, scraper: Scraper, server, context, deadline: float | None = None,
             cut_by_deadline: bool = False) -> tuple[SourceStatus, SourceResult | None]:
        """Run one source.  ``cut_by_deadline``: its statement limit is its share of the time before
        ``deadline``, so running out of it is the deadline's doing, not the statement timeout's."""
        skipped = self._skipped(scraper, server)
        if skipped is not None:
            return skipped, None
        name = scraper.name
        statements_before = self.connection.statements
        started = time.monotonic()

        def status(ok: bool, error: str | None = None, reason: str | None = None) -> SourceStatus:
            return SourceStatus(name, ok=ok, duration_seconds=time.monotonic() - started, error=error,
                                reason=reason, statements=self.connection.statements - statements_before)

        try:
            result = scraper.collect(self.connection, server, context)
        except MySQLUnavailable:
            raise
        except SourceUnavailable as exc:
            return status(False, str(exc), "not_local" if isinstance(scraper, LocalScraper) else "unsupported"), None
        except QueryError as exc:
            if exc.reason == "timeout" and exc.code in CONNECTION_ERRORS:  # our read timeout, not the server's
                self._unanswered_sources[name] = str(exc)
            if exc.reason in PERSISTENT_REASONS:
                error = self._disable(scraper, server, exc)
                return status(False, error, exc.reason), None
            reason = failure_reason(exc, deadline, cut_by_deadline)
            log.log(self._failure_level(name, reason), "%s: %s failed (%s): %s",
                    self.settings.target, name, exc.statement, exc)
            return status(False, str(exc), reason), None
        except Exception as exc:  # a parser refusing what the server printed: count it, keep going
            log.log(self._failure_level(name, "parse"), "%s: %s: could not parse the server's answer: %s",
                    self.settings.target, name, exc)
            log.debug("parse failure in %s", name, exc_info=True)
            return status(False, describe_exception(exc), "parse"), None
        self._denials.pop(name, None)
        if self._failing.pop(name, None):
            log.warning("%s: source %s works again", self.settings.target, name)
        return status(True), result

    def _failure_level(self, name: str, reason: str) -> int:
        """WARNING when the source starts failing or fails for another reason, DEBUG when it repeats:
        a heartbeat table held by a lock must not log the same line at every collection."""
        repeated = self._failing.get(name) == reason
        self._failing[name] = reason
        return logging.DEBUG if repeated else logging.WARNING

    def _disable(self, scraper: Scraper, server, exc: QueryError) -> str:
        error = f"{exc.statement}: {exc}"
        if exc.reason == "privilege":
            error += f" -- grant {scraper.privilege_hint(server, exc.statement or '')} to the monitoring user"
        denials = self._denials.get(scraper.name, 0) + 1
        self._denials[scraper.name] = denials
        self._denied_now = self._denied_now or exc.reason == "privilege"
        self._failing[scraper.name] = exc.reason
        delay = min(self.disabled_retry_max_seconds, self.disabled_retry_seconds * 2 ** (denials - 1))
        self._disabled[scraper.name] = _Disabled(error, exc.reason, time.monotonic() + delay,
                                                 self.connection.sessions)
        if denials == 1:
            # Logged once per outage: the source is skipped (no statement sent) until its retry.  A table
            # the server lacks (a plugin not loaded, for a collector on by default) is no fault to warn of.
            log.log(logging.INFO if exc.reason == "unsupported" else logging.WARNING,
                    "%s: source %s disabled: %s (retried on reconnect and after %.0fs, backing off to %.0fs)",
                    self.settings.target, scraper.name, error, delay, self.disabled_retry_max_seconds)
        else:
            log.debug("%s: source %s still failing, next retry in %.0fs", self.settings.target, scraper.name, delay)
        return error


def failure_reason(exc: QueryError, deadline: float | None, cut_by_deadline: bool) -> str:
    """The reason a failed statement is counted under: "deadline" when the scrape deadline stopped it
    (its limit was its share of the time left, or the exporter killed it as the deadline came),
    otherwise the reason its error code gives."""
    stopped = exc.reason == "timeout" or exc.code == QUERY_INTERRUPTED
    if stopped and cut_by_deadline:
        return "deadline"
    if exc.code == QUERY_INTERRUPTED and deadline is not None and time.monotonic() >= deadline - DEADLINE_SLACK:
        return "deadline"
    return exc.reason


# Where each catalog value is found in a kind's results: runs of scalar values from one result (its
# index, their catalog names, their keys there: copied in one C pass), in catalog order, then the
# labelled ones as (catalog name, result index, key).  Keyed by the kind and the names the results hold.
MappingPlan = tuple[tuple[tuple[int, tuple[str, ...], tuple[str, ...]], ...], tuple[tuple[str, int, str], ...]]


def map_to_catalog(catalog: Catalog, results_by_kind: Mapping[str, Sequence[SourceResult]], snapshot: Snapshot,
                   plans: dict[tuple, MappingPlan] | None = None) -> None:
    """Copy each value a source produced under its catalog name.

    A catalog entry says where its value comes from: ``source: {from: KIND, key: KEY}``.
    A source result may hold the value under the catalog name itself (parsers that
    already speak catalog names) or under KEY (a variable name as the server prints
    it, a parser field); KEY is also tried case-insensitively, because servers
    disagree on the case of some variable names (``Innodb_`` vs ``innodb_``).
    Labelled entries read ``series``, scalar entries ``values``; the first result of
    the kind that holds the value wins.

    ``plans`` (kept by the caller across collections) remembers where each value was
    found for the same printed names: a server prints the same names every time, and
    following a plan costs a fifth of searching.
    """
    for kind, results in results_by_kind.items():
        key = (kind, tuple(tuple(r.values) for r in results), tuple(tuple(r.series) for r in results))
        plan = plans.get(key) if plans is not None else None
        if plan is None:
            plan = _plan(catalog, kind, results)
            if plans is not None:
                if len(plans) >= 64:  # names that keep changing (a source's bug): stay bounded
                    plans.clear()
                plans[key] = plan
        scalars, labelled = plan
        for index, names, keys in scalars:
            snapshot.values.update(zip(names, map(results[index].values.__getitem__, keys)))
        for name, index, found in labelled:
            snapshot.series[name] = dict(results[index].series[found])


def _plan(catalog: Catalog, kind: str, results: Sequence[SourceResult]) -> MappingPlan:
    lowered = [{name.lower(): name for name in result.values} for result in results]
    runs: list[tuple[int, list[str], list[str]]] = []  # consecutive scalars of one result: catalog order kept
    labelled = []
    for metric in catalog.from_source(kind):
        found = _find(metric.name, metric.source.key, bool(metric.labels), results, lowered)
        if found is None:
            continue
        index, where, key = found
        if where == "series":
            labelled.append((metric.name, index, key))
            continue
        if not runs or runs[-1][0] != index:
            runs.append((index, [], []))
        runs[-1][1].append(metric.name)
        runs[-1][2].append(key)
    return tuple((index, tuple(names), tuple(keys)) for index, names, keys in runs), tuple(labelled)


def _find(name: str, key: str | None, labelled: bool, results: Sequence[SourceResult],
          lowered: list[dict[str, str]]) -> tuple[int, str, str] | None:
    """Where the first of ``results`` holding this metric's value has it."""
    for index, result in enumerate(results):
        if labelled:
            for candidate in (name, key):
                if candidate and result.series.get(candidate) is not None:
                    return index, "series", candidate
            continue
        if name in result.values:
            return index, "values", name
        if key is None:
            continue
        if key in result.values:
            return index, "values", key
        printed = lowered[index].get(key.lower())
        if printed is not None:
            return index, "values", printed
    return None
