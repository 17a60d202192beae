"""Metric families and samples as the exporter builds them, with only what it uses.

The constructors take the arguments of prometheus_client's ``*MetricFamily`` classes that
the exporter uses (a counter named ``x_total`` is family ``x`` with samples ``x_total``;
``untyped`` is ``unknown``), so the family builders read the same; the encoders in
agents/exporter/wire_format.py write them.  prometheus_client itself is not imported at
run time: its package loads its HTTP, WSGI, urllib and ssl modules (~3 MB of resident
memory), and the exporter needs none of them.  Samples carry no timestamps, exemplars or
native histograms: the exporter serves none.  tests/exporter/test_wire_format.py encodes
generated families with prometheus_client as well and compares the bytes.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

FAMILY_TYPES = ("counter", "gauge", "summary", "histogram", "gaugehistogram", "unknown", "info", "stateset")


class Sample(NamedTuple):
    name: str
    labels: dict[str, str]
    value: float


# The sample names a family of each type writes besides its own name ("x" -> "x_total").
_WIRE_SUFFIXES = {"counter": ("", "_total"), "info": ("", "_info"),
                  "histogram": ("", "_bucket", "_sum", "_count"), "summary": ("", "_sum", "_count")}


class Metric:
    """One metric family: its name, help, type, unit and samples."""

    __slots__ = ("name", "documentation", "type", "unit", "samples", "_labelnames", "_wire_names")

    def __init__(self, name: str, documentation: str, typ: str, unit: str = ""):
        if unit and not name.endswith("_" + unit):
            name += "_" + unit
        if not name:
            raise ValueError("a metric family needs a name")
        if typ == "untyped":
            typ = "unknown"
        if typ not in FAMILY_TYPES:
            raise ValueError(f"{name}: metric type {typ!r} is not one of {', '.join(FAMILY_TYPES)}")
        self.name = name
        self.documentation = documentation
        self.type = typ
        self.unit = unit
        self.samples: list[Sample] = []
        self._labelnames: tuple[str, ...] = ()
        self._wire_names: tuple[str, ...] | None = None

    def wire_names(self) -> tuple[str, ...]:
        """The sample names this family puts on the wire.  Kept: an interned family is asked
        at every scrape it serves, by the check that no two families write one name."""
        names = self._wire_names
        if names is None:
            names = self._wire_names = tuple(self.name + suffix for suffix in _WIRE_SUFFIXES.get(self.type, ("",)))
        return names

    def add_sample(self, name: str, labels: dict[str, str], value: float) -> None:
        self.samples.append(Sample(name, labels, value))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Metric) and self.name == other.name and self.documentation == other.documentation
                and self.type == other.type and self.unit == other.unit and self.samples == other.samples)

    __hash__ = None  # equal by content, and mutable

    def __repr__(self) -> str:
        return f"Metric({self.name!r}, {self.type}, {len(self.samples)} samples)"


class _ValueFamily(Metric):
    """A family of one sample per label set: ``value`` for an unlabelled one, else ``add_metric``."""

    __slots__ = ()
    _type = "gauge"

    def __init__(self, name: str, documentation: str, value: float | None = None,
                 labels: Sequence[str] | None = None):
        Metric.__init__(self, name, documentation, self._type)
        if labels is not None and value is not None:
            raise ValueError(f"{name}: a value or label names, not both")
        self._labelnames = tuple(labels or ())
        if value is not None:
            self.add_metric([], value)

    def add_metric(self, labels: Sequence[str], value: float) -> None:
        self.samples.append(Sample(self.name, dict(zip(self._labelnames, labels)), value))


class GaugeMetricFamily(_ValueFamily):
    __slots__ = ()


class UnknownMetricFamily(_ValueFamily):
    __slots__ = ()
    _type = "unknown"


class CounterMetricFamily(_ValueFamily):
    """A counter: the family is named without ``_total``, its samples with it."""

    __slots__ = ()
    _type = "counter"

    def __init__(self, name: str, documentation: str, value: float | None = None,
                 labels: Sequence[str] | None = None):
        super().__init__(name.removesuffix("_total"), documentation, value, labels)

    def add_metric(self, labels: Sequence[str], value: float) -> None:
        self.samples.append(Sample(self.name + "_total", dict(zip(self._labelnames, labels)), value))


class HistogramMetricFamily(Metric):
    """An unlabelled histogram: ``buckets`` of (``le`` text, cumulative count), ``+Inf`` last."""

    __slots__ = ()

    def __init__(self, name: str, documentation: str, buckets: Sequence[tuple[str, float]],
                 sum_value: float | None = None):
        Metric.__init__(self, name, documentation, "histogram")
        for bound, count in buckets:
            self.add_sample(name + "_bucket", {"le": bound}, count)
        # A histogram with negative buckets has no meaningful sum, so no sum and count either.
        if sum_value is not None and float(buckets[0][0]) >= 0:
            self.add_sample(name + "_count", {}, buckets[-1][1])
            self.add_sample(name + "_sum", {}, sum_value)
