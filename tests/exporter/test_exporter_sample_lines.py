"""The plain-family writer gives exactly prometheus_client's bytes, in every format and escaping."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mysql_snmp.agents.exporter.encoding import FamilyInterner, encode
from mysql_snmp.agents.exporter.metric_types import CounterMetricFamily, GaugeMetricFamily, Metric
from mysql_snmp.agents.exporter.sample_lines import plain_body, plain_format
from mysql_snmp.agents.exporter.wire_format import negotiate_format
from tests.exporter.oracle import encoded_by_prometheus_client as reference

OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
ACCEPTS = (
    None,
    "text/plain;version=0.0.4",
    "text/plain;version=1.0.0;escaping=allow-utf-8",
    "text/plain;version=1.0.0;escaping=dots",
    "text/plain;version=1.0.0;escaping=values",
    "text/plain;version=1.0.0;escaping=underscores",
    OPENMETRICS,
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8",
    "application/openmetrics-text;version=1.0.0;escaping=values",
    "application/openmetrics-text;version=1.0.0;escaping=dots",
    "application/openmetrics-text;version=2.0.0;escaping=underscores",
)
TYPES = ("counter", "gauge", "unknown", "summary", "histogram", "info", "stateset", "gaugehistogram")
SUFFIXES = ("", "_total", "_created", "_bucket", "_sum", "_count", "_gsum", "_gcount", "_info")

plain_names = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
names = st.one_of(plain_names, st.from_regex(r"[a-z0-9][a-z0-9_:.\-é☃]{0,8}", fullmatch=True))
label_names = st.one_of(plain_names, st.sampled_from(["le", "quantile", "the-label", "dotted.label", "Zz9", "__x"]))
label_values = st.text(alphabet=st.sampled_from(['a', 'Z', '0', ' ', '\\', '\n', '"', 'é', '☃', '{', '=', ',']),
                       max_size=6)
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**20, 10**20),
                   st.sampled_from([0.0, -0.0, 1e6, 1e21, 123456789.0, 1e-7]))


@st.composite
def families(draw):
    name = draw(names)
    family = Metric(name, draw(st.text(max_size=20)), draw(st.sampled_from(TYPES)))
    for _ in range(draw(st.integers(0, 5))):
        suffix = draw(st.sampled_from(SUFFIXES))
        family.add_sample(name + suffix, draw(st.dictionaries(label_names, label_values, max_size=3)), draw(values))
    return family


@settings(max_examples=300, deadline=None)
@given(st.lists(families(), max_size=4), st.sampled_from(ACCEPTS))
def test_any_family_encodes_as_prometheus_client_does(generated, accept):
    assert encode(generated, accept, FamilyInterner())[0] == reference(generated, accept)


def typical_families():
    counter = CounterMetricFamily("mysql_perf_schema_events_waits", "Waits.\\ \"quoted\"\nnext line",
                                  labels=["event_name", "instance"])
    counter.add_metric(["wait/io/file/innodb/innodb_data_file", 'C:\\data "x"\nend'], 17)
    counter.add_metric(["wait/synch/mutex/sql/LOCK_open", "é☃"], 1e21)
    gauge = GaugeMetricFamily("mysql_info_schema_table_size", "Sizes.", labels=["schema", "table", "component"])
    gauge.add_metric(["db", "t", "data_length"], 16384.0)
    gauge.add_metric(["db", "t", "index_length"], float("nan"))
    scalar = GaugeMetricFamily("mysql_global_status_uptime", "Uptime.", value=12345)
    return [counter, gauge, scalar]


def test_typical_families_are_written_directly_and_match():
    for accept in ACCEPTS:
        form = plain_format(negotiate_format(accept))
        if accept and ("dots" in accept or "values" in accept):
            assert form is None  # these escapings rewrite plain names: the general writer does them
            continue
        assert form is not None
        for family in typical_families():
            body = plain_body(family, form)
            assert body is not None
            assert body == reference([family], accept).removesuffix(b"# EOF\n")
    body, _ = encode(typical_families(), OPENMETRICS, FamilyInterner())
    assert b'instance="C:\\\\data \\"x\\"\\nend"' in body
    assert b"mysql_perf_schema_events_waits_total{" in body and b"} 1e+21\n" in body


def test_families_that_are_not_plain_are_left_to_the_general_writer():
    form = plain_format(negotiate_format(OPENMETRICS))
    colon = GaugeMetricFamily("mysql:recorded", "A colon.", value=1)
    odd_label = GaugeMetricFamily("mysql_x", "Odd label.", labels=["the-label"])
    odd_label.add_metric(["v"], 1)
    created = Metric("mysql_z", "With created.", "counter")
    created.add_sample("mysql_z_total", {"a": "b"}, 1)
    created.add_sample("mysql_z_created", {"a": "b"}, 1000.0)
    text_form = plain_format(negotiate_format(""))
    assert plain_body(colon, form) is None
    assert plain_body(odd_label, form) is None
    assert plain_body(created, text_form) is None  # text 0.0.4 moves _created to a family of its own
    assert plain_body(created, form) == reference([created], OPENMETRICS).removesuffix(b"# EOF\n")


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.floats(), st.floats(-1e7, 1e7), st.integers(-10**20, 10**20),
                 st.sampled_from([999999.9999999999, 1e6, 1e6 - 1e-9, -1e22, 1e-7, 5e-324, -0.0])))
def test_value_text_is_float_to_go_string(value):
    from prometheus_client.utils import floatToGoString

    from mysql_snmp.agents.exporter.sample_lines import _value_text
    from mysql_snmp.agents.exporter.wire_format import go_float

    assert _value_text(value) == go_float(value) == floatToGoString(value)


def test_long_label_values_are_written_but_not_kept_between_scrapes():
    # The memo of one-label lines outlives the scrape: a server's long values must not stay in it.
    from mysql_snmp.agents.exporter import sample_lines
    from mysql_snmp.agents.exporter.metric_types import GaugeMetricFamily

    long_value = "t" * (sample_lines.PREFIX_MEMO_VALUE_CHARS + 1)
    family = GaugeMetricFamily("mysql_long_label", "help", labels=["table"])
    family.add_metric([long_value], 1.0)
    family.add_metric(["short"], 2.0)
    body = sample_lines.plain_body(family, ("text", "underscores"))
    assert f'mysql_long_label{{table="{long_value}"}} 1.0\n'.encode() in body
    assert b'mysql_long_label{table="short"} 2.0\n' in body
    kept = {key[2] for key in sample_lines._ONE_LABEL_PREFIXES}
    assert "short" in kept and long_value not in kept
