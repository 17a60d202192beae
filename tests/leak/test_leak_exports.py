"""The values the detector adds are what the exporter and the AgentX view serve."""

from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.families import catalog_families
from tests.leak import synthetic
from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.snapshot import Snapshot, labels_of

DICT = "innodb_mem_dictionary_bytes"


def leaking_snapshot():
    detector = LeakDetector({"state_file": None, "series": [{"name": DICT}], "mature_baseline_seconds": 3 * 3600})
    trace = synthetic.dictionary_leak(days=0.22, onset=4 * synthetic.HOUR)
    snapshot = None
    for t, value, _ in trace.rows():
        snapshot = Snapshot("db1", t, True, values={DICT: value, "process_resident_memory_bytes": 2 * 1024**3,
                                                      "host_memory_total_bytes": 8 * 1024**3})
        detector.observe(snapshot)
    assert detector.detectors[DICT].state == 2
    return snapshot


def test_prometheus_families_carry_the_leak_values():
    snapshot = leaking_snapshot()
    families = {f.name: f for f in catalog_families(load_catalog(), snapshot, ["leak"])}
    state = families["mysql_leak_state"].samples
    assert [(s.labels, s.value) for s in state] == [({"series": DICT}, 2.0)]
    reasons = {s.labels["reason"]: s.value for s in families["mysql_leak_reason"].samples}
    assert reasons == {"none": 0.0, "tables": 0.0, "unexplained": 1.0}
    rate = families["mysql_leak_growth_bytes_per_hour"].samples[0].value
    assert rate == snapshot.series["leak_growth_bytes_per_hour"][labels_of(series=DICT)]
    served = families["mysql_leak_time_to_limit_seconds"].samples[0].value
    lower = families["mysql_leak_time_to_limit_lower_seconds"].samples[0].value
    upper = families["mysql_leak_time_to_limit_upper_seconds"].samples[0].value
    assert 0 < lower < served < upper


def test_agentx_view_serves_the_leak_table_row():
    catalog = load_catalog()
    snapshot = leaking_snapshot()
    view = build_view(TreeLayout.from_catalog(catalog), snapshot)
    table = catalog.tables["myLeakTable"]
    index = encode_index(table, labels_of(series=DICT))
    state = view.get(table.oid + (1, catalog.by_name("leak_state").snmp.column) + index)
    name = view.get(table.oid + (1, catalog.by_name("leak_series_name").snmp.column) + index)
    assert state.value == 2
    assert name.value == DICT.encode()
    # the band: new columns at the end of the row, the older ones where they were
    assert [catalog.by_name(n).snmp.column for n in ("leak_reason_code", "leak_time_to_limit_lower_seconds",
                                                      "leak_time_to_limit_upper_seconds")] == [8, 9, 10]
    band = [view.get(table.oid + (1, column) + index).value for column in (9, 6, 10)]
    assert band == [round(snapshot.series[n][labels_of(series=DICT)]) for n in (
        "leak_time_to_limit_lower_seconds", "leak_time_to_limit_seconds", "leak_time_to_limit_upper_seconds")]
    assert band[0] < band[1] < band[2]
