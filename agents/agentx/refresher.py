"""Keeps the served MibView fresh without ever making a request wait for MySQL.

Every ``interval`` seconds the collection runs in a worker thread and a new view replaces the
old one in a single assignment, so requests (served on the event loop) see either the old or
the new view, never a half-built one.  A collection that raises, or whose view cannot be
built, becomes a "down" snapshot: MySQL's objects vanish (noSuchInstance), the agent's status
objects say why.

The values on show are withdrawn as soon as they are older than ``interval + stale_grace`` while
the collection in flight has not answered (a frozen mysqld, whether the thread waits on a connect,
a statement or its answer): a "stale" view replaces them, with myAgentMysqlUp 0 and the data age
still growing from the last collection that reached the server.  The grace is the longest a
healthy collection may take; the bound does not depend on any MySQL timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from .view import MibView, TreeLayout, build_view
from ..config.redact import describe_exception
from ..snapshot import Snapshot

log = logging.getLogger(__name__)


def down_snapshot(target: str, error: str, data_timestamp: float | None = None) -> Snapshot:
    """What is served when there is no collection to show: MySQL down, and why."""
    return Snapshot(target=target, timestamp=time.time(), up=False, error=error,
                    values={"agent_mysql_up": 0, "agent_last_error": error}, data_timestamp=data_timestamp)


SnapshotHook = Callable[[Snapshot], None]


def run_callbacks(callbacks: list[SnapshotHook], snapshot: Snapshot) -> None:
    for callback in callbacks:
        try:
            callback(snapshot)
        except Exception:  # one broken consumer must not stop the serving of the others' values
            log.exception("snapshot callback %r failed", callback)


class ViewRefresher:
    """``hooks`` run in the worker thread on each new snapshot before its view is built: the
    place to add derived values (the leak detector's).  ``published`` callbacks run in a worker
    thread once the new view is served: the place to send notifications, so a manager that
    polls right after a trap already reads the state the trap announced."""

    def __init__(self, collect: Callable[[], Snapshot], layout: TreeLayout, interval: float, target: str,
                 hooks: list[SnapshotHook] | None = None,
                 published: list[SnapshotHook] | None = None, stale_grace: float | None = None,
                 abort_collection: Callable[[], None] = lambda: None) -> None:
        self.collect = collect
        # From the event loop (SIGTERM): the collection in flight stops reading now.
        self.abort_collection = abort_collection
        self.layout = layout
        self.interval = interval
        self.target = target
        self.hooks: list[SnapshotHook] = list(hooks or ())
        self.published: list[SnapshotHook] = list(published or ())
        self.stale_grace = stale_grace
        self.snapshot = down_snapshot(target, "no collection yet")
        # When the served values were read from the server (start-up until the first one).
        self.data_timestamp = self.snapshot.timestamp
        # time.monotonic() past which the values on show are too old to serve (None: none on show).
        self._fresh_until: float | None = None
        self.view: MibView = build_view(layout, self.snapshot)

    def current_view(self) -> MibView:
        return self.view

    def _collect_and_build(self) -> tuple[Snapshot, MibView]:
        try:
            snapshot = self.collect()
        except Exception as exc:  # the agent outlives any collection bug or outage
            log.warning("collection from %s failed: %s", self.target, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            snapshot = down_snapshot(self.target, describe_exception(exc))
        run_callbacks(self.hooks, snapshot)
        try:
            return snapshot, build_view(self.layout, snapshot)
        except Exception as exc:  # a bug here would end the refresher task, and the agent with it
            log.exception("cannot serve the collection from %s", self.target)
            snapshot = down_snapshot(self.target, f"building the SNMP view failed: {describe_exception(exc)}")
            return snapshot, build_view(self.layout, snapshot)

    async def refresh_once(self) -> Snapshot:
        snapshot, view = await asyncio.to_thread(self._collect_and_build)
        if snapshot.up:
            self.data_timestamp = snapshot.timestamp
            # On the monotonic clock, so a wall-clock step cannot stretch or cut the deadline.
            read_at = time.monotonic() - max(0.0, time.time() - snapshot.timestamp)
            self._fresh_until = None if self.stale_grace is None else read_at + self.interval + self.stale_grace
        else:
            self._fresh_until = None
            if snapshot.data_timestamp is None:
                snapshot.data_timestamp = self.data_timestamp
        self.snapshot, self.view = snapshot, view
        if self.published:
            # In a thread: a callback may wait on the event loop (AgentX Notify).
            await asyncio.to_thread(run_callbacks, self.published, snapshot)
        return snapshot

    def serve_stale(self) -> None:
        """The collection in flight is overdue and the values on show too old: withdraw them until it ends."""
        age = time.time() - self.data_timestamp
        error = (f"no answer from {self.target} for {age:.1f}s (refresh {self.interval:g}s + grace "
                 f"{self.stale_grace:g}s): the collection in flight is overdue")
        log.warning("%s; serving myAgentMysqlUp = 0 until it ends", error)
        self._fresh_until = None
        self.snapshot = down_snapshot(self.target, error, self.data_timestamp)
        self.view = build_view(self.layout, self.snapshot)

    async def _refresh_or_go_stale(self) -> None:
        refresh = asyncio.ensure_future(self.refresh_once())
        # Re-read the deadline after each wait: the new values may be on show already while the
        # refresh still runs its published callbacks (a Notify to a slow master).
        while not refresh.done() and self._fresh_until is not None:
            await asyncio.wait({refresh}, timeout=max(0.0, self._fresh_until - time.monotonic()))
            if not refresh.done() and self._fresh_until is not None and time.monotonic() >= self._fresh_until:
                self.serve_stale()
        await refresh

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            await self._refresh_or_go_stale()
            remaining = max(0.0, self.interval - (time.monotonic() - started))
            try:
                await asyncio.wait_for(stop.wait(), timeout=remaining)
            except asyncio.TimeoutError:
                pass
