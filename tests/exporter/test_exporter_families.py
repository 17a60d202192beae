"""Catalog metrics as Prometheus families: names, types and base units from the catalog."""

from __future__ import annotations

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.families import catalog_families
from mysql_snmp.agents.snapshot import Snapshot
from mysql_snmp.parsers.innodb import parse_innodb_status

SEMAPHORE_WAITS = """
----------
SEMAPHORES
----------
OS WAIT ARRAY INFO: reservation count 9, signal count 9
--Thread 140 has waited at btr0cur.cc line 3 for 2.00 seconds the semaphore:
--Thread 141 has waited at btr0cur.cc line 3 for 1.00 seconds the semaphore:
------------
TRANSACTIONS
------------
Trx id counter 5163
"""


def families_of(values):
    snapshot = Snapshot(target="db1", up=True, values=values)
    return {f.name: f for f in catalog_families(load_catalog(), snapshot, ["innodb"])}


def test_milliseconds_kept_for_snmp_are_exposed_in_seconds():
    values = parse_innodb_status(SEMAPHORE_WAITS).values
    assert values["innodb_sem_wait_time_milliseconds"] == 3000  # legacy SNMP unit: 2 s + 1 s
    family = families_of(values)["mysql_innodb_sem_wait_time_seconds"]
    assert family.type == "gauge"
    assert [s.value for s in family.samples] == [3.0]


def test_trx_id_counter_is_a_counter_named_without_its_type():
    values = parse_innodb_status(SEMAPHORE_WAITS).values
    families = families_of(values)
    family = families["mysql_innodb_transaction_ids_assigned"]  # prometheus_client strips _total
    assert family.type == "counter"
    assert [(s.name, s.value) for s in family.samples] == [("mysql_innodb_transaction_ids_assigned_total", 5163.0)]


def test_histogram_values_become_histogram_families_with_go_bucket_labels():
    from prometheus_client import generate_latest

    from mysql_snmp.agents.exporter.families import go_float_text
    from mysql_snmp.parsers.query_response_time import response_time_histogram

    rows = [{"TIME": "      0.000001", "COUNT": 1, "TOTAL": "      0.000001"},
            {"TIME": "      1.000000", "COUNT": 2, "TOTAL": "      0.500000"},
            {"TIME": "1000000.000000", "COUNT": 0, "TOTAL": "      0.000000"},
            {"TIME": "TOO LONG", "COUNT": 4, "TOTAL": "TOO LONG"}]
    snapshot = Snapshot(target="db1", up=True, values={"query_response_time_seconds": response_time_histogram(rows),
                                                      "read_query_response_time_seconds": "not a histogram"})
    (family,) = catalog_families(load_catalog(), snapshot, ["query_response_time"])
    assert family.name == "mysql_info_schema_query_response_time_seconds" and family.type == "histogram"

    from tests.exporter.oracle import ClientRegistry

    text = generate_latest(ClientRegistry([family])).decode()
    assert 'mysql_info_schema_query_response_time_seconds_bucket{le="1e-06"} 1.0' in text
    assert 'mysql_info_schema_query_response_time_seconds_bucket{le="1"} 3.0' in text
    assert 'mysql_info_schema_query_response_time_seconds_bucket{le="1e+06"} 3.0' in text
    assert 'mysql_info_schema_query_response_time_seconds_bucket{le="+Inf"} 7.0' in text
    assert "mysql_info_schema_query_response_time_seconds_count 7.0" in text
    assert [go_float_text(x) for x in (1e-5, 0.0001, 0.5, 100000.0, 1234567.0)] == \
        ["1e-05", "0.0001", "0.5", "100000", "1.234567e+06"]


def test_summary_series_keep_mysqld_exporter_quantile_labels():
    from prometheus_client import generate_latest

    from mysql_snmp.parsers.perf_schema_statements import events_statements_series

    row = {"SCHEMA_NAME": "shop", "DIGEST": "cd34", "DIGEST_TEXT": "SELECT ?", "COUNT_STAR": 10,
           "SUM_TIMER_WAIT": 5 * 10**12, "QUANTILE_95": 10**9, "QUANTILE_99": 2 * 10**9, "QUANTILE_999": 3 * 10**9}
    series = events_statements_series([row])
    series["perf_schema_events_statements_latency_seconds"][(("digest", "x"),)] = 1.0  # not a summary: left out
    snapshot = Snapshot(target="db1", up=True, series=series)
    families = {f.name: f for f in catalog_families(load_catalog(), snapshot, ["perf_schema_events_statements"])}
    family = families["mysql_perf_schema_events_statements_latency"]
    assert family.type == "summary"

    from tests.exporter.oracle import ClientRegistry

    from prometheus_client.parser import text_string_to_metric_families

    (parsed,) = text_string_to_metric_families(generate_latest(ClientRegistry([family])).decode())
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value for sample in parsed.samples}
    digest = (("digest", "cd34"), ("digest_text", "SELECT ?"))
    assert samples == {
        ("mysql_perf_schema_events_statements_latency", digest + (("quantile", "95"), ("schema", "shop"))): 0.001,
        ("mysql_perf_schema_events_statements_latency", digest + (("quantile", "99"), ("schema", "shop"))): 0.002,
        ("mysql_perf_schema_events_statements_latency", digest + (("quantile", "999"), ("schema", "shop"))): 0.003,
        ("mysql_perf_schema_events_statements_latency_count", digest + (("schema", "shop"),)): 10.0,
        ("mysql_perf_schema_events_statements_latency_sum", digest + (("schema", "shop"),)): 5.0,
    }


def test_labelled_series_take_the_catalog_labels_and_relabel_only_theirs():
    series = {
        (("event_name", "wait/io/file/sql/binlog"), ("file_name", "/var/lib/mysql/bin.000001"), ("mode", "read")): 7,
        # A label the catalog does not name is dropped; one it names but the value lacks is "".
        (("event_name", "wait/io/file/sql/FRM"), ("extra", "x"), ("file_name", "/t.frm")): 3,
        (("event_name", "memory/sql/THD"), ("file_name", "f"), ("mode", "write")): None,  # NULL: NaN
        (("event_name", "wait/io/file/sql/x"), ("file_name", "g"), ("mode", "read")): "text",  # no sample
    }
    snapshot = Snapshot(target="db1", up=True, series={"perf_schema_file_instances": series})
    families = {f.name: f for f in catalog_families(
        load_catalog(), snapshot, ["perf_schema_file_instances"],
        relabel={"event_name": lambda name: name.removeprefix("wait/io/file/"), "absent": str.upper})}
    family = families["mysql_perf_schema_file_instances"]
    assert family.type == "counter"
    samples = [(s.name, s.labels, s.value) for s in family.samples]
    assert samples[:2] == [
        ("mysql_perf_schema_file_instances_total",
         {"file_name": "/var/lib/mysql/bin.000001", "event_name": "sql/binlog", "mode": "read"}, 7.0),
        ("mysql_perf_schema_file_instances_total", {"file_name": "/t.frm", "event_name": "sql/FRM", "mode": ""}, 3.0),
    ]
    name, labels, value = samples[2]
    assert labels == {"file_name": "f", "event_name": "memory/sql/THD", "mode": "write"} and value != value
    assert len(samples) == 3


def test_unchanged_labelled_series_serve_last_scrapes_family_and_bytes_and_a_change_does_not():
    from mysql_snmp.agents.exporter.encoding import FamilyInterner, encode

    catalog, interner = load_catalog(), FamilyInterner()
    content_type = encode([], None)[1]

    def scrape(waits: dict):
        series = {(("event_name", name),): count for name, count in waits.items()}
        snapshot = Snapshot(target="db1", up=True, series={"perf_schema_events_waits": series})
        (family,) = catalog_families(catalog, snapshot, ["perf_schema_events_waits"], interner=interner)
        return family, encode([family], None, interner)[0]

    first, body = scrape({"wait/a": 1, "wait/b": 2})
    again, same = scrape({"wait/a": 1, "wait/b": 2})
    assert again is first and same == body
    assert interner.encoded_by_id(content_type)[id(first)] == body
    changed, new_body = scrape({"wait/a": 1, "wait/b": 3})
    assert changed is not first
    assert b'mysql_perf_schema_events_waits_total{event_name="wait/b"} 3.0' in new_body
    assert b"} 2.0" not in new_body
    assert id(first) not in interner.encoded_by_id(content_type)  # replaced: its bytes went with it
    for count in range(50):  # a value that changes every scrape keeps one family and its bytes
        scrape({"wait/a": count})
    assert len(interner.encoded_by_id(content_type)) == 1
