"""leakDetected / leakCleared reach a trap receiver: detector -> AgentX notify -> snmpd -> snmptrapd,
with the exact varbinds, on a synthetic leak (hours of samples in a moment).  The real agent
process on a real server: test_leak_agentx_e2e.py."""

import pytest

from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from mysql_snmp.agents.catalog import format_oid, load_catalog
from tests.leak import synthetic
from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.leak.notifications import leak_notification_hooks
from mysql_snmp.agents.snapshot import Snapshot, labels_of
from tests.agentx.agent_process import InProcessAgent
from tests.agentx.netsnmp import wait_until
from tests.leak import trap_sink
from tests.leak.trap_sink import TrapForwardingSnmpd, traps, traps_of

pytestmark = pytest.mark.snmp

SERIES = "innodb_mem_dictionary_bytes"


@pytest.fixture
def trap_receiver(tmp_path):
    with trap_sink.trap_receiver(tmp_path) as receiver:
        yield receiver


def test_leak_detected_and_cleared_reach_snmptrapd(tmp_path, trap_receiver):
    trap_port, trap_log = trap_receiver
    catalog = load_catalog()
    snmpd = TrapForwardingSnmpd(tmp_path / "snmpd", trap_port=trap_port)
    snmpd.start()
    layout = TreeLayout.from_catalog(catalog)
    detector = LeakDetector({"state_file": None, "series": [{"name": SERIES}], "mature_baseline_seconds": 3 * 3600})
    current = {"view": build_view(layout, Snapshot("db1", 0.0, False))}
    try:
        with InProcessAgent(snmpd, current["view"], [catalog.new_root],
                            view_provider=lambda: current["view"]) as agent:
            observe, notify = leak_notification_hooks(detector, agent.session, catalog)
            trace = synthetic.dictionary_leak(days=0.25, onset=4 * synthetic.HOUR)
            drop_at = trace.onset + 1.5 * synthetic.HOUR
            for t, value, _ in trace.rows():
                if t >= drop_at:
                    value -= (t - trace.onset) * trace.rate_bytes_per_hour / 3600  # memory given back
                snapshot = Snapshot("db1", t, True, values={SERIES: value})
                observe(snapshot)
                current["view"] = build_view(layout, snapshot)
                notify(snapshot)
                if any(e.new_name == "ok" and e.old_name == "leaking" for e in detector.changes):
                    break
            detected_oid = next(n["oid"] for n in catalog.extra["notifications"] if n["name"] == "leakDetected")
            cleared_oid = next(n["oid"] for n in catalog.extra["notifications"] if n["name"] == "leakCleared")
            wait_until(lambda: any(f".{cleared_oid}" in b for b in traps(trap_log)), what="leakCleared trap")
    finally:
        snmpd.stop()

    detected, cleared = traps_of(trap_log, detected_oid), traps_of(trap_log, cleared_oid)
    assert len(detected) == 1 and len(cleared) == 1, traps(trap_log)
    table = catalog.tables["myLeakTable"]
    state_column = format_oid(table.oid + (1, catalog.by_name("leak_state").snmp.column))
    name_column = format_oid(table.oid + (1, catalog.by_name("leak_series_name").snmp.column))
    reason_column = format_oid(table.oid + (1, catalog.by_name("leak_reason_code").snmp.column))
    rate_column = format_oid(table.oid + (1, catalog.by_name("leak_growth_bytes_per_hour").snmp.column))
    index = "." + format_oid(encode_index(table, labels_of(series=SERIES)))
    for varbinds, state in ((detected[0], 2), (cleared[0], 0)):
        assert varbinds[f".{name_column}{index}"] == f'STRING: "{SERIES}"'
        assert varbinds[f".{state_column}{index}"] == f"INTEGER: {state}"
        assert varbinds[f".{reason_column}{index}"] == f"INTEGER: {2 if state else 0}"  # unexplained / none
    rate = int(detected[0][f".{rate_column}{index}"].split(": ")[1])
    assert 0.5 < rate / trace.rate_bytes_per_hour < 1.5
