"""Collections of many targets on one bounded set of worker threads.

A thread per target held 504 threads for 500 /probe targets.  Here every /probe target shares one
``CollectPool`` of ``--exporter.collection-workers`` threads (default: --web.max-connections,
since each collection that anyone waits for has an HTTP connection waiting on it), started only as
collections need them; the /metrics target has a pool of its own, so no number of probes delays it.

Each target collects through a ``Lane`` of the pool, which keeps the target's guarantee: its
collections run one at a time (its one MySQL connection), in the order asked.  A worker runs one
collection and goes back to the pool, so a target with more queued never holds a worker between
two.  A collection whose start-by time passed while it waited for a worker is not started: every
scrape waiting for it has given up (and counts it ``deadline``), and a queue of stale collections
must not delay fresh ones.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable


class NotStarted(Exception):
    """A collection still waiting for a worker at its start-by time: never started."""


class CollectPool:
    """A bounded set of worker threads (created as needed, at most ``workers``) shared by lanes."""

    def __init__(self, workers: int, name: str = "collect", clock: Callable[[], float] = time.monotonic):
        self.workers = max(1, workers)
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=name)

    def lane(self) -> "Lane":
        return Lane(self._executor, self._clock)

    def shutdown(self) -> None:
        """After every lane is closed: the idle workers end."""
        self._executor.shutdown(wait=True, cancel_futures=True)


class Lane:
    """One target's queue of collections: one at a time, in order, each on any free worker."""

    def __init__(self, executor: ThreadPoolExecutor, clock: Callable[[], float]):
        self._executor = executor
        self._clock = clock
        self._lock = threading.Lock()
        self._queue: deque[tuple[Future, Callable[[], object], float]] = deque()
        self._scheduled = False  # a turn of this lane is queued on, or running in, the pool
        self._active = False  # a collection of this lane runs now
        self._idle = threading.Condition(self._lock)
        self._closed = False

    def submit(self, work: Callable[[], object], start_by: float) -> Future:
        """``work()``'s future; it runs after this lane's earlier work, if a worker is free before ``start_by``."""
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the target is closed")
            self._queue.append((future, work, start_by))
            if not self._scheduled:
                self._schedule()
        return future

    def close(self) -> None:
        """Cancel what has not started and wait for the collection running now, if any."""
        with self._lock:
            self._closed = True
            while self._queue:
                self._queue.popleft()[0].cancel()
            while self._active:
                self._idle.wait()

    def _schedule(self) -> None:
        # Called with the lock held.
        try:
            self._executor.submit(self._turn)
            self._scheduled = True
        except RuntimeError:  # the pool is shut down (the exporter is stopping)
            self._scheduled = False
            while self._queue:
                self._queue.popleft()[0].cancel()

    def _turn(self) -> None:
        with self._lock:
            if not self._queue:
                self._scheduled = False
                return
            future, work, start_by = self._queue.popleft()
            self._active = True
        try:
            if future.set_running_or_notify_cancel():
                if self._clock() >= start_by:
                    future.set_exception(NotStarted("no worker was free before the scrape deadline"))
                else:
                    try:
                        future.set_result(work())
                    except BaseException as exc:  # the waiting scrapes get it, as from an executor
                        future.set_exception(exc)
        finally:
            with self._lock:
                self._active = False
                self._idle.notify_all()
                if self._queue and not self._closed:
                    self._schedule()
                else:
                    self._scheduled = False
