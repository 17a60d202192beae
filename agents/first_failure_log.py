"""Says once why a server that has not answered since start is down.

The connection logs an outage only after a first success: before that, the error is its
caller's to report.  ``collect`` reports it and exits; the exporter and the subagent collect
in the background and would show a wrong password or a server down at start only as
``mysql_up 0`` / ``myAgentMysqlUp 0``, with nothing in the journal."""

from __future__ import annotations

import logging

from agents.snapshot import Snapshot

log = logging.getLogger(__name__)


class FirstFailureLog:
    """Shown each collection of one server; logs at most once, on the first."""

    def __init__(self) -> None:
        self._settled = False

    def observe(self, snapshot: Snapshot) -> None:
        if self._settled:
            return
        self._settled = True
        if not snapshot.up:
            log.warning("cannot collect: %s (the server counts as down until it answers; retrying)",
                        snapshot.error)
