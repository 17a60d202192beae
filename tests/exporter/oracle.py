"""prometheus_client as the reference the exporter's own exposition is checked against.

The exporter writes its families itself (agents/exporter/wire_format.py, sample_lines.py) and
does not import prometheus_client at run time; the tests copy its families into
prometheus_client's types and compare the bytes that library writes for them.
"""

from __future__ import annotations

from prometheus_client.core import Metric as ClientMetric
from prometheus_client.exposition import choose_encoder


def client_copy(family) -> ClientMetric:
    """``family`` (the exporter's type) as a prometheus_client Metric with the same samples."""
    copy = ClientMetric(family.name, family.documentation, family.type, family.unit)
    for sample in family.samples:
        copy.add_sample(sample.name, dict(sample.labels), sample.value)
    return copy


class ClientRegistry:
    """What prometheus_client's encoders read: an object whose collect() yields its families."""

    def __init__(self, families):
        self.families = [client_copy(family) for family in families]

    def collect(self):
        return iter(self.families)


def encoded_by_prometheus_client(families, accept: str | None) -> bytes:
    return choose_encoder(accept or "")[0](ClientRegistry(families))


def content_type_of_prometheus_client(accept: str | None) -> str:
    return choose_encoder(accept or "")[1]
