"""The generated graph reports, thresholds and events only use what the collection provides."""

import csv
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.generate import opennms, opennms_collection, opennms_graphs
from tests.generate.opennms_properties import command_arguments, parse_properties, reports

REPO = Path(__file__).resolve().parents[2]
NEW_REPORTS = {"innodbdictionarymemory", "innodbadaptivehashmemory", "innodbtotalmemory", "leakstate", "leakgrowth", "leakforecast", "innodbcheckpointlimit", "innodbhistorylist",
               "replicationlag", "replicationchannellag", "replicationchannelthreads", "innodbsemaphoreoswaits",
               "bufferpoolpages", "hostload", "hostcpu", "hostmemory", "mysqldmemory", "mysqldcpu"}


@pytest.fixture(scope="module")
def collected():
    return {c.alias: c for c in opennms_collection.collected_objects(load_catalog())}


@pytest.fixture(scope="module")
def graph_reports():
    return reports(parse_properties((REPO / opennms_graphs.GRAPHS_PATH).read_text()))


def test_the_originals_report_ids_and_data_sources_without_its_defects(shared_dir, graph_reports):
    with open(shared_dir / "reference" / "mysql-snmp-legacy-graphs.tsv") as f:
        rows = list(csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"))
    assert len(rows) == 38
    for row in rows:
        report = graph_reports[f"mysql.{row['id']}"]
        assert report["name"] == (row["name"] or "MyISAM Key Cache")
        assert report["columns"].split(",") == list(dict.fromkeys(row["columns"].split(",")))  # duplicates dropped
        assert report["type"] == "nodeSnmp"
    assert {rid.removeprefix("mysql.") for rid in graph_reports} == {r["id"] for r in rows} | NEW_REPORTS


def test_every_column_is_collected_for_the_reports_resource_type(graph_reports, collected):
    for rid, report in graph_reports.items():
        columns = report["columns"].split(",")
        assert len(columns) == len(set(columns)), rid
        for alias in columns:
            assert collected[alias].rrd_type is not None, (rid, alias)
            assert (collected[alias].resource_type or "nodeSnmp") == report["type"], (rid, alias)
        files = [f"/rrd/{alias}.rrd" for alias in columns]
        arguments = command_arguments(report["command"], files, 1, 2)
        defs = [a for a in arguments if a.startswith("DEF:")]
        # DEF:name=<file of column N>:<that column's data source>:AVERAGE, one per column, in order
        assert [d.split("=", 1)[1] for d in defs] == [f"{path}:{alias}:AVERAGE" for path, alias in zip(files, columns)]
        variables = [a.split(":")[1].split("=")[0] for a in arguments if re.match(r"^[CV]?DEF:", a)]
        assert len(variables) == len(set(variables)), rid  # no rrdtool variable defined twice
        assert arguments[0].startswith("--title=") and report["name"] in arguments[0]


def test_resource_type_reports_use_their_type(graph_reports):
    types = {rid.removeprefix("mysql."): r["type"] for rid, r in graph_reports.items()}
    assert types["bufferpoolpages"] == "myBufferPoolEntry"
    assert types["leakstate"] == types["leakgrowth"] == types["leakforecast"] == "myLeakEntry"
    assert types["replicationchannellag"] == types["replicationchannelthreads"] == "myReplicationChannelEntry"
    assert types["hostcpu"] == "myHostCpuEntry"
    assert types["innodbdictionarymemory"] == types["hostmemory"] == types["replicationlag"] == "nodeSnmp"


def test_every_report_sets_its_size_and_draws_on_a_linear_axis(graph_reports):
    """rrdtool's default 400x100 cuts the longest legends; Backshift ignores --logarithmic."""
    for rid, report in graph_reports.items():
        arguments = command_arguments(report["command"], ["/f"] * len(report["columns"].split(",")), 1, 2)
        assert f"--width={opennms_graphs.WIDTH}" in arguments and f"--height={opennms_graphs.HEIGHT}" in arguments, rid
        assert not [a for a in arguments if a.startswith(("--logarithmic", "-o"))], rid


def test_legends_and_vertical_labels_say_what_each_line_is(graph_reports):
    text = (REPO / opennms_graphs.GRAPHS_PATH).read_text()
    assert "Inno DB" not in text and "I Os" not in text and "My ISAM" not in text
    assert '"Pending AIO Log IOs' in text and '"InnoDB Tables In Use' in text and '"InnoDB Transactions per s' in text
    connections = graph_reports["mysql.mysqlconnections"]["command"]
    # levels (gauges) and rates (counters) on one axis: the rates say so, the axis names the levels' unit
    assert '--vertical-label="connections / threads"' in connections
    assert '"Aborted Clients per s' in connections and '"Max Used Connections  "' in connections
    files = graph_reports["mysql.mysqlfilesandtables"]["command"]
    assert '--vertical-label="tables / files"' in files


def test_thresholds_validate_and_use_collected_data_sources(shared_dir, collected):
    schema = shared_dir / "schemas" / "opennms" / "thresholding.xsd"
    for path in (opennms.THRESHOLDS_PATH, opennms.THRESHD_PATH):
        result = subprocess.run(["xmllint", "--noout", "--schema", str(schema), str(REPO / path)],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and "validates" in result.stderr, result.stderr
    ns = {"t": "http://xmlns.opennms.org/xsd/config/thresholding"}
    root = ET.parse(REPO / opennms.THRESHOLDS_PATH).getroot()
    groups = {g.get("name"): g for g in root.findall("t:group", ns)}
    assert set(groups) == {"mysql-leak", "mysql-replication", "mysql-connections"}
    for group in groups.values():
        for element in list(group):
            names = [element.get("ds-name")] if element.get("ds-name") else re.findall(r"[A-Za-z]\w*", element.get("expression"))
            for alias in names:
                expected = collected[alias].resource_type or "node"
                assert element.get("ds-type") == expected, alias
    package = ET.parse(REPO / opennms.THRESHD_PATH).getroot().find("t:package/t:service", ns)
    assert {p.get("value") for p in package.findall("t:parameter", ns)} == set(groups)


def test_an_event_for_every_notification_of_the_mib():
    mib = (REPO / "mibs" / "MYSQL-SERVER-MIB.txt").read_text()
    in_mib = set(re.findall(r"^(\w+) NOTIFICATION-TYPE", mib, re.M))
    assert in_mib == {"leakDetected", "leakCleared", "mysqlDown", "mysqlUp", "replicationStopped", "replicationStarted"}
    ns = {"e": "http://xmlns.opennms.org/xsd/eventconf"}
    root = ET.parse(REPO / opennms.EVENTS_PATH).getroot()
    events = {e.findtext("e:uei", namespaces=ns).rsplit("/", 1)[1]: e for e in root.findall("e:event", ns)}
    assert set(events) == in_mib
    for bad, good in (("mysqlDown", "mysqlUp"), ("replicationStopped", "replicationStarted")):
        raised = events[bad].find("e:alarm-data", ns)
        cleared = events[good].find("e:alarm-data", ns)
        assert raised.get("alarm-type") == "1" and cleared.get("alarm-type") == "2"
        assert cleared.get("clear-key") == raised.get("reduction-key")
        assert "%parm[name-#1]%" in raised.get("reduction-key")  # per channel: the varbind's instance


def _evaluate(expression: str, values: dict[str, float]) -> float:
    """An OpenNMS (JEXL) threshold expression of the forms generated: a ternary over arithmetic."""
    python = re.sub(r"^(.+?) \? (.+?) : (.+)$", r"(\2) if (\1) else (\3)", expression)
    return eval(python, {"__builtins__": {}}, dict(values))  # noqa: S307 - our own generated text


def test_leak_rate_and_forecast_thresholds_hold_off_while_the_series_is_ok():
    """A warm-up after a restart grows fast (mysqld 265 -> 476 MB in its first hour) while the
    detector keeps the series ok: neither threshold crosses then; both do once it is suspect."""
    ns = {"t": "http://xmlns.opennms.org/xsd/config/thresholding"}
    root = ET.parse(REPO / opennms.THRESHOLDS_PATH).getroot()
    leak = next(g for g in root.findall("t:group", ns) if g.get("name") == "mysql-leak")
    rate = next(e for e in leak.findall("t:expression", ns) if "64 MiB/h" in e.get("description"))
    forecast = next(e for e in leak.findall("t:expression", ns) if "within a week" in e.get("description"))
    warm_up = {"myLeakState": 0, "myLeakGrowthBph": 211 * 2**20, "myLeakTimeToLimit": 3 * 86400}
    for state, crosses in ((0, False), (1, True), (2, True)):
        values = {**warm_up, "myLeakState": state}
        assert (_evaluate(rate.get("expression"), values) > float(rate.get("value"))) is crosses, state
        assert (_evaluate(forecast.get("expression"), values) < float(forecast.get("value"))) is crosses, state
