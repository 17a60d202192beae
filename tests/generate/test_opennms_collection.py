"""The generated OpenNMS data collection: valid, the original's aliases kept, new aliases sound."""

import csv
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import load_catalog, parse_catalog
from mysql_snmp.agents.generate import opennms_collection
from mysql_snmp.agents.generate.opennms_aliases import ALIAS_LIMIT, AliasError, abbreviate, all_aliases

REPO = Path(__file__).resolve().parents[2]
NS = {"d": opennms_collection.NAMESPACE}
# The original collected these gauges and settings as counters (its RRD files hold COUNTER data
# sources, which OpenNMS keeps writing until `rrdtool tune`, docs/opennms.md); new installations
# get them as the gauges they are.
TYPE_CORRECTIONS = {"myInnoDBSemWaits": "Gauge64", "myInooDBSemWaitTime": "Gauge64",  # TSV spelling
                    **dict.fromkeys(("myInnodbOpenFiles", "myOpenFilesLimit", "myTableCache", "myMaxUsedConnections",
                                     "myQueryCacheSize", "myRelayLogSpace", "myBinaryLogSpace"), "Gauge32")}


@pytest.fixture(scope="module")
def group():
    return ET.parse(REPO / opennms_collection.GROUP_PATH).getroot()


@pytest.fixture(scope="module")
def mibobjs(group):
    return [(g.get("name"), g.get("ifType"), o.attrib) for g in group.findall("d:group", NS)
            for o in g.findall("d:mibObj", NS)]


@pytest.mark.parametrize("path", [opennms_collection.GROUP_PATH, opennms_collection.SNIPPET_PATH])
def test_validates_against_the_opennms_schema(shared_dir, path):
    schema = shared_dir / "schemas" / "opennms" / "datacollection-config.xsd"
    result = subprocess.run(["xmllint", "--noout", "--schema", str(schema), str(REPO / path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"{REPO / path} validates" in result.stderr


def test_the_originals_objects_keep_alias_oid_and_type(shared_dir, mibobjs):
    with open(shared_dir / "reference" / "mysql-snmp-legacy-objects.tsv") as f:
        rows = [r for r in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")]
    collected = {o["alias"]: (group, o) for group, _, o in mibobjs}
    originals = [r for r in rows if r["opennms_alias"]]
    assert len(originals) == 150
    for row in originals:
        group, obj = collected[row["opennms_alias"]]
        assert group == opennms_collection.LEGACY_GROUP
        assert (obj["oid"], obj["instance"]) == ("." + row["oid"], "0")
        assert obj["type"] == TYPE_CORRECTIONS.get(row["name"], row["opennms_type"]), row["name"]


def test_aliases_are_short_unique_and_64_bit_where_the_value_is(mibobjs):
    aliases = [o["alias"] for _, _, o in mibobjs]
    assert len(aliases) == len(set(aliases)) > 1000
    assert all(re.fullmatch(r"[A-Za-z0-9_]{1,19}", a) for a in aliases)
    catalog = load_catalog()
    by_oid = {"." + ".".join(map(str, m.snmp.oid)): m for m in catalog if m.snmp and m.snmp.oid}
    for group, _, obj in mibobjs:
        metric = by_oid.get(obj["oid"])
        if metric is None or group == opennms_collection.LEGACY_GROUP:
            continue
        if metric.snmp.type == "Counter64":
            assert obj["type"] == ("Counter64" if metric.kind == "counter" else "Gauge64"), metric.name
    assert {"myKeyReadRequests64", "myLeakGrowthBph", "myLeakTimeToLimit"} <= set(aliases)


def test_tables_are_resource_types_collected_for_all_instances(group, mibobjs):
    catalog = load_catalog()
    resource_types = {r.get("name"): r for r in group.findall("d:resourceType", NS)}
    for table in catalog.tables.values():
        assert table.entry_name in resource_types
        groups = (opennms_collection.table_group(table), opennms_collection.table_group(table) + "-full")
        columns = [o for name, if_type, o in mibobjs if name in groups]
        assert len(columns) == len(catalog.table_columns(table.name))
        assert {o["instance"] for o in columns} == {table.entry_name}
        assert all(if_type == "all" for name, if_type, _ in mibobjs if name in groups)
        # A row is stored and labelled by its text, never by an index OID of the text's bytes.
        strategy = resource_types[table.entry_name].find("d:storageStrategy", NS).get("class")
        if table.integer_index:
            assert strategy.endswith("IndexStorageStrategy")
            assert resource_types[table.entry_name].get("resourceLabel") == "pool ${index}"
        else:
            assert strategy.endswith("SiblingColumnStorageStrategy"), table.name
            assert re.fullmatch(r"\$\{my\w+\}", resource_types[table.entry_name].get("resourceLabel"))
    leak = resource_types["myLeakEntry"].find("d:storageStrategy", NS)
    assert leak.get("class").endswith("SiblingColumnStorageStrategy")
    assert [p.attrib for p in leak.findall("d:parameter", NS)] == [
        {"key": "sibling-column-name", "value": "myLeakSeriesName"}, {"key": "replace-all", "value": "s/[^A-Za-z0-9_.-]/_/"}]


def test_node_level_groups_and_the_net_snmp_system_definitions(group, mibobjs):
    groups = [g.get("name") for g in group.findall("d:group", NS)]
    systems = {s.get("name"): s for s in group.findall("d:systemDef", NS)}
    assert set(systems) == {"mysql-snmp", "mysql-snmp-full"}
    included = {}
    for name, system in systems.items():
        assert system.findtext("d:sysoidMask", namespaces=NS) == ".1.3.6.1.4.1.8072.3."
        included[name] = [e.text for e in system.findall("d:collect/d:includeGroup", NS)]
    # every group in exactly one; the default one: the original's group and no -full group
    assert sorted(included["mysql-snmp"] + included["mysql-snmp-full"]) == sorted(groups)
    assert included["mysql-snmp"][0] == "mysql"
    assert all(g.endswith("-full") for g in included["mysql-snmp-full"])
    assert not [g for g in included["mysql-snmp"] if g.endswith("-full")]
    scalars = {o["oid"] for name, if_type, o in mibobjs if if_type == "ignore"}
    catalog = load_catalog()
    assert scalars >= {"." + ".".join(map(str, m.snmp.oid)) for m in catalog if m.snmp and m.snmp.oid}


def test_the_default_collection_is_what_reports_draw_and_thresholds_watch():
    """Each object of the default system definition beyond the original's is drawn by a shipped
    report, read by a threshold, or names a table row; the rest is opt-in."""
    from mysql_snmp.agents.generate import opennms, opennms_graphs

    catalog = load_catalog()
    objects = opennms_collection.collected_objects(catalog)
    default = [c for c in objects if not c.group.endswith("-full")]
    used = {name for r in opennms_graphs.REPORTS for name in r.columns} | set(opennms.THRESHOLDED_OBJECTS)
    names = {opennms_collection.name_column(catalog, t).snmp.name for t in catalog.tables.values()
             if opennms_collection.name_column(catalog, t) is not None}
    for c in default:
        assert c.group == "mysql" or c.snmp_name in used | names, c.snmp_name
    assert used <= {c.snmp_name for c in default}
    assert 150 < len(default) < 200 < len(objects)


def test_abbreviation_keeps_short_names_and_is_stable():
    assert abbreviate("myKeyReads64") == "myKeyReads64"
    for name in ("myStatusInnodbScrubBackgroundPageSplitFailuresUnderflow", "myInnodbPoolEvictedWithoutAccessPerSecond",
                 "myStatusComDropSpatialReferenceSystem"):
        alias = abbreviate(name)
        assert len(alias) <= ALIAS_LIMIT and alias.startswith("my") and alias == abbreviate(name)
    assert abbreviate("myInnodbMemDictionaryBytes") == "myInnodbMemDictB"  # words shortened from the right


def test_two_objects_deriving_one_alias_fail_generation():
    document = {
        "module": "M", "enterprise_oid": "1.3.6.1.4.1.1", "legacy_root": "1.3.6.1.4.1.1.1.1",
        "new_root": "1.3.6.1.4.1.1.1.2",
        "metrics": [
            {"name": n, "help": "h", "kind": "gauge", "source": {"from": "derived"},
             "snmp": {"name": s, "type": "Gauge32", "oid": f"1.3.6.1.4.1.1.1.2.1.{i}"}}
            for i, (n, s) in enumerate((("a", "myStatusInnodbDataRead"), ("b", "myStatusInnodbDataReadsXx")), 1)
        ],
    }
    catalog = parse_catalog(document)
    assert len(all_aliases(catalog)) == 2
    document["metrics"][1]["snmp"]["opennms_alias"] = abbreviate("myStatusInnodbDataRead")
    with pytest.raises(AliasError, match="used by myStatusInnodbDataRead and myStatusInnodbDataReadsXx"):
        all_aliases(parse_catalog(document))


def test_the_upgrade_steps_tune_exactly_the_data_sources_whose_type_changed(shared_dir, mibobjs):
    """docs/opennms.md's `rrdtool tune` list: every original object now collected with another type."""
    with open(shared_dir / "reference" / "mysql-snmp-legacy-objects.tsv") as f:
        rows = [r for r in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")]
    collected = {o["alias"]: o["type"] for _, _, o in mibobjs}
    changed = {r["opennms_alias"] for r in rows if r["opennms_alias"] and collected[r["opennms_alias"]] != r["opennms_type"]}
    docs = (REPO / "docs" / "opennms.md").read_text()
    listed = re.search(r'GAUGES="([^"]*)"', docs).group(1).split()
    assert set(listed) == changed and len(listed) == 9


def test_a_rows_directory_is_bounded_by_the_index_the_agent_can_serve():
    """A text row is stored under its name (at most the bytes its index OID can carry: the agent
    serves no row past 128 sub-identifiers), so <resource type>/<name>/<alias>.rrd stays under
    180 bytes, leaving 20 for the node's directory within the emulator's 200."""
    from mysql_snmp.agents.agentx.tableindex import MAX_OID_LENGTH, ROW_NAME_SEPARATOR

    catalog = load_catalog()
    objects = opennms_collection.collected_objects(catalog)
    for table in catalog.tables.values():
        if table.integer_index:
            continue
        assert opennms_collection.name_column(catalog, table) is not None, table.name
        column_oid = len(table.oid) + 2
        longest_name = MAX_OID_LENGTH - column_oid - len(table.index) + len(ROW_NAME_SEPARATOR) * (len(table.index) - 1)
        alias = max(len(c.alias) for c in objects if c.resource_type == table.entry_name)
        assert len(f"{table.entry_name}/{'x' * longest_name}/{'a' * alias}.rrd") <= 180, table.name


def test_the_upgrade_script_turns_the_originals_counter_files_into_gauges(tmp_path):
    """docs/opennms.md's script, run as written on files as the original left them (one per alias
    under a node, and a storeByGroup mysql.rrd under a foreign-source node)."""
    docs = (REPO / "docs" / "opennms.md").read_text()
    script = re.search(r"```sh\n(.*?)```", docs, re.S).group(1)
    script = "\n".join(line[3:] for line in script.splitlines())  # the list item's indent
    script = script.replace("cd /var/lib/opennms/rrd/snmp", f"cd {tmp_path}")
    rra = "RRA:AVERAGE:0.5:1:10"
    (tmp_path / "7").mkdir()
    (tmp_path / "fs" / "shop" / "db1").mkdir(parents=True)
    for alias in ("myQueryCacheSize", "myComSelect"):
        subprocess.run(["rrdtool", "create", str(tmp_path / "7" / f"{alias}.rrd"), f"DS:{alias}:COUNTER:600:U:U", rra],
                       check=True)
    group = tmp_path / "fs" / "shop" / "db1" / "mysql.rrd"
    subprocess.run(["rrdtool", "create", str(group), "DS:myTableCache:COUNTER:600:U:U", "DS:myComSelect:COUNTER:600:U:U",
                    "DS:myInnoDBSemWaits:COUNTER:600:U:U", rra], check=True)
    result = subprocess.run(["sh", "-e", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

    def types(path):
        info = subprocess.run(["rrdtool", "info", str(path)], capture_output=True, text=True, check=True).stdout
        return dict(re.findall(r'ds\[(\w+)\]\.type = "(\w+)"', info))

    assert types(tmp_path / "7" / "myQueryCacheSize.rrd") == {"myQueryCacheSize": "GAUGE"}
    assert types(tmp_path / "7" / "myComSelect.rrd") == {"myComSelect": "COUNTER"}
    assert types(group) == {"myTableCache": "GAUGE", "myComSelect": "COUNTER", "myInnoDBSemWaits": "GAUGE"}
