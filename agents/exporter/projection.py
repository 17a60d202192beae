"""mysqld_exporter's families as the catalog declares them (``prometheus_families:``).

- ``rows_families``: the every-row pass-through of one source (all status, all
  variables).  Each printed name lands where the family table puts it: a grouped
  family (``commands_total{command}``), nowhere, or its generic name; so no value is
  served twice.  The generic families carry the catalog's help where the catalog
  describes that variable.
- ``value_families``: catalog values upstream serves under a name of its own.
- ``named_families``: values the server names itself (``mysql_snmp.parsers.types.NamedRow``: replica
  status columns, INNODB_METRICS counters, TokuDB status lines, processlist groups), named
  by ``prometheus_families.named``; ``unlisted_series_families``: the series of a source
  that no catalog entry names (USER_STATISTICS columns newer than the catalog), the same way.
- ``status_info_families``: upstream's info gauges over text values (version,
  isolation level, Galera), whose parsing lives in ``parsers/status.py``.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..catalog import Catalog
from ..catalog_families import ROW_TYPE
from .encoding import FamilyInterner, scalar_family
from .metric_types import CounterMetricFamily, GaugeMetricFamily, Metric, UnknownMetricFamily
from mysql_snmp.parsers.status import galera_evs_latency, galera_gcache_size_bytes, sample_number
from mysql_snmp.parsers.types import NamedRow, Value

_UNSEEN = object()  # a printed name not projected yet
FAMILY_TYPES = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily, "untyped": UnknownMetricFamily}

_HELP_CACHE: dict[int, tuple[Catalog, dict[tuple[str, str], str]]] = {}


def _catalog_help(catalog: Catalog) -> dict[tuple[str, str], str]:
    """(source, generic family name) -> the catalog's help for it."""
    cached = _HELP_CACHE.get(id(catalog))
    if cached is not None and cached[0] is catalog:
        return cached[1]
    helps = {(m.source.kind, m.prometheus.name): m.help for m in catalog
             if m.prometheus is not None and m.source.kind in catalog.families.rows and not m.prometheus.labels}
    _HELP_CACHE[id(catalog)] = (catalog, helps)
    return helps


def rows_families(catalog: Catalog, source: str, rows: Mapping[str, Value],
                  interner: FamilyInterner | None = None) -> list[Metric]:
    """Every row of ``source`` with a numeric value, as the family table names it."""
    if interner is not None and source == "global_variables":
        # Variables rarely change: an unchanged set gives back last scrape's families.
        return interner.reuse(source, rows, lambda: _rows_families(catalog, source, rows, interner))
    return _rows_families(catalog, source, rows, interner)


def _rows_families(catalog: Catalog, source: str, rows: Mapping[str, Value],
                   interner: FamilyInterner | None) -> list[Metric]:
    table = catalog.families
    helps = _catalog_help(catalog)
    grouped: dict[str, Metric] = {}
    families: list[Metric] = []
    known = table.row_slots(source)
    for printed, raw in rows.items():
        value = sample_number(raw)
        if value is None:
            continue
        slot = known.get(printed, _UNSEEN)
        if slot is _UNSEEN:
            slot = table.remember_slot(source, printed)
        if slot is None:
            continue
        if not slot.grouped:
            families.append(scalar_family(interner, FAMILY_TYPES[slot.type], slot.family,
                                          helps.get((source, slot.family), slot.help), value))
            continue
        family = grouped.get(slot.family)
        if family is None:
            family = grouped[slot.family] = FAMILY_TYPES[slot.type](
                slot.family, slot.help, labels=[slot.label] if slot.label else None)
        family.add_metric([slot.label_value] if slot.label else [], value)
    return list(grouped.values()) + families


def value_families(catalog: Catalog, values: Mapping[str, Value]) -> list[Metric]:
    """The catalog values upstream also serves under its own names (``prometheus_families.values``)."""
    families = []
    for declared in catalog.families.values:
        number = sample_number(values.get(declared.value))
        if number is not None:
            families.append(FAMILY_TYPES[declared.type](declared.name, declared.help, value=number))
    return families


def named_families(catalog: Catalog, source: str, rows: Iterable[NamedRow]) -> list[Metric]:
    """The named values of ``source`` in the families the catalog's ``named`` rules give them.

    A series met twice (two keys made the same name) is served once, the first.
    """
    table = catalog.families
    families: dict[str, Metric] = {}
    served: set[tuple[str, tuple[str, ...]]] = set()
    # A replica channel's ~60 columns share one label set: look its values up once.
    label_values: dict[tuple, tuple[str, ...]] = {}
    for row in rows:
        slot = table.project_named(source, row.key)
        if slot is None:
            continue
        name, kind, help_text = slot.family, slot.type, slot.help
        if kind == ROW_TYPE:
            name, kind = (name + "_total", "counter") if row.counter else (name, "gauge")
        if not slot.grouped and not slot.label and row.help:
            help_text = row.help  # a family of its own: the row describes itself (INNODB_METRICS COMMENT)
        values = label_values.get((row.labels, slot.labels))
        if values is None:
            row_labels = dict(row.labels)
            values = label_values[(row.labels, slot.labels)] = tuple(row_labels.get(label, "") for label in slot.labels)
        if slot.label:
            values += (slot.label_value or "",)
        if (name, values) in served:
            continue
        served.add((name, values))
        family = families.get(name)
        if family is None:
            names = [*slot.labels, *([slot.label] if slot.label else [])]
            family = families[name] = FAMILY_TYPES[kind](name, help_text, labels=names)
        family.add_metric(list(values), row.value)
    return list(families.values())


def unlisted_series_families(catalog: Catalog, source: str,
                             series: Mapping[str, Mapping[tuple, Value]]) -> list[Metric]:
    """The series of ``source`` whose key no catalog entry of that source names, as ``named`` rules say."""
    listed = {key for m in catalog.from_source(source) for key in (m.name, m.source.key) if key}
    return named_families(catalog, source, [
        NamedRow(key, number, labels) for key, by_labels in series.items() if key not in listed
        for labels, value in by_labels.items() if (number := sample_number(value)) is not None])


def _info(name: str, help_text: str, labels: dict[str, str]) -> Metric:
    family = GaugeMetricFamily(name, help_text, labels=list(labels))
    family.add_metric(list(labels.values()), 1.0)
    return family


def _text(rows: Mapping[str, Value], name: str) -> str:
    value = rows.get(name)
    return "" if value is None else str(value)


# What each part of wsrep_evs_repl_latency ("min/avg/max/stdev/samples") measures, for its HELP.
_EVS_LATENCY_MEANING = {"min_seconds": "the shortest over the sample window, in seconds",
                        "avg_seconds": "the mean over the sample window, in seconds",
                        "max_seconds": "the longest over the sample window, in seconds",
                        "stdev": "the standard deviation over the sample window, in seconds",
                        "sample_size": "the number of samples in the window"}


def status_info_families(status: Mapping[str, Value]) -> list[Metric]:
    """Galera's status info and group communication latency (upstream's global_status extras)."""
    families = []
    if _text(status, "wsrep_local_state_uuid"):
        families.append(_info("mysql_galera_status_info", "Galera node identity (cluster and node state UUIDs, provider version) as labels; the value is 1.", {
            name: _text(status, name)
            for name in ("wsrep_local_state_uuid", "wsrep_cluster_state_uuid", "wsrep_provider_version")}))
    for part, number in galera_evs_latency(_text(status, "wsrep_evs_repl_latency")).items():
        families.append(GaugeMetricFamily(f"mysql_galera_evs_repl_latency_{part}",
                                          f"Galera group replication latency (wsrep_evs_repl_latency): {_EVS_LATENCY_MEANING[part]}.", value=number))
    return families


def variables_info_families(variables: Mapping[str, Value]) -> list[Metric]:
    """Version, isolation level and Galera settings (upstream's global_variables extras)."""
    families = [_info("mysql_version_info", "Server version, version comment and InnoDB version as labels; the value is 1.", {
        name: _text(variables, name) for name in ("innodb_version", "version", "version_comment")})]
    level = _text(variables, "transaction_isolation") or _text(variables, "tx_isolation")
    if level:
        families.append(_info("mysql_transaction_isolation", "The default transaction isolation level as a label; the value is 1.", {"level": level}))
    if _text(variables, "wsrep_cluster_name"):
        families.append(_info("mysql_galera_variables_info", "The Galera cluster name as a label; the value is 1.",
                              {"wsrep_cluster_name": _text(variables, "wsrep_cluster_name")}))
    gcache = galera_gcache_size_bytes(_text(variables, "wsrep_provider_options"))
    if gcache is not None:
        families.append(GaugeMetricFamily("mysql_galera_gcache_size_bytes", "Size of the Galera write-set cache (gcache.size in wsrep_provider_options), in bytes.",
                                          value=float(gcache)))
    return families
