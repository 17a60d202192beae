"""Prometheus names as the exporter serves them, for the generated dashboards and rules.

Every catalog metric is served under its ``prometheus`` name and fixed labels; for SHOW GLOBAL
STATUS / VARIABLES those are mysqld_exporter's names, which the catalog loader checks against the
``prometheus_families`` projection (Com_select -> mysql_global_status_commands_total{command="select"}).
The columns of SHOW SLAVE|REPLICA STATUS are named by the catalog's ``prometheus_families.named`` rule
for replica_status: a one-value sample goes through the slave_status collector's family builder here,
and the name it comes out under is what a query must use.  So no name is typed twice, and a change in
the catalog or in the collector table reaches the boards and rules at the next ``mysql-snmp generate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import Catalog, load_catalog
from ..exporter.collectors import BY_NAME, CompatOptions
from ..snapshot import Snapshot

# The exporter's own self metrics, spelled as mysqld_exporter spells them (exposition.py).
UP = "mysql_up"
COLLECTOR_SUCCESS = "mysql_exporter_collector_success"
SCRAPE_ERRORS = "mysql_exporter_scrape_errors_total"  # ours: by collector and reason



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


def replica_status_served(column: str) -> list[Served]:
    """The series the slave_status collector makes of one SHOW SLAVE|REPLICA STATUS ``column``."""
    snapshot = Snapshot(target="generate", up=True, raw={"replica_status": [{column: 1}]})
    families = BY_NAME["slave_status"].compat(snapshot, CompatOptions(), None, load_catalog())
    served = []
    for family in families:
        for sample in family.samples:
            labels = tuple((k, v) for k, v in sample.labels.items() if v != "")
            served.append(Served(sample.name, labels))
    return served


def served(catalog: Catalog, name: str) -> Served:
    """Where catalog metric ``name`` is served (replica status columns: replica_column())."""
    metric = catalog.by_name(name)
    if metric.prometheus is None:
        raise ValueError(f"{name} is not served to Prometheus (no prometheus entry in the catalog)")
    return Served(metric.prometheus.name, metric.prometheus.labels)


def replica_column(column: str) -> str:
    """mysql_slave_status_* name of a SHOW SLAVE|REPLICA STATUS column, as the column is printed."""
    names = {s.name for s in replica_status_served(column)}
    own = [n for n in names if n.endswith("_" + column.lower())]
    if len(own) != 1:
        raise ValueError(f"replica status column {column} is served as {sorted(names)}")
    return own[0]
