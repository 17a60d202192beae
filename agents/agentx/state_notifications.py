"""mysqlDown / mysqlUp and replicationStopped / replicationStarted, once per state change.

``StateChanges`` is pure: fed one snapshot after another, it returns the notifications the
change since the previous snapshot calls for, as (name, row).  The first snapshot reports
only a bad state (the server unreachable, a thread stopped): that is news to a manager, a
healthy start is not.

- The server: ``snapshot.up`` (a collection that could not reach it is down).
- Replication, per channel (the row of myReplicationChannelTable): a thread whose state goes
  from running (or connecting: the thread runs, it waits for its source) to stopped sends
  replicationStopped; back to running, replicationStarted.  A down snapshot carries no
  replication values, so it changes no channel's state: replication that kept running
  through a MySQL outage sends nothing.  A channel that disappears (RESET SLAVE ALL) is
  forgotten.

``state_notification_hook`` wires it into the refresher's ``published`` callbacks.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from .notification_varbinds import notification_message
from ..catalog import Catalog
from ..snapshot import Labels, Snapshot
from mysql_snmp.parsers.replication import THREAD_STOPPED

if TYPE_CHECKING:
    from .session import AgentXSession

log = logging.getLogger(__name__)

MYSQL_DOWN, MYSQL_UP = "mysqlDown", "mysqlUp"
REPLICATION_STOPPED, REPLICATION_STARTED = "replicationStopped", "replicationStarted"
THREADS = ("replica_io_running", "replica_sql_running")

Change = tuple[str, Labels | None]


class StateChanges:
    def __init__(self) -> None:
        self.up: bool | None = None
        self.channels: dict[Labels, tuple[bool, ...]] = {}  # per channel: each thread stopped?

    def observe(self, snapshot: Snapshot) -> list[Change]:
        changes: list[Change] = []
        if snapshot.up != self.up and (self.up is not None or not snapshot.up):
            changes.append((MYSQL_UP if snapshot.up else MYSQL_DOWN, None))
        self.up = snapshot.up
        if snapshot.up:
            changes += self._replication(snapshot)
        return changes

    def _replication(self, snapshot: Snapshot) -> list[Change]:
        rows = set()
        for name in THREADS:
            rows.update((snapshot.series.get(name) or {}).keys())
        changes: list[Change] = []
        current = {}
        for row in sorted(rows):
            states = tuple((snapshot.series.get(name) or {}).get(row) for name in THREADS)
            stopped = tuple(state == THREAD_STOPPED if state is not None else None for state in states)
            before = self.channels.get(row, (False,) * len(THREADS))
            # a thread whose state the server did not give keeps its last known state
            stopped = tuple(b if s is None else s for s, b in zip(stopped, before))
            current[row] = stopped
            if any(s and not b for s, b in zip(stopped, before)):
                changes.append((REPLICATION_STOPPED, row))
            if row in self.channels and any(b and not s for s, b in zip(stopped, before)):
                changes.append((REPLICATION_STARTED, row))
        self.channels = current
        return changes


def state_notification_hook(session: "AgentXSession", catalog: Catalog) -> Callable[[Snapshot], None]:
    """A refresher ``published`` callback (runs off the event loop, once the view is served)."""
    tracker = StateChanges()

    def notify(snapshot: Snapshot) -> None:
        for name, row in tracker.observe(snapshot):
            log.info("%s%s", name, f" (channel {dict(row).get('channel', '')!r})" if row else "")
            try:
                session.submit_notify(*notification_message(catalog, name, snapshot, row),
                                      with_uptime=True).result(timeout=10)
            except Exception as exc:  # no master right now: the state is still served
                log.warning("%s notification not sent: %s", name, exc)

    return notify
