"""The metric catalog (agents/catalog.yaml) against its rules and against real server data.

The legacy objects are checked row by row against the original MIB's reference table, and the
status coverage and counter/gauge choices against SHOW GLOBAL STATUS captured from real servers
(../shared/fixtures).
"""

from __future__ import annotations

import copy
import csv
import functools
import re
from pathlib import Path

import pytest
import yaml

from mysql_snmp.agents.catalog import (CATALOG_PATH, CatalogError, format_oid, load_catalog, load_catalog_file,
                                       load_exporter_catalog, parse_catalog, parse_oid, without_snmp)
from tests.exporter.go_exporter import GO_EXPORTER

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
LEGACY_TSV = SHARED / "reference" / "mysql-snmp-legacy-objects.tsv"
LIVE = SHARED / "fixtures" / "live" / "mariadb-10.11"
NETDATA = SHARED / "fixtures" / "status" / "netdata-go.d.plugin"

# The families of SHOW GLOBAL STATUS the catalog exports by name (see the catalog's header).
STATUS_PREFIXES = (
    "Aborted_", "Aria_pagecache_", "Binlog_", "Bytes_", "Com_", "Connection_errors_", "Created_tmp_",
    "Delayed_", "Handler_", "Innodb_", "Key_", "Max_execution_time_", "Open_", "Opened_", "Qcache_",
    "Rows_", "Rpl_semi_sync_", "Select_", "Slave_", "Slaves_", "Replica_", "Sort_", "Subquery_cache_",
    "Table_locks_", "Table_open_cache_", "Tc_log_", "Threadpool_", "Threads_", "wsrep_",
)
STATUS_NAMES = {
    "Access_denied_errors", "Aria_transaction_log_syncs", "Connections", "Global_connection_memory",
    "Locked_connects", "Max_statement_time_exceeded", "Max_used_connections", "Memory_used",
    "Memory_used_initial", "Not_flushed_delayed_rows", "Prepared_stmt_count", "Queries", "Questions",
    "Slow_launch_threads", "Slow_queries", "Uptime", "Uptime_since_flush_status",
}
# Numbers that identify rather than measure.
STATUS_IDENTITIES = {"Innodb_redo_log_uuid"}
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
SMI_DESCRIPTOR = re.compile(r"^[a-z][A-Za-z0-9]*$")


def need_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"../shared absent: {path} not found")
    return path


def read_tsv_status(path: Path) -> dict[str, str]:
    rows = csv.reader(need_shared(path).read_text().splitlines()[1:], delimiter="\t")
    return {row[0]: row[1] if len(row) > 1 else "" for row in rows}


def read_box_status(path: Path) -> dict[str, str]:
    """A mysql client box table (| Variable_name | Value |)."""
    out = {}
    for line in need_shared(path).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] != "Variable_name":
            out[cells[0]] = cells[1]
    return out


def exported_family(name: str) -> bool:
    return name in STATUS_NAMES or name.startswith(STATUS_PREFIXES)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def document():
    return yaml.safe_load(CATALOG_PATH.read_text())


@pytest.fixture(scope="module")
def status_by_key(catalog):
    return {m.source.key.lower(): m for m in catalog.from_source("global_status")}


def legacy_rows():
    lines = [line for line in need_shared(LEGACY_TSV).read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def under(oid: tuple[int, ...], root: tuple[int, ...]) -> bool:
    return oid[: len(root)] == root and len(oid) > len(root)


def test_loads_and_validates(catalog):
    assert len(catalog) > 600
    assert catalog.legacy_root == parse_oid("1.3.6.1.4.1.20267.200.1")
    assert catalog.new_root == parse_oid("1.3.6.1.4.1.20267.200.2")
    for source in ("global_status", "global_variables", "innodb", "replication", "binlog", "processlist",
                   "host", "process", "heartbeat", "perf_schema_memory", "derived", "leak", "agent"):
        assert catalog.from_source(source), f"no metric from {source}"


def test_every_legacy_object_unchanged(catalog):
    by_n = {m.snmp.legacy.n: m for m in catalog.legacy()}
    rows = legacy_rows()
    assert len(rows) == 160 and set(by_n) == {int(r["n"]) for r in rows}
    for row in rows:
        n = int(row["n"])
        legacy = by_n[n].snmp.legacy
        assert format_oid(legacy.oid) == row["oid"] == f"{format_oid(catalog.legacy_root)}.{n}"
        syntax = "Counter64" if row["syntax"].startswith("MYSQLUnsigned64") else row["syntax"]
        assert legacy.type == syntax, n
        expected_name = "myInnoDBSemWaitTime" if n == 145 else row["name"]
        assert legacy.name == expected_name, n
        assert legacy.key == row["legacy_key"], n
        assert legacy.opennms_alias == (row["opennms_alias"] or None), n


def test_legacy_objects_read_the_key_the_original_read(catalog):
    # Where the original read one SHOW STATUS/VARIABLES row, we read the same row.
    for metric in catalog.legacy():
        if metric.source.kind in ("global_status", "global_variables"):
            assert metric.source.key == metric.snmp.legacy.key, metric.name


def test_legacy_fallbacks_stand_in_for_the_same_quantity(catalog):
    with_fallback = [m for m in catalog.legacy() if m.snmp.legacy.fallback]
    assert with_fallback
    for metric in with_fallback:
        for name in metric.snmp.legacy.fallback:
            other = catalog.by_name(name)
            assert (other.kind, other.labels) == (metric.kind, ()), (metric.name, name)
            # the same source, or the server's SHOW STATUS variable for the same counter
            assert other.source.kind in (metric.source.kind, "global_status", "derived"), (metric.name, name)


def test_loader_rejects_a_fallback_to_an_unknown_metric(document):
    broken = dict(document)
    metrics = [dict(m) for m in document["metrics"]]
    for m in metrics:
        if m.get("snmp", {}).get("legacy", {}).get("fallback"):
            m["snmp"] = {**m["snmp"], "legacy": {**m["snmp"]["legacy"], "fallback": ["no_such_metric"]}}
            break
    broken["metrics"] = metrics
    with pytest.raises(CatalogError, match="no_such_metric"):
        parse_catalog(broken)


def test_row_scalars_serve_the_rows_of_the_series_their_size_objects_serve(catalog):
    """myLeakDictionaryState & co. read the leak table's rows of exactly the series the InnoDB
    memory report's size objects serve (their own value, then their legacy fallback)."""
    from mysql_snmp.agents.leak.config import DEFAULT_SERIES

    watched = {raw["name"] for raw in DEFAULT_SERIES}
    sizes = {"leak_dictionary": "innodb_mem_dictionary_cache_bytes",
             "leak_adaptive_hash": "innodb_mem_adaptive_hash_index_bytes",
             "leak_innodb_total": "innodb_mem_total_allocated_bytes"}
    for prefix, size_name in sizes.items():
        size = catalog.by_name(size_name)
        served = (size.name, *size.snmp.legacy.fallback)
        for suffix, row_metric in (("_state", "leak_state"), ("_growth_bytes_per_hour", "leak_growth_bytes_per_hour")):
            metric = catalog.by_name(prefix + suffix)
            assert catalog.row_metric(metric).name == row_metric
            assert [dict(labels)["series"] for labels in metric.source.row] == list(served), metric.name
            assert metric.snmp.oid[:-1] == catalog.new_root + (10,) and metric.prometheus is None
        assert set(served) <= watched, size_name  # the detector has a row for each


@pytest.mark.parametrize("change, message", [
    ({"labels": ["series"], "snmp": {"name": "myLeakDictionaryState", "table": "myLeakTable", "column": 9,
                                     "type": "INTEGER"}}, "takes no labels"),
    ({"prometheus": {"name": "mysql_leak_dictionary_state", "type": "gauge"}}, "no prometheus spec"),
    ({"source": {"from": "leak", "key": "no_such_key", "row": {"series": ["x"]}}}, "0 labelled metrics"),
    ({"source": {"from": "leak", "key": "state", "row": {"event_name": ["x"]}}}, "do not index leak_state"),
    ({"source": {"from": "leak", "key": "state", "row": {"series": []}}}, "must list label values"),
])
def test_loader_rejects_a_bad_row_scalar(document, change, message):
    broken = dict(document)
    broken["metrics"] = [({**m, **change} if m["name"] == "leak_dictionary_state" else m) for m in document["metrics"]]
    with pytest.raises(CatalogError, match=message):
        parse_catalog(broken)


@pytest.mark.parametrize("integer_index, message", [
    (["no_such_label"], "not in its index"),
    ("pool", "list of label names"),
])
def test_loader_rejects_a_bad_integer_index(document, integer_index, message):
    broken = dict(document)
    broken["tables"] = [dict(t) for t in document["tables"]]
    broken["tables"][0]["integer_index"] = integer_index
    with pytest.raises(CatalogError, match=message):
        parse_catalog(broken)


def test_only_numeric_labels_are_integer_indexes(catalog):
    integer = {name: set(t.integer_index) for name, t in catalog.tables.items() if t.integer_index}
    assert integer == {"myBufferPoolTable": {"pool"}}


def test_legacy_145_keeps_its_oid_with_the_spelling_fixed(catalog):
    (metric,) = [m for m in catalog.legacy() if m.snmp.legacy.n == 145]
    assert metric.snmp.legacy.name == "myInnoDBSemWaitTime"
    assert format_oid(metric.snmp.legacy.oid) == "1.3.6.1.4.1.20267.200.1.145"


def test_every_legacy_object_has_a_new_tree_object(catalog):
    for metric in catalog.legacy():
        assert metric.snmp.oid and under(metric.snmp.oid, catalog.new_root), metric.name


def test_32_bit_legacy_counters_have_64_bit_twins(catalog):
    counters32 = [m for m in catalog.legacy() if m.snmp.legacy.type == "Counter32" and m.kind == "counter"]
    assert len(counters32) >= 60
    for metric in counters32:
        assert metric.snmp.type == "Counter64", metric.name
        assert metric.snmp.name == metric.snmp.legacy.name + "64"


def test_legacy_counter32_that_are_gauges_get_a_gauge_type_in_the_new_tree(catalog):
    # The original typed configuration variables, a high-water mark and log sizes Counter32.
    mistyped = [m for m in catalog.legacy() if m.snmp.legacy.type == "Counter32" and m.kind != "counter"]
    assert 0 < len(mistyped) < 10
    for metric in mistyped:
        high_water_mark = metric.source.key == "Max_used_connections"
        assert metric.source.kind != "global_status" or high_water_mark, metric.name
        assert metric.snmp.type in ("Gauge32", "Counter64"), metric.name
        assert (metric.snmp.type == "Counter64") == (metric.unit == "bytes"), metric.name


def test_new_tree_types_follow_the_header_rules(catalog):
    for metric in catalog:
        if not metric.snmp or (not metric.snmp.oid and not metric.snmp.table):
            continue
        smi = metric.snmp.type
        assert smi != "Counter32", f"{metric.name}: the new tree has no 32-bit counters"
        if metric.kind == "counter":
            assert smi == "Counter64", metric.name
        if metric.kind in ("string", "info"):
            assert smi == "DisplayString", metric.name
        if metric.kind == "gauge" and metric.unit == "bytes" and smi not in ("Integer32", "DisplayString"):
            assert smi == "Counter64", f"{metric.name}: byte gauges are CounterBasedGauge64"


def test_no_new_tree_oid_under_the_legacy_root(catalog):
    for metric in catalog:
        if metric.snmp and metric.snmp.oid:
            assert not under(metric.snmp.oid, catalog.legacy_root), metric.name
            assert under(metric.snmp.oid, catalog.new_root), metric.name
    for table in catalog.tables.values():
        assert under(table.oid, catalog.new_root), table.name


def test_scalars_sit_in_the_group_declared_for_their_source(catalog, document):
    groups = {tuple(parse_oid(g["oid"])): g for g in document["groups"]}
    notification_prefix = catalog.new_root + (0,)
    for metric in catalog:
        if not (metric.snmp and metric.snmp.oid):
            continue
        group = groups.get(metric.snmp.oid[:-1])
        assert group, f"{metric.name}: {format_oid(metric.snmp.oid)} is not in a declared group"
        assert metric.source.kind in group["sources"], f"{metric.name} in {group['name']}"
        assert not under(metric.snmp.oid, notification_prefix)


def test_groups_and_tables_do_not_overlap(catalog, document):
    group_oids = [parse_oid(g["oid"]) for g in document["groups"]]
    tables_group = [parse_oid(g["oid"]) for g in document["groups"] if g["name"] == "myTables"]
    assert len(tables_group) == 1
    for table in catalog.tables.values():
        assert table.oid[:-1] == tables_group[0], table.name
        assert table.oid not in group_oids


def test_table_columns_labels_equal_the_table_index(catalog):
    for name, table in catalog.tables.items():
        columns = catalog.table_columns(name)
        assert columns, f"table {name} has no column"
        assert len({c.snmp.column for c in columns}) == len(columns)
        for metric in columns:
            assert metric.labels == table.index, metric.name


def test_labelled_metrics_served_over_snmp_only_as_table_columns(catalog):
    for metric in catalog:
        if metric.labels and metric.snmp:
            assert metric.snmp.table and metric.snmp.oid is None, metric.name


def test_prometheus_series_unique(catalog):
    seen = {}
    shapes = {}
    for metric in catalog:
        if metric.prometheus:
            # A family is one name with one label set: entries sharing a family (Com_* in
            # mysql_global_status_commands_total) differ in their fixed label values.
            series = (metric.prometheus.name, metric.prometheus.labels)
            assert series not in seen, (metric.name, seen.get(series))
            seen[series] = metric.name
            shape = (metric.prometheus.type, metric.labels or tuple(k for k, _ in metric.prometheus.labels))
            assert shapes.setdefault(metric.prometheus.name, shape) == shape, metric.name


def test_grouped_status_families_declared_by_the_family_table(catalog):
    commands = catalog.by_name("status_com_select").prometheus
    assert (commands.name, commands.type, commands.labels) == (
        "mysql_global_status_commands_total", "counter", (("command", "select"),))
    assert catalog.by_name("status_uptime").prometheus.name == "mysql_global_status_uptime"
    assert catalog.by_name("status_innodb_buffer_pool_pages_total").prometheus is None
    assert catalog.families.project("global_status", "Innodb_buffer_pool_pages_total") is None
    dirty = catalog.families.project("global_status", "Innodb_buffer_pool_pages_dirty")
    assert (dirty.family, dirty.label) == ("mysql_global_status_buffer_pool_dirty_pages", None)


def test_catalog_entry_disagreeing_with_the_family_table_is_refused():
    document = yaml.safe_load(CATALOG_PATH.read_text())
    entry = next(m for m in document["metrics"] if m["name"] == "status_com_select")
    entry["prometheus"] = {"name": "mysql_global_status_com_select", "type": "untyped"}
    with pytest.raises(CatalogError, match="status_com_select.*differs from prometheus_families"):
        parse_catalog(document)


def test_named_families_declared_by_the_family_table(catalog):
    lag = catalog.families.project_named("replica_status", "seconds_behind_master")
    assert (lag.family, lag.type, lag.labels) == (
        "mysql_slave_status_seconds_behind_master", "untyped",
        ("master_host", "master_uuid", "channel_name", "connection_name"))
    read = catalog.families.project_named("innodb_metrics", "buffer_page_io/buffer_page_read_index_leaf")
    assert (read.family, read.type, read.label, read.label_value) == (
        "mysql_info_schema_innodb_metrics_buffer_page_read_total", "counter", "type", "index_leaf")
    assert catalog.families.project_named("innodb_metrics", "buffer/buffer_pool_pages_total") is None
    # Case kept and "/" made safe, as mysqld_exporter's innodb_metrics_<subsystem>_<name>.
    lru = catalog.families.project_named("innodb_metrics", "buffer/buffer_LRU_batch_flush_total_pages")
    assert (lru.family, lru.type) == ("mysql_info_schema_innodb_metrics_buffer_buffer_LRU_batch_flush_total_pages",
                                      "row")
    tokudb = catalog.families.project_named("engine_tokudb_status", "cachetable_size.current")
    assert (tokudb.family, tokudb.type) == ("mysql_engine_tokudb_cachetable_size_current", "untyped")
    assert catalog.families.project_named("no_such_source", "x") is None


@functools.cache
def _catalog_document() -> dict:
    return yaml.safe_load(CATALOG_PATH.read_text())


def _fresh_document() -> dict:
    """A copy of the catalog YAML to break (parsed once: 3 s a parse)."""
    return copy.deepcopy(_catalog_document())


def _named_rules(document: dict) -> dict:
    return document["prometheus_families"]["named"]


def test_named_family_taking_another_sources_catalog_name_is_refused():
    document = _fresh_document()
    _named_rules(document)["replica_status"][0]["name"] = "mysql_global_status_{}"
    with pytest.raises(CatalogError, match="named.replica_status: mysql_global_status_.* would take"):
        parse_catalog(document)


def test_named_fixed_family_taking_a_catalog_name_is_refused():
    document = _fresh_document()
    _named_rules(document)["processlist"][0]["name"] = "mysql_processlist_threads"
    with pytest.raises(CatalogError, match="mysql_processlist_threads would take mysql_processlist_threads"):
        parse_catalog(document)


@pytest.mark.parametrize("change, message", [
    (lambda rules: rules["processlist"][1].update(name="mysql_info_schema_processlist_threads"), "declared twice"),
    (lambda rules: rules["processlist"][0].update(labels=["command", "command"]), "named twice"),
    (lambda rules: rules["processlist"][0].update(labels="command"), "list of label names"),
    (lambda rules: rules["replica_status"][0].update(type="histogram"), "type 'histogram' not in"),
    (lambda rules: rules.update(global_status=[]), "already an every-row source"),
])
def test_malformed_named_rules_are_refused(change, message):
    document = _fresh_document()
    change(_named_rules(document))
    with pytest.raises(CatalogError, match=message):
        parse_catalog(document)


def test_row_labels_and_row_type_belong_to_named_rules_only():
    document = _fresh_document()
    document["prometheus_families"]["rows"]["global_variables"][0]["type"] = "row"
    with pytest.raises(CatalogError, match="type 'row' not in"):
        parse_catalog(document)
    document = _fresh_document()
    document["prometheus_families"]["rows"]["global_variables"][0]["labels"] = ["x"]
    with pytest.raises(CatalogError, match="row labels exist for prometheus_families.named only"):
        parse_catalog(document)


def test_counter_prometheus_names(catalog):
    for metric in catalog:
        p = metric.prometheus
        if not p:
            continue
        assert re.fullmatch(r"mysql_[a-z0-9_]+", p.name), p.name
        if p.type == "counter":
            assert metric.kind == "counter", metric.name
        compatible_untyped = (
            p.type == "untyped"
            and metric.source.kind == "global_status"
            and p.name == "mysql_global_status_" + metric.source.key.lower()
        )
        if compatible_untyped:
            continue  # the server's own name (Innodb_buffer_pool_pages_total is a gauge)
        if metric.kind == "counter" and p.type in ("untyped", "histogram", "summary"):
            # mysqld_exporter's name for a counter it serves without _total (untyped here, so the
            # name on the wire stays the same), or a histogram or summary (its series get _sum/_count).
            assert not p.name.endswith("_total"), metric.name
            continue
        if metric.kind == "counter":
            assert p.name.endswith("_total"), metric.name
        else:
            assert not p.name.endswith("_total"), metric.name


def test_mysqld_exporter_compatible_names(catalog):
    # mysqld_exporter's collector/global_status.go: these prefixes are labelled families.
    grouped = {"com_": ("commands_total", "command"), "handler_": ("handlers_total", "handler"),
               "connection_errors_": ("connection_errors_total", "error"),
               "innodb_rows_": ("innodb_row_ops_total", "operation"),
               "performance_schema_": ("performance_schema_lost_total", "instrumentation")}
    seen_groups = set()
    for metric in catalog.from_source("global_status"):
        key = metric.source.key.lower()
        assert metric.name == "status_" + key
        if not metric.prometheus or key.startswith("innodb_buffer_pool_pages_"):
            continue
        prefix = next((p for p in grouped if key.startswith(p)), None)
        if prefix is None:
            assert (metric.prometheus.name, metric.prometheus.type) == ("mysql_global_status_" + key, "untyped")
        else:
            seen_groups.add(prefix)
            family, label = grouped[prefix]
            assert metric.prometheus.name == "mysql_global_status_" + family
            assert metric.prometheus.labels == ((label, key[len(prefix):]),)
    assert seen_groups == set(grouped) - {"performance_schema_"}
    for metric in catalog.from_source("global_variables"):
        assert metric.name == "variable_" + metric.source.key.lower()
        assert metric.prometheus.name == "mysql_global_variables_" + metric.source.key.lower()
        assert metric.prometheus.type == "gauge"


def unit_word(name: str) -> str | None:
    match = re.search(r"_(bytes|seconds|milliseconds)(_total)?$", name)
    return match.group(1) if match else None


# A Prometheus scale turns the catalog's unit into the base unit Prometheus wants.
SCALED_UNITS = {("milliseconds", 0.001): "seconds", ("microseconds", 0.000001): "seconds"}


def test_units_in_names_agree_with_unit(catalog):
    for metric in catalog:
        names = [(metric.name, metric.unit)]
        if metric.prometheus:
            scaled = (metric.unit, metric.prometheus.scale)
            names.append((metric.prometheus.name, SCALED_UNITS.get(scaled, metric.unit)))
            assert metric.prometheus.scale == 1.0 or scaled in SCALED_UNITS, metric.name
        for name, unit in names:
            word = unit_word(name)
            if word:
                assert unit == word, f"{name} says {word}, unit is {unit!r}"
        own_name = metric.source.kind not in ("global_status", "global_variables")
        if own_name and metric.unit in ("seconds", "milliseconds") and metric.kind != "string":
            assert re.search(rf"_{metric.unit}(_|$)", metric.name), metric.name


def test_snmp_names_are_smi_descriptors(catalog, document):
    names = []
    for metric in catalog:
        if metric.snmp:
            names.append(metric.snmp.name)
            if metric.snmp.legacy:
                names.append(metric.snmp.legacy.name)
    for table in catalog.tables.values():
        names += [table.name, table.entry_name]
    names += [g["name"] for g in document["groups"]] + [n["name"] for n in document["notifications"]]
    for name in names:
        assert SMI_DESCRIPTOR.match(name) and len(name) <= 64, name
    # smilint rejects descriptors that differ only in case.
    lowered = [n.lower() for n in names]
    duplicates = {n for n in lowered if lowered.count(n) > 1}
    assert not duplicates


def test_new_tree_names_follow_the_catalog_names(catalog):
    # "my" + CamelCase(catalog name); derived values say so; 64-bit twins keep the legacy name.
    for metric in catalog:
        if not metric.snmp:
            continue
        legacy = metric.snmp.legacy
        if legacy and legacy.type == "Counter32" and metric.kind == "counter":
            expected = legacy.name + "64"
        else:
            camel = "".join(part[:1].upper() + part[1:] for part in metric.name.split("_"))
            expected = "my" + ("Derived" if metric.source.kind == "derived" else "") + camel
        assert metric.snmp.name == expected


def test_notifications(catalog, document):
    notifications = {n["name"]: n for n in document["notifications"]}
    assert set(notifications) == {"leakDetected", "leakCleared", "mysqlDown", "mysqlUp",
                                  "replicationStopped", "replicationStarted"}
    tables = {"leak": "myLeakTable", "mysql": None, "replication": "myReplicationChannelTable"}
    for name, n in notifications.items():
        oid = parse_oid(n["oid"])
        assert oid[:-1] == catalog.new_root + (0,)
        table = next(t for prefix, t in tables.items() if name.startswith(prefix))
        for obj in n["objects"]:
            assert catalog.by_name(obj).snmp.table == table, (name, obj)
    # each "back to normal" notification clears the alarm of its "bad" twin
    assert {n: d["clears"] for n, d in notifications.items() if "clears" in d} == {
        "leakCleared": "leakDetected", "mysqlUp": "mysqlDown", "replicationStarted": "replicationStopped"}
    assert document["conformance_oid"] == "1.3.6.1.4.1.20267.200.4"


def test_no_text_is_cut_at_a_comma_of_a_flow_mapping(document):
    """In a one-line YAML mapping an unquoted text ends at its first comma and the rest becomes a key
    with no value: the MIB once said 'Replication' for 'Replication, binary logs and heartbeat.'"""
    def cut_texts(node, where):
        if isinstance(node, dict):
            for key, value in node.items():
                if value is None:
                    yield f"{where}: {key!r}"
                yield from cut_texts(value, f"{where}/{key}")
        elif isinstance(node, list):
            for item in node:
                yield from cut_texts(item, f"{where}/{item.get('name', '') if isinstance(item, dict) else ''}")
    assert list(cut_texts(document, "")) == []


def catalog_help_texts(catalog) -> dict[str, str]:
    """Every help text the catalog serves: its entries' and its Prometheus family rules'."""
    texts = {metric.name: metric.help for metric in catalog}
    families = catalog.families
    for section in (families.rows, families.named):
        for source, rules in section.items():
            texts.update({f"{source} {rule.name}": rule.help for rule in rules if not rule.drop})
    texts.update({family.name: family.help for family in families.values})
    return texts


def test_help_is_written_here_not_copied_from_mysqld_exporter(catalog):
    """Metric names, labels and types carry over from mysqld_exporter; its help sentences do not.  The
    installed Go binary holds every help string of its own, so a copy (case and punctuation aside) is
    found in its text."""
    binary = Path(GO_EXPORTER)
    if not binary.exists():
        pytest.skip(f"{GO_EXPORTER} not installed (apt-get install prometheus-mysqld-exporter)")
    words = re.compile(rb"[^a-z0-9]+")
    their_text = words.sub(b" ", binary.read_bytes().lower())
    assert b" generic metric from show global status " in their_text  # upstream's wording is readable here
    copied = {where: text for where, text in catalog_help_texts(catalog).items()
              if words.sub(b" ", text.lower().encode()).strip() in their_text}
    assert copied == {}


@pytest.mark.parametrize(
    "path, reader",
    [
        (LIVE / "show-global-status.tsv", read_tsv_status),
        (LIVE / "show-global-status-after-workload.tsv", read_tsv_status),
        (NETDATA / "netdata-go.d.plugin-mysql-v8.0.30-global_status.txt", read_box_status),
        (NETDATA / "netdata-go.d.plugin-percona-v8.0.29-global_status.txt", read_box_status),
        (NETDATA / "netdata-go.d.plugin-mariadb-v10.8.4-global_status.txt", read_box_status),
    ],
    ids=lambda p: getattr(p, "name", ""),
)
def test_status_coverage_of_real_servers(status_by_key, path, reader):
    status = reader(path)
    assert len(status) > 400
    wanted = [
        name for name, value in status.items()
        if exported_family(name) and NUMBER.match(value) and name not in STATUS_IDENTITIES
    ]
    assert len(wanted) > 250
    missing = [name for name in wanted if name.lower() not in status_by_key]
    assert not missing


def test_status_counters_never_decrease_on_a_real_server(status_by_key):
    # Same MariaDB 10.11, idle then after a workload: a counter that went down is a gauge.
    before = read_tsv_status(LIVE / "show-global-status.tsv")
    after = read_tsv_status(LIVE / "show-global-status-after-workload.tsv")
    counters = 0
    for name, value in before.items():
        metric = status_by_key.get(name.lower())
        if metric is None or metric.kind != "counter" or not NUMBER.match(value):
            continue
        counters += 1
        assert float(after[name]) >= float(value), name
    assert counters > 300


def test_excluded_status_families_stay_out(status_by_key):
    for name in read_tsv_status(LIVE / "show-global-status.tsv"):
        if not exported_family(name):
            assert name.lower() not in status_by_key, name


def test_status_values_printed_with_a_fraction_are_display_strings(status_by_key):
    status = read_tsv_status(LIVE / "show-global-status-after-workload.tsv")
    for name, value in status.items():
        metric = status_by_key.get(name.lower())
        if metric and metric.snmp and NUMBER.match(value) and "." in value:
            assert metric.snmp.type == "DisplayString", name


def test_derived_and_agent_values(catalog):
    derived = {m.name: m for m in catalog.from_source("derived")}
    assert {"key_buffer_bytes_used", "key_buffer_bytes_unflushed", "table_cache"} <= set(derived)
    assert derived["table_cache"].snmp.legacy.n == 49
    agent = {m.name for m in catalog.from_source("agent")}
    assert {"agent_mysql_up", "agent_data_age_seconds", "agent_last_error",
            "agent_last_collection_timestamp_seconds"} <= agent
    for metric in catalog.from_source("agent"):
        if metric.prometheus:
            assert metric.prometheus.name.startswith(("mysql_agent_", "mysql_exporter_"))
            assert metric.prometheus.name != "mysql_up"


def test_legacy_status_overrides_name_a_status_variable_of_a_real_server(catalog):
    status = read_tsv_status(LIVE / "show-global-status.tsv")
    for name in ("mysql-v8.0.30", "percona-v8.0.29"):
        status.update(read_box_status(NETDATA / f"netdata-go.d.plugin-{name}-global_status.txt"))
    overrides = [m for m in catalog if m.source.status_override]
    assert overrides
    for metric in overrides:
        assert metric.source.kind == "innodb"
        assert metric.source.status_override in status, metric.name


def test_a_catalog_file_that_is_not_yaml_is_one_line_naming_file_and_place(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text("metrics:\n  - name: a\n   kind: b\n")
    with pytest.raises(CatalogError) as raised:
        load_catalog_file(path)
    # libyaml and the pure-Python loader word the problem differently; both give its place.
    message = str(raised.value)
    assert message.startswith(f"{path}: line 3, column 4: ") and "\n" not in message
    assert message.endswith("(while parsing a block collection)")
    with pytest.raises(CatalogError) as raised:
        load_catalog_file(tmp_path / "absent.yaml")
    assert str(raised.value) == f"{tmp_path / 'absent.yaml'}: cannot read: No such file or directory"


def test_the_exporters_catalog_is_the_full_one_without_its_snmp_side(catalog):
    exporters = load_exporter_catalog()
    assert exporters is not catalog and len(exporters) == len(catalog)
    for full, projected in zip(catalog, exporters):
        assert projected.snmp is None
        assert (projected.name, projected.help, projected.unit, projected.kind, projected.source, projected.labels,
                projected.prometheus) == (full.name, full.help, full.unit, full.kind, full.source, full.labels,
                                          full.prometheus)
    # No SNMP tables, notifications or object groups.
    assert catalog.tables and "notifications" in catalog.extra
    assert exporters.tables == {} and set(exporters.extra) == {"module", "enterprise_oid", "legacy_root", "new_root"}
    assert exporters.families.names() == catalog.families.names()
    assert [v.name for v in exporters.families.values] == [v.name for v in catalog.families.values]
    assert exporters.families.rows.keys() == catalog.families.rows.keys()


def test_the_exporters_catalog_still_refuses_what_the_exporter_would_serve_wrongly(document):
    broken = copy.deepcopy(document)
    first, second = [m for m in broken["metrics"] if m.get("prometheus") and m["source"]["from"] == "innodb"][:2]
    second["prometheus"] = dict(first["prometheus"])
    with pytest.raises(CatalogError, match="already used by"):
        parse_catalog(without_snmp(broken))
    with pytest.raises(CatalogError, match="missing or malformed field"):
        without_snmp({"module": "X", "metrics": ["not an entry"]})


def test_catalog_words_that_repeat_are_one_object_each(catalog):
    counters = [m for m in catalog if m.kind == "counter" and m.prometheus and m.prometheus.type == "counter"]
    assert len(counters) > 100
    assert len({id(m.kind) for m in counters}) == 1
    assert len({id(m.source.kind) for m in catalog.from_source("global_status")}) == 1
    assert len({id(m.prometheus.type) for m in counters}) == 1
