"""The one shape every collection produces and every consumer reads.

A Snapshot is immutable once built: the exporter, the AgentX view and the leak
detector only read it, so one collection can serve many readers at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping

from mysql_snmp.parsers.types import Labels, Value, labels_of  # noqa: F401  (re-exported: the Snapshot's value types)


@dataclass(frozen=True)
class SourceStatus:
    """How one source (a statement or psutil read) fared in this collection."""

    name: str
    ok: bool
    duration_seconds: float
    error: str | None = None
    # A reason code for counting failures by kind: "timeout", "connection",
    # "privilege", "parse", "unsupported" ...
    reason: str | None = None
    statements: int = 0


@dataclass(frozen=True)
class ServerInfo:
    flavour: str  # "mysql", "mariadb", "percona"
    version: tuple[int, int, int]
    version_string: str
    version_comment: str = ""


@dataclass
class Snapshot:
    """Values of one collection from one target, keyed by catalog name.

    - ``values``: scalar catalog metrics (no labels).
    - ``series``: labelled catalog metrics: catalog name -> {labels: value}.
    - ``raw``: the rows as the server printed them, typed, for consumers that
      export *every* row (mysqld_exporter-compatible ``mysql_global_status_*``):
      ``raw["global_status"]`` / ``raw["global_variables"]`` are dicts of
      variable name (as printed) -> typed value; other sources add their own.
    - ``sources``: per-source success, duration and error.
    """

    target: str
    timestamp: float = field(default_factory=time.time)
    up: bool = False
    server: ServerInfo | None = None
    values: dict[str, Value] = field(default_factory=dict)
    series: dict[str, dict[Labels, Value]] = field(default_factory=dict)
    raw: dict[str, object] = field(default_factory=dict)
    sources: dict[str, SourceStatus] = field(default_factory=dict)
    error: str | None = None
    # When the newest values from the server were read, if not at ``timestamp``: a
    # collection that did not reach the server carries the time of the last one that
    # did, so the age of the data keeps growing through an outage.
    data_timestamp: float | None = None

    def get(self, name: str, default: Value = None) -> Value:
        return self.values.get(name, default)

    def add_series(self, name: str, labels: Labels, value: Value) -> None:
        self.series.setdefault(name, {})[labels] = value

    def update(self, values: Mapping[str, Value]) -> None:
        self.values.update(values)

    def source_ok(self, name: str) -> bool:
        status = self.sources.get(name)
        return bool(status and status.ok)

    @property
    def age_seconds(self) -> float:
        return self.data_age_seconds(time.time())

    def data_age_seconds(self, now: float) -> float:
        stamp = self.timestamp if self.data_timestamp is None else self.data_timestamp
        return max(0.0, now - stamp)
