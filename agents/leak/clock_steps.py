"""Steps of the wall clock under the leak detector, and the one warning each costs.

Samples carry wall-clock times (the history's grid is Unix time).  A step back shows in the
sample times themselves (SeriesDetector.feed moves the history back); a step forward looks
like time that passed, unless a monotonic clock says otherwise: WallClockWatch compares the
two between snapshots.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Callable

log = logging.getLogger(__name__)

# A wall clock ahead of the monotonic one by this much since the last snapshot stepped forward.
# Snapshot times are taken as a collection starts, so the two drift apart by the difference of
# two collections' durations (seconds at most); a forward step shorter than this is only a
# short gap in the samples anyway.
FORWARD_STEP_SECONDS = 300.0


class WallClockWatch:
    """Tells a forward step of the wall clock from time that passed, by a monotonic clock."""

    def __init__(self, monotonic: Callable[[], float]):
        self._monotonic = monotonic
        self._last: tuple[float, float] | None = None  # (snapshot time, monotonic) at the last snapshot

    def forward_step(self, now: float) -> float | None:
        """Seconds the wall clock jumped forward since the last call (None: it did not)."""
        ticks = self._monotonic()
        previous, self._last = self._last, (now, ticks)
        if previous is None:
            return None
        jump = (now - previous[0]) - (ticks - previous[1])
        return jump if jump >= FORWARD_STEP_SECONDS else None


def log_step(direction: str, seconds: float, now: float, series: int) -> None:
    log.warning("leak detector: the clock went %s %.0f s (a sample at %s): the history of %d series moved %s "
                "with it, to go on from this sample", direction, seconds, _utc(now), series, direction)


def _utc(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return f"{t:.0f}"
