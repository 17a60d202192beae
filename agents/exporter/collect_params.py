"""``collect[]`` names that select nothing: logged once each, counted always.

mysqld_exporter ignores such names without a word (0.14 then runs no collector when none
matches; later versions run every enabled one, as this exporter does), so a typo in a
Prometheus job goes unnoticed.  Drop-in behaviour is kept (the scrape is served the same),
but the first request naming each one is logged at warning with the reason and the nearest
collector name, and every one is counted in ``mysql_exporter_collect_params_ignored_total``.
"""

from __future__ import annotations

import logging
import threading
from typing import Iterable

from .metric_types import CounterMetricFamily, Metric
from ..config.names import did_you_mean

log = logging.getLogger(__name__)

# The names come from any HTTP client: past this many, new ones are counted but not logged.
MAX_LOGGED_NAMES = 256
REASONS = ("unknown", "disabled")


class CollectParams:
    """Checks the ``collect[]`` names of every request against the exporter's collectors."""

    def __init__(self, known: Iterable[str], enabled: Iterable[str]):
        self._known = tuple(known)
        self._enabled = frozenset(enabled)
        self._lock = threading.Lock()
        self._logged: set[str] = set()
        self._ignored = dict.fromkeys(REASONS, 0)

    def reason(self, name: str) -> str | None:
        """Why ``name`` selects no collector, or None when it selects one."""
        if name in self._enabled:
            return None
        return "disabled" if name in self._known else "unknown"

    def check(self, requested: Iterable[str]) -> None:
        for name in dict.fromkeys(requested):
            reason = self.reason(name)
            if reason is None:
                continue
            with self._lock:
                self._ignored[reason] += 1
                first = name not in self._logged and len(self._logged) < MAX_LOGGED_NAMES
                if first:
                    self._logged.add(name)
                    overflow = len(self._logged) == MAX_LOGGED_NAMES
            if first:
                log.warning("collect[]=%r: %s; ignored, as mysqld_exporter does (a collect[] naming no enabled "
                            "collector serves them all); further requests naming it are only counted in "
                            "mysql_exporter_collect_params_ignored_total", name, self._explain(name, reason))
                if overflow:
                    log.warning("collect[]: %d different names ignored; further new ones are only counted",
                                MAX_LOGGED_NAMES)

    def _explain(self, name: str, reason: str) -> str:
        if reason == "disabled":
            return f"this collector is off (turn it on with --collect.{name})"
        return "no such collector" + did_you_mean(name, self._known)

    def families(self) -> list[Metric]:
        family = CounterMetricFamily(
            "mysql_exporter_collect_params_ignored",
            "collect[] names that selected no collector, by reason (unknown: no such collector; disabled: "
            "its --collect flag is off).", labels=["reason"])
        with self._lock:
            for reason in REASONS:
                family.add_metric([reason], self._ignored[reason])
        return [family]
