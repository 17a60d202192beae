"""Catalog metrics as Prometheus metric families, read from a Snapshot.

Every catalog entry with a ``prometheus`` spec whose source an enabled collector
covers is exported under the catalog's name and type, from ``Snapshot.values``
(scalars) or ``Snapshot.series`` (labelled).  Nothing here names a metric by hand:
new catalog entries (mysql_innodb_*, mysql_host_*, mysql_leak_*) appear without code.
"""

from __future__ import annotations

import math
from decimal import Decimal
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from ..catalog import Catalog
from .encoding import FamilyInterner, scalar_family
from .metric_types import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    Sample,
    UnknownMetricFamily,
)
from ..snapshot import Snapshot, Value

_FAMILY_TYPES = {
    "counter": CounterMetricFamily,
    "gauge": GaugeMetricFamily,
    "untyped": UnknownMetricFamily,
    "info": GaugeMetricFamily,
}


def sample_value(value: Value) -> float | None:
    """A catalog value as a sample; None (SQL NULL) is NaN: present, but no number.

    Text values have no sample (they travel as labels of info metrics).
    """
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def go_float_text(number: float) -> str:
    """``number`` as Go's client writes an ``le`` label (strconv 'g', shortest): 1, 0.001, 1e-06, 1e+06.

    Dashboards select buckets by that exact text.
    """
    digits = Decimal(repr(number)).normalize()
    exponent = digits.adjusted()
    if -4 <= exponent < 6:
        return format(digits, "f")
    mantissa = format(digits.scaleb(-exponent).normalize(), "f")
    return f"{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def histogram_family(export: "_Export", value: object) -> Metric | None:
    """A histogram value (``count``, ``sum``, ``buckets`` of (upper bound, cumulative count)) as a family."""
    try:
        buckets = [(go_float_text(float(bound)), int(count)) for bound, count in value.buckets]
        buckets.append(("+Inf", int(value.count)))
        total = float(value.sum)
    except (AttributeError, TypeError, ValueError):
        return None  # not a histogram: nothing to serve rather than a wrong shape
    return HistogramMetricFamily(export.prometheus_name, export.help, buckets=buckets,
                                 sum_value=total * export.scale)


def summary_family(export: "_Export", series: dict) -> Metric | None:
    """Labelled summaries (``count``, ``sum``, ``quantiles`` of (quantile label, value)) as one family."""
    family = Metric(export.prometheus_name, export.help, "summary")
    for labels, value in series.items():
        try:
            quantiles = [(str(quantile), float(number)) for quantile, number in value.quantiles]
            count, total = float(value.count), float(value.sum)
        except (AttributeError, TypeError, ValueError):
            continue  # not a summary: nothing to serve rather than a wrong shape
        by_name = dict(labels)
        base = {label: by_name.get(label, "") for label in export.labels}
        for quantile, number in quantiles:
            family.add_sample(export.prometheus_name, {**base, "quantile": quantile}, number * export.scale)
        family.add_sample(export.prometheus_name + "_count", base, count)
        family.add_sample(export.prometheus_name + "_sum", base, total * export.scale)
    return family if family.samples else None


def exposed_names(family: Metric) -> tuple[str, ...]:
    """The sample names a family puts on the wire (a counter family "x" writes "x_total")."""
    return family.wire_names()


@dataclass(frozen=True)
class _Export:
    name: str  # catalog name
    prometheus_name: str
    prometheus_type: str
    help: str
    labels: tuple[str, ...]
    scale: float

    @property
    def label_set(self) -> frozenset[str]:
        return frozenset(self.labels)


# The catalog does not change at run time and the same few collector sets recur
# every scrape: keep the filtered list per (catalog, kinds).  The catalog itself
# is kept in the value so its id() cannot be reused while the entry lives.
_EXPORTS_CACHE: dict[tuple[int, frozenset[str]], tuple[Catalog, tuple["_Export", ...]]] = {}


def _exports(catalog: Catalog, kinds: frozenset[str]) -> tuple[_Export, ...]:
    key = (id(catalog), kinds)
    cached = _EXPORTS_CACHE.get(key)
    if cached is not None and cached[0] is catalog:
        return cached[1]
    exports = tuple(
        _Export(m.name, m.prometheus.name, m.prometheus.type, m.help, m.labels, m.prometheus.scale)
        for m in catalog
        if m.prometheus is not None and m.source.kind in kinds
    )
    if len(_EXPORTS_CACHE) > 256:
        _EXPORTS_CACHE.clear()
    _EXPORTS_CACHE[key] = (catalog, exports)
    return exports


def _labelled_family(export: _Export, series: Mapping, relabel: Mapping | None) -> list[Metric]:
    """The family of ``series`` (none when no value is a number)."""
    family = _FAMILY_TYPES[export.prometheus_type](export.prometheus_name, export.help, labels=list(export.labels))
    _add_series(family, export, series, relabel)
    return [family] if family.samples else []


def _add_series(family: Metric, export: _Export, series: Mapping, relabel: Mapping | None) -> None:
    """One sample per labelled value of ``series`` (each label the export names; one the value lacks is "").

    What ``add_metric`` would add, built straight from the snapshot's labels: with every
    collector on this loop makes ~3,500 samples a scrape.
    """
    # A counter family's samples are named <name>_total (CounterMetricFamily).
    sample_name = family.name + "_total" if family.type == "counter" else family.name
    wanted = export.label_set
    rewrites = [(label, rewrite) for label, rewrite in (relabel or {}).items() if label in wanted]
    scale = export.scale
    append = family.samples.append
    for labels, value in series.items():
        number = sample_value(value)
        if number is None:
            continue
        by_name = dict(labels)
        if by_name.keys() != wanted:
            by_name = {label: by_name.get(label, "") for label in export.labels}
        for label, rewrite in rewrites:
            by_name[label] = rewrite(by_name[label])
        append(Sample(sample_name, by_name, number * scale))


def catalog_families(catalog: Catalog, snapshot: Snapshot, kinds: Iterable[str],
                     skip_names: set[str] | frozenset[str] = frozenset(),
                     interner: FamilyInterner | None = None,
                     relabel: Mapping[str, Callable[[str], str]] | None = None) -> list[Metric]:
    """Families for the catalog metrics of ``kinds`` present in the snapshot.

    ``skip_names`` are wire names already taken (the self metrics).  ``relabel``
    rewrites the values of a label on the way out (upstream's
    ``--collect.perf_schema.memory_events.remove_prefix`` on ``event_name``); with an
    ``interner``, pass the same mapping object each scrape, or labelled families are rebuilt.
    """
    families: list[Metric] = []
    taken = set(skip_names)
    for export in _exports(catalog, frozenset(kinds)):
        if export.prometheus_name in taken:
            continue
        if export.labels:
            series = snapshot.series.get(export.name)
            if not series:
                continue
            if export.prometheus_type == "summary":
                summary = summary_family(export, series)
                if summary is not None:
                    families.append(summary)
                    taken.update(exposed_names(summary))
                continue
            if interner is None:
                built = _labelled_family(export, series, relabel)
            else:
                # Most series read the same as last scrape (idle instruments, table sizes, grants):
                # then last scrape's family, and its encoded bytes, serve again.
                built = interner.reuse(export.prometheus_name, (series, relabel),
                                       lambda: _labelled_family(export, series, relabel))
            for family in built:
                families.append(family)
                taken.update(exposed_names(family))
            continue
        if export.name not in snapshot.values:
            continue
        value = snapshot.values[export.name]
        if export.prometheus_type == "histogram":
            family = histogram_family(export, value)
            if family is None:
                continue
        elif export.prometheus_type == "info":
            if value is None:
                continue
            # The catalog's rule: <name>{<last word of the catalog name>="text"} 1.
            label = export.name.rsplit("_", 1)[-1]
            family = GaugeMetricFamily(export.prometheus_name, export.help, labels=[label])
            family.add_metric([str(value)], 1.0)
        else:
            number = sample_value(value)
            if number is None:
                continue
            family = scalar_family(interner, _FAMILY_TYPES[export.prometheus_type], export.prometheus_name,
                                   export.help, number * export.scale)
        families.append(family)
        taken.update(exposed_names(family))
    return families
