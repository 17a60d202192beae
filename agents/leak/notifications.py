"""Leak state changes as SNMP notifications (leakDetected / leakCleared from the catalog).

The AgentX agent wires it in as a pair of refresher callbacks::

    observe, notify = leak_notification_hooks(detector, session, catalog)
    refresher = ViewRefresher(collect, layout, interval, target, hooks=[observe], published=[notify])

``observe`` runs ``detector.observe(snapshot)`` before the view is built (so it serves the leak
table); ``notify`` runs once that view is served and sends one notification per change through
the master agent, so a manager polling on the trap reads the announced state.  Varbinds are the
notification's catalog objects, instances of the series' row of the leak table; an object
with no value (no forecast yet) is left out rather than sent as a made-up 0.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Callable

from ..agentx.codec import VarBind
from ..agentx.notification_varbinds import notification_message
from ..catalog import Catalog
from .series_detector import LEAKING, OK, LeakEvent
from ..snapshot import Snapshot, labels_of

if TYPE_CHECKING:
    from ..agentx.session import AgentXSession
    from .detector import LeakDetector

log = logging.getLogger(__name__)

DETECTED = "leakDetected"
CLEARED = "leakCleared"


def notification_name(event: LeakEvent) -> str | None:
    """leakDetected on entering leaking, leakCleared on leaving it; suspect changes send nothing."""
    if event.new == LEAKING:
        return DETECTED
    if event.old == LEAKING and event.new == OK:
        return CLEARED
    return None


def notification_for(event: LeakEvent, snapshot: Snapshot, catalog: Catalog) -> tuple[tuple[int, ...], list[VarBind]] | None:
    """(trap OID, varbinds) for an event, with values from the snapshot the detector just filled."""
    name = notification_name(event)
    if name is None:
        return None
    return notification_message(catalog, name, snapshot, labels_of(series=event.series))


def leak_notification_hooks(
    detector: "LeakDetector", session: "AgentXSession", catalog: Catalog
) -> tuple[Callable[[Snapshot], None], Callable[[Snapshot], None]]:
    """ViewRefresher callbacks (both run off the event loop): observe, and notify each change."""

    def notify(snapshot: Snapshot) -> None:
        for event in detector.changes:
            message = notification_for(event, snapshot, catalog)
            if message is None:
                continue
            try:
                session.submit_notify(*message, with_uptime=True).result(timeout=10)
            except Exception as exc:  # no master right now: the state is still served in the table
                log.warning("leak notification for %s not sent: %s", event.series, exc)

    return detector.observe, notify
