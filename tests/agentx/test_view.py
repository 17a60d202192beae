"""The OID tree built from a snapshot, and what the responder answers from it (RFC 2741 7.2)."""

from __future__ import annotations

import time

import pytest

from mysql_snmp.agents.agentx import codec
from mysql_snmp.agents.agentx.codec import (
    CleanupSet, CommitSet, Get, GetBulk, GetNext, ResponseError, SearchRange, VarBind, VarType,
)
from mysql_snmp.agents.agentx.responder import answer
from mysql_snmp.agents.agentx.tableindex import UnindexableRow, encode_index
from mysql_snmp.agents.agentx.view import TreeLayout, build_view, wire_value
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.snapshot import labels_of
from tests.agentx.synthetic import LEGACY, NEW, synthetic_catalog, synthetic_snapshot


@pytest.fixture(scope="module")
def layout():
    return TreeLayout.from_catalog(synthetic_catalog())


@pytest.fixture()
def view(layout):
    return build_view(layout, synthetic_snapshot())


# --- value conversion ------------------------------------------------------------------------


def test_counters_wrap_gauges_clamp_integers_clamp():
    assert wire_value("Counter32", 2**32 + 5) == (VarType.COUNTER32, 5)
    assert wire_value("Counter64", 2**64 + 7) == (VarType.COUNTER64, 7)
    assert wire_value("Counter64", 2**64 - 1) == (VarType.COUNTER64, 2**64 - 1)
    assert wire_value("Gauge32", 2**40) == (VarType.GAUGE32, 2**32 - 1)
    assert wire_value("Integer32", -(2**40)) == (VarType.INTEGER, -(2**31))
    assert wire_value("Gauge32", 12.9) == (VarType.GAUGE32, 12)
    assert wire_value("Gauge32", "42") == (VarType.GAUGE32, 42)
    assert wire_value("TimeTicks", 1.5, unit="seconds") == (VarType.TIME_TICKS, 150)
    assert wire_value("OCTET STRING", "Synced") == (VarType.OCTET_STRING, b"Synced")
    assert wire_value("OCTET STRING", 3.0) == (VarType.OCTET_STRING, b"3")


@pytest.mark.parametrize("smi_type, value", [
    ("Counter32", -1), ("Gauge32", -5), ("Counter64", None), ("Gauge32", "ON"), ("Gauge32", float("nan")),
])
def test_unrepresentable_values_are_left_out_not_invented(smi_type, value):
    assert wire_value(smi_type, value) is None


# --- table indexes ------------------------------------------------------------------------------


def test_integer_and_octet_string_indexes():
    catalog = load_catalog()
    pools = catalog.tables["myBufferPoolTable"]
    states = catalog.tables["myProcesslistStateTable"]
    assert pools.integer_index == {"pool"} and not states.integer_index
    assert encode_index(pools, labels_of(pool="3")) == (3,)
    assert encode_index(states, labels_of(state="init")) == (4, 105, 110, 105, 116)
    assert encode_index(states, labels_of(state="")) == (0,)
    # A numeric value in a string-indexed table stays a string.
    assert encode_index(states, labels_of(state="3")) == (1, ord("3"))
    with pytest.raises(UnindexableRow):
        encode_index(pools, labels_of(pool="-1"))
    with pytest.raises(UnindexableRow):
        encode_index(pools, labels_of(pool="x"))
    with pytest.raises(UnindexableRow):
        encode_index(pools, labels_of(state="x"))


# --- Get -------------------------------------------------------------------------------------------


def test_legacy_and_new_scalars(view):
    assert view.get(LEGACY + (1, 0)) == VarBind(VarType.COUNTER32, LEGACY + (1, 0), 2**32 - 1)
    assert view.get(NEW + (1, 1, 0)) == VarBind(VarType.COUNTER64, NEW + (1, 1, 0), 2**64 - 1)
    assert view.get(LEGACY + (2, 0)) == VarBind(VarType.GAUGE32, LEGACY + (2, 0), 2**32 - 1)
    assert view.get(NEW + (1, 2, 0)).value == 2**40
    assert view.get(LEGACY + (3, 0)).value == b"ON"


def test_no_such_instance_versus_no_such_object(view):
    # An instance of an object we implement, that does not exist:
    assert view.get(LEGACY + (1, 1)).type == VarType.NO_SUCH_INSTANCE
    assert view.get(LEGACY + (1, 0, 0)).type == VarType.NO_SUCH_INSTANCE
    assert view.get(NEW + (3, 1, 2, 99)).type == VarType.NO_SUCH_INSTANCE
    # No object there at all (the object itself is not an instance either):
    assert view.get(LEGACY + (161, 0)).type == VarType.NO_SUCH_OBJECT
    assert view.get(LEGACY + (1,)).type == VarType.NO_SUCH_OBJECT
    assert view.get(NEW + (3, 1, 7, 0)).type == VarType.NO_SUCH_OBJECT


def test_mysql_down_hides_mysql_values_and_keeps_status(layout):
    view = build_view(layout, synthetic_snapshot(up=False))
    assert view.get(LEGACY + (1, 0)).type == VarType.NO_SUCH_INSTANCE
    assert view.get(NEW + (2, 1, 0)) == VarBind(VarType.INTEGER, NEW + (2, 1, 0), 0)
    assert b"Can't connect" in view.get(NEW + (2, 3, 0)).value
    assert [oid[:len(NEW) + 1] for oid in view.oids] == [NEW + (2,)] * 3


def test_data_age_is_computed_when_asked(layout):
    view = build_view(layout, synthetic_snapshot(timestamp=time.time() - 42))
    assert 42 <= view.get(NEW + (2, 2, 0)).value <= 44
    assert view.get(NEW + (2, 1, 0)).value == 1
    assert view.get(NEW + (2, 3, 0)).value == b""


# --- GetNext and walk order ----------------------------------------------------------------------------


def walk(view, start=(), end=()):
    out, search = [], SearchRange(start, end)
    while True:
        varbind = view.get_next(search)
        if varbind.type == VarType.END_OF_MIB_VIEW:
            return out, varbind
        out.append(varbind)
        search = SearchRange(varbind.name, end)


def test_walk_is_in_oid_order_with_tables_by_index(view):
    names = [v.name for v in walk(view)[0]]
    assert names == sorted(names)
    pools = [n[len(NEW) + 3:] for n in names if n[:len(NEW) + 3] == NEW + (3, 1, 2)]
    assert pools == [(0,), (1,), (10,)]
    states = [bytes(n[len(NEW) + 4:]).decode() for n in names if n[:len(NEW) + 3] == NEW + (4, 1, 2)]
    # non-IMPLIED OCTET STRING index: shorter strings first, then bytewise
    assert states == ["", "init", "Locked", "Sending data"]
    assert len(names) == 3 + 3 + 3 + 3 + 4


def test_get_next_include_and_exclusive_end(view):
    exact = LEGACY + (2, 0)
    assert view.get_next(SearchRange(exact, include=True)).name == exact
    assert view.get_next(SearchRange(exact)).name == LEGACY + (3, 0)
    # The end bound is exclusive: nothing in [1.3, 1.3.0) ...
    ended = view.get_next(SearchRange(LEGACY + (2, 0), LEGACY + (3, 0)))
    assert ended == VarBind(VarType.END_OF_MIB_VIEW, LEGACY + (2, 0))
    # ... and past the last instance the start OID comes back with endOfMibView.
    last_out, end = walk(view, NEW)
    assert end.name == last_out[-1].name


# --- Responder --------------------------------------------------------------------------------------------


def test_get_response_keeps_ids_and_byte_order(view):
    request = Get(session_id=7, transaction_id=8, packet_id=9, network_byte_order=False,
                  ranges=(SearchRange(LEGACY + (1, 0)), SearchRange(LEGACY + (99, 0))))
    reply = answer(request, view)
    assert (reply.session_id, reply.transaction_id, reply.packet_id, reply.network_byte_order) == (7, 8, 9, False)
    assert [v.type for v in reply.varbinds] == [VarType.COUNTER32, VarType.NO_SUCH_OBJECT]
    assert codec.decode(codec.encode(reply)) == reply


def test_get_bulk_non_repeaters_then_rows(view):
    request = GetBulk(non_repeaters=1, max_repetitions=3,
                      ranges=(SearchRange(LEGACY), SearchRange(LEGACY), SearchRange(NEW + (2,), NEW + (3,))))
    got = [v.name for v in answer(request, view).varbinds]
    assert got == [
        LEGACY + (1, 0),
        LEGACY + (1, 0), NEW + (2, 1, 0),
        LEGACY + (2, 0), NEW + (2, 2, 0),
        LEGACY + (3, 0), NEW + (2, 3, 0),
    ]
    exhausted = answer(GetBulk(max_repetitions=5, ranges=(SearchRange(NEW + (2, 3, 0), NEW + (3,)),)), view)
    assert [v.type for v in exhausted.varbinds] == [VarType.END_OF_MIB_VIEW]


def test_sets_refused_cleanup_silent_contexts_unsupported(view):
    test_set = codec.TestSet(varbinds=(VarBind(VarType.INTEGER, LEGACY + (1, 0), 1),))
    assert (answer(test_set, view).error, answer(test_set, view).index) == (ResponseError.NOT_WRITABLE, 1)
    assert answer(CleanupSet(), view) is None
    assert answer(CommitSet(), view).error == ResponseError.COMMIT_FAILED
    reply = answer(GetNext(context=b"other", ranges=(SearchRange(LEGACY),)), view)
    assert reply.error == ResponseError.UNSUPPORTED_CONTEXT and reply.varbinds == ()


def test_legacy_root_can_be_moved_like_the_original_oid_option():
    moved = (1, 3, 6, 1, 4, 1, 99999, 1)
    view = build_view(TreeLayout.from_catalog(synthetic_catalog(), legacy_root=moved), synthetic_snapshot())
    assert view.get(moved + (1, 0)).value == 2**32 - 1
    assert view.get(LEGACY + (1, 0)).type == VarType.NO_SUCH_OBJECT
    assert view.get(NEW + (1, 1, 0)).value == 2**64 - 1  # the new tree stays where the MIB puts it


def test_legacy_object_serves_the_catalog_fallback_when_its_own_value_is_absent():
    from mysql_snmp.agents.snapshot import Snapshot

    catalog = load_catalog()
    layout = TreeLayout.from_catalog(catalog)
    total = catalog.by_name("innodb_mem_total_allocated_bytes")  # myTotalMemAlloc, legacy 126
    assert total.snmp.legacy.n == 126 and total.snmp.legacy.fallback == ("innodb_mem_total_large_allocated_bytes",)
    legacy_oid = catalog.legacy_root + (126, 0)
    new_oid = total.snmp.oid + (0,)
    # MySQL 5.7+/MariaDB print only "Total large memory allocated 100663296".
    modern = build_view(layout, Snapshot("db1", up=True, values={"innodb_mem_total_large_allocated_bytes": 100663296}))
    assert modern.get(legacy_oid).value == 100663296
    assert modern.get(new_oid).type == VarType.NO_SUCH_INSTANCE  # the new tree names values exactly
    # Where the server prints its own line, that one wins.
    both = build_view(layout, Snapshot("db1", up=True, values={"innodb_mem_total_allocated_bytes": 5,
                                                               "innodb_mem_total_large_allocated_bytes": 7}))
    assert both.get(legacy_oid).value == 5
    neither = build_view(layout, Snapshot("db1", up=True, values={}))
    assert neither.get(legacy_oid).type == VarType.NO_SUCH_INSTANCE


def test_a_row_scalar_serves_its_rows_value_first_present_wins():
    """myLeakDictionaryState is the leak table's row of the dictionary series the legacy size
    object serves: the same value at both OIDs, the first listed series present, else absent."""
    from mysql_snmp.agents.snapshot import Snapshot, labels_of

    catalog = load_catalog()
    layout = TreeLayout.from_catalog(catalog)
    state = catalog.by_name("leak_dictionary_state").snmp.oid + (0,)
    rate = catalog.by_name("leak_dictionary_growth_bytes_per_hour").snmp.oid + (0,)
    table = catalog.tables["myLeakTable"]
    row_state = catalog.by_name("leak_state")

    def row_oid(series):
        return table.oid + (1, row_state.snmp.column, len(series), *series.encode())

    def snapshot(rows):
        snap = Snapshot("db1", up=True)
        for series, (value, growth) in rows.items():
            snap.add_series("leak_state", labels_of(series=series), value)
            if growth is not None:
                snap.add_series("leak_growth_bytes_per_hour", labels_of(series=series), growth)
        return snap

    # MariaDB 10.11: only "Dictionary memory allocated", the legacy object's fallback.
    view = build_view(layout, snapshot({"innodb_mem_dictionary_bytes": (2, -7), "process_resident_memory_bytes": (1, 5)}))
    assert view.get(state).value == view.get(row_oid("innodb_mem_dictionary_bytes")).value == 2
    assert view.get(rate).value == -7
    # Percona: the dictionary cache line is what myDictionaryCacheMemory serves, so its row wins.
    view = build_view(layout, snapshot({"innodb_mem_dictionary_bytes": (2, 9), "innodb_mem_dictionary_cache_bytes": (1, None)}))
    assert view.get(state).value == 1
    assert view.get(rate).type == VarType.NO_SUCH_INSTANCE  # no trend for that row yet: absent, not the other's
    # No such row: absent, never 0.
    view = build_view(layout, snapshot({"process_resident_memory_bytes": (0, 0)}))
    assert view.get(state).type == VarType.NO_SUCH_INSTANCE


def test_row_name_columns_serve_each_rows_index_as_text():
    """OpenNMS names and labels a row after its name column (a 300-byte index OID is no file
    name): every row of the table has one, "command / state" for two labels, and the
    default replication channel (empty name) a non-empty one."""
    from mysql_snmp.agents.snapshot import Snapshot

    catalog = load_catalog()
    layout = TreeLayout.from_catalog(catalog)
    snap = Snapshot("db1", up=True)
    dump = labels_of(command="Binlog Dump", state="master has sent all binlog to slave; waiting for more updates")
    snap.add_series("processlist_threads", dump, 1)
    snap.add_series("processlist_seconds", labels_of(command="Sleep", state=""), 30)
    snap.add_series("replica_io_running", labels_of(channel=""), 1)
    snap.add_series("replica_seconds_behind_source", labels_of(channel="eu"), 0)
    view = build_view(layout, snap)

    def name(column, labels):
        metric = catalog.by_name(column)
        table = catalog.tables[metric.snmp.table]
        return view.get(table.oid + (1, metric.snmp.column) + encode_index(table, labels)).value

    assert name("processlist_command_state_name", dump) == (
        b"Binlog Dump / master has sent all binlog to slave; waiting for more updates")
    assert name("processlist_command_state_name", labels_of(command="Sleep", state="")) == b"Sleep / "
    assert name("replica_channel_name", labels_of(channel="")) == b"(default)"
    assert name("replica_channel_name", labels_of(channel="eu")) == b"eu"
    # No row of its own: a name column never invents a row the table does not have.
    user = catalog.by_name("processlist_user_name")
    column = catalog.tables["myProcesslistUserTable"].oid + (1, user.snmp.column)
    assert not [oid for oid in view.oids if oid[:len(column)] == column]
