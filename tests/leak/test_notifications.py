"""Which state changes become notifications, and their varbinds."""

from mysql_snmp.agents.agentx.codec import VarType
from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.catalog import load_catalog, parse_oid
from mysql_snmp.agents.leak.notifications import notification_for, notification_name
from mysql_snmp.agents.leak.series_detector import LEAKING, OK, SUSPECT, LeakEvent
from mysql_snmp.agents.snapshot import Snapshot, labels_of

SERIES = "process_resident_memory_bytes"


def event(old, new):
    return LeakEvent(SERIES, 100.0, old, new, 5e6, 2.5e6, 86400.0, "unexplained")


def test_only_entering_and_leaving_leaking_notify():
    assert notification_name(event(SUSPECT, LEAKING)) == "leakDetected"
    assert notification_name(event(LEAKING, OK)) == "leakCleared"
    assert notification_name(event(OK, SUSPECT)) is None
    assert notification_name(event(SUSPECT, OK)) is None


def test_varbinds_are_the_rows_values_and_absent_ones_are_left_out():
    catalog = load_catalog()
    row = labels_of(series=SERIES)
    snapshot = Snapshot("db1", 100.0, True)
    snapshot.add_series("leak_series_name", row, SERIES)
    snapshot.add_series("leak_state", row, LEAKING)
    snapshot.add_series("leak_growth_bytes_per_hour", row, 3_000_000_000)  # beyond Integer32: clamped
    snapshot.add_series("leak_reason_code", row, 2)
    trap_oid, varbinds = notification_for(event(SUSPECT, LEAKING), snapshot, catalog)
    definition = next(n for n in catalog.extra["notifications"] if n["name"] == "leakDetected")
    assert trap_oid == parse_oid(definition["oid"])
    table = catalog.tables["myLeakTable"]
    index = encode_index(table, row)
    by_column = {vb.name[len(table.oid) + 1]: vb for vb in varbinds}
    assert all(vb.name[len(table.oid) + 2:] == index for vb in varbinds)
    column = {name: catalog.by_name(name).snmp.column for name in definition["objects"]}
    assert by_column[column["leak_series_name"]].value == SERIES.encode()
    assert by_column[column["leak_state"]].value == 2
    assert by_column[column["leak_growth_bytes_per_hour"]].type == VarType.INTEGER
    assert by_column[column["leak_growth_bytes_per_hour"]].value == 2**31 - 1
    assert column["leak_time_to_limit_seconds"] not in by_column  # no forecast in the snapshot
    assert notification_for(event(OK, SUSPECT), snapshot, catalog) is None
