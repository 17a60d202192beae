"""Prometheus names as the exporter serves them, for the generated dashboards and rules.

Catalog metrics of our own (mysql_innodb_*, mysql_host_*, mysql_process_*, mysql_leak_*,
...) are served under the catalog's ``prometheus.name``.  Values that mysqld_exporter
already published (SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES, SHOW SLAVE|REPLICA STATUS)
keep mysqld_exporter's names, which the exporter's collector table builds: a one-value
sample goes through that collector's own family builder here, and the name and labels
it comes out under are what a query must use.  So no name is typed twice, and a change
in the catalog or in the collector table reaches the boards and rules at the next
``mysql-snmp generate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.catalog import Catalog
from agents.exporter.collectors import BY_NAME, CompatOptions
from agents.snapshot import Snapshot

# The exporter's own self metrics, spelled as mysqld_exporter spells them (exposition.py).
UP = "mysql_up"
COLLECTOR_SUCCESS = "mysql_exporter_collector_success"

# catalog source kind -> (exporter collector, snapshot raw key, how one value is shaped there)
_COMPAT_SOURCES = {
    "global_status": ("global_status", "global_status", lambda key: {key: 1}),
    "global_variables": ("global_variables", "global_variables", lambda key: {key: 1}),
    "replication": ("slave_status", "replica_status", lambda key: [{key: 1}]),
}


@dataclass(frozen=True)
class Served:
    """One served series: metric name plus the label values that pick it out of its family."""

    name: str
    labels: tuple[tuple[str, str], ...] = ()

    def selector(self, matchers: str = "") -> str:
        """``name{labels, matchers}``, e.g. matchers = 'job=~"$job"'."""
        parts = [f'{label}="{value}"' for label, value in self.labels]
        if matchers:
            parts.append(matchers)
        return f"{self.name}{{{', '.join(parts)}}}" if parts else self.name


def compat_served(source_kind: str, key: str) -> list[Served]:
    """The series mysqld_exporter-compatible builders make of one value ``key`` of ``source_kind``."""
    collector_name, raw_key, shape = _COMPAT_SOURCES[source_kind]
    snapshot = Snapshot(target="generate", up=True, raw={raw_key: shape(key)})
    families = BY_NAME[collector_name].compat(snapshot, CompatOptions(), None)
    served = []
    for family in families:
        for sample in family.samples:
            labels = tuple((k, v) for k, v in sample.labels.items() if v != "")
            served.append(Served(sample.name, labels))
    return served


def served(catalog: Catalog, name: str) -> Served:
    """Where catalog metric ``name`` is served: the mysqld_exporter name when the exporter has one."""
    metric = catalog.by_name(name)
    # Replica status keys in the catalog are field names, not the server's columns: those
    # go through replica_column() with the column as printed.
    if metric.source.kind in ("global_status", "global_variables") and metric.source.key:
        found = compat_served(metric.source.kind, metric.source.key)
        if len(found) == 1:
            return found[0]
    if metric.prometheus is None:
        raise ValueError(f"{name} is not served to Prometheus (no prometheus entry in the catalog)")
    return Served(metric.prometheus.name)


def replica_column(column: str) -> str:
    """mysql_slave_status_* name of a SHOW SLAVE|REPLICA STATUS column, as the column is printed."""
    names = {s.name for s in compat_served("replication", column)}
    own = [n for n in names if n.endswith("_" + column.lower())]
    if len(own) != 1:
        raise ValueError(f"replica status column {column} is served as {sorted(names)}")
    return own[0]
