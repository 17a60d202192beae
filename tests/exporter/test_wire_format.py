"""Content negotiation and the general writer against prometheus_client, the reference.

The exporter does not import prometheus_client at run time (agents/exporter/metric_types.py);
these tests keep its own negotiation equal to ``choose_encoder`` for the Accept headers
Prometheus, browsers and tools send, and for generated ones."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mysql_snmp.agents.exporter.encoding import FamilyInterner, encode
from mysql_snmp.agents.exporter.metric_types import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    UnknownMetricFamily,
)
from mysql_snmp.agents.exporter.wire_format import negotiate_format
from tests.exporter.oracle import content_type_of_prometheus_client, encoded_by_prometheus_client

REAL_ACCEPTS = (
    None,
    "",
    "*/*",
    # Prometheus 2.x
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    # Prometheus 3.x, default scrape protocols
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;"
    "version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,"
    "*/*;q=0.2",
    # Prometheus 3.x with metric_name_escaping_scheme: underscores, and with text only
    "application/openmetrics-text;version=1.0.0;escaping=underscores;q=0.6,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
    "application/openmetrics-text; version=0.0.1; charset=utf-8",
    # browsers
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "text/plain",
)


@pytest.mark.parametrize("accept", REAL_ACCEPTS)
def test_real_accept_headers_negotiate_as_prometheus_client_does(accept):
    assert negotiate_format(accept).content_type == content_type_of_prometheus_client(accept)


media = st.sampled_from(["application/openmetrics-text", "text/plain", "text/html", "*/*", " text/plain "])
parameters = st.lists(st.one_of(
    st.builds("version={}".format, st.sampled_from(["1.0.0", "0.0.4", "0.0.1", "2.0.0", "1", "1.0", "10.1.0",
                                                    "1.x", "2.x", "", "1.0.0.1", " 1.0.0"])),
    st.builds("escaping={}".format, st.sampled_from(["allow-utf-8", "underscores", "dots", "values", "bogus", ""])),
    st.sampled_from(["q=0.5", "charset=utf-8", " version=1.0.0", "version = 1.0.0"])), max_size=3)
entries = st.builds(lambda m, p: ";".join([m, *p]), media, parameters)


@settings(max_examples=1500, deadline=None)
@given(st.lists(entries, min_size=1, max_size=4).map(",".join))
def test_generated_accept_headers_negotiate_as_prometheus_client_does(accept):
    try:
        expected = content_type_of_prometheus_client(accept)
    except TypeError:  # prometheus_client cannot compare a version such as "1.x": ours skips the entry
        negotiate_format(accept)
        return
    assert negotiate_format(accept).content_type == expected


def every_type_family():
    counter = CounterMetricFamily("mysql_exporter_scrapes_total", "Scrapes.", value=3)
    histogram = HistogramMetricFamily("mysql_latency_seconds", "Latency \\ in \"seconds\".\nSecond line.",
                                      buckets=[("0.5", 1.0), ("1e+06", 2.0), ("+Inf", 3.0)], sum_value=4.5)
    negative = HistogramMetricFamily("mysql_delta", "Negative buckets: no sum or count.",
                                     buckets=[("-1", 1.0), ("+Inf", 2.0)], sum_value=1.0)
    unknown = UnknownMetricFamily("mysql:odd.name", "Untyped.", labels=["the-label", "__reserved"])
    unknown.add_metric(["a\"b", "c"], math.inf)
    info = Metric("mysql_build", "Build.", "info")
    info.add_sample("mysql_build_info", {"version": "1.2"}, 1.0)
    gauge_histogram = Metric("mysql_queue", "Queue.", "gaugehistogram")
    for name, labels, value in (("mysql_queue_bucket", {"le": "+Inf"}, 2.0), ("mysql_queue_gcount", {}, 2.0),
                                ("mysql_queue_gsum", {}, 7.0)):
        gauge_histogram.add_sample(name, labels, value)
    with_unit = Metric("mysql_size", "Size.", "gauge", unit="bytes")
    with_unit.add_sample("mysql_size_bytes", {}, 1234567.0)
    created = CounterMetricFamily("mysql_events", "Events.", labels=["kind"])
    created.add_metric(["x"], 2.0)
    created.add_sample("mysql_events_created", {"kind": "x"}, 1700000000.0)
    gauge = GaugeMetricFamily("mysql_up", "Up.", value=1)
    return [counter, histogram, negative, unknown, info, gauge_histogram, with_unit, created, gauge]


@pytest.mark.parametrize("accept", REAL_ACCEPTS + tuple(
    f"{media};version=1.0.0;escaping={escaping}" for media in ("application/openmetrics-text", "text/plain")
    for escaping in ("allow-utf-8", "underscores", "dots", "values")))
def test_every_family_type_is_written_as_prometheus_client_writes_it(accept):
    body, content_type = encode(every_type_family(), accept, FamilyInterner())
    assert body == encoded_by_prometheus_client(every_type_family(), accept)
    assert content_type == content_type_of_prometheus_client(accept)


def test_the_family_types_name_and_shape_samples_as_prometheus_client_does():
    from prometheus_client import core

    ours = every_type_family()
    theirs = [core.CounterMetricFamily("mysql_exporter_scrapes_total", "Scrapes.", value=3),
              core.HistogramMetricFamily("mysql_latency_seconds", "Latency \\ in \"seconds\".\nSecond line.",
                                         buckets=[("0.5", 1.0), ("1e+06", 2.0), ("+Inf", 3.0)], sum_value=4.5),
              core.HistogramMetricFamily("mysql_delta", "Negative buckets: no sum or count.",
                                         buckets=[("-1", 1.0), ("+Inf", 2.0)], sum_value=1.0)]
    for mine, reference in zip(ours, theirs):
        assert (mine.name, mine.type) == (reference.name, reference.type)
        assert [tuple(s) for s in mine.samples] == [(s.name, s.labels, s.value) for s in reference.samples]
    with pytest.raises(ValueError, match="metric type"):
        Metric("mysql_x", "Bad type.", "counters")
    with pytest.raises(ValueError, match="not both"):
        GaugeMetricFamily("mysql_x", "Both.", value=1, labels=["a"])
