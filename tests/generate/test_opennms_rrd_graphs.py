"""Proof with the real tool: the generated graph reports render with Debian's rrdtool from RRD
files written the way OpenNMS writes them, filled from real collections of the throwaway MariaDB
replica (values read from the agent's SNMP view, as OpenNMS's collector would walk them).

Each report's command is read from the generated properties file (Java escapes), gets
``{rrdN}`` / ``{startTime}`` / ``{endTime}`` substituted and OpenNMS's default command prefix
(rrd-configuration.properties), and must give a PNG.

The README's example graph (the InnoDB memory report: sizes with their leak state) comes from
the same files:
    MYSQL_SNMP_WRITE_GRAPH=docs/opennms-dictionary-leak.png \\
        .venv/bin/python -m pytest tests/generate/test_opennms_rrd_graphs.py
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.generate import opennms_collection, opennms_graphs
from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.sources.heartbeat import HeartbeatOptions
from tests.generate.opennms_properties import command_arguments, parse_properties, reports
from tests.generate.opennms_rrd import RrdRepository, sibling_directory
from tests.support import root_settings

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS = 6
# OpenNMS's rrd-configuration.properties default, before each report's command.
COMMAND_PREFIX = "--imgformat PNG --font DEFAULT:7 --font TITLE:10 --start {startTime} --end {endTime}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LEAK_SERIES = "innodb_mem_dictionary_bytes"
# Reports whose data sources a MariaDB 10.11 replica does not give (README: legacy objects table);
# they render from the files OpenNMS would create, with no line drawn.
# The leak detector has no trend (growth, forecast) after seconds of history, so neither the
# leak reports nor InnoDB memory's growth columns have values yet; MariaDB 10.5+ has one
# buffer pool and prints no per-instance blocks.
NO_DATA_ON_MARIADB_1011 = {
    "innodbinsertbufferusage", "innodbsemaphores", "innodbrowoperations", "innodbiopending",
    "innodbinternalhashmemoryusage", "innodbmemoryallocation", "innodbadaptivehashindex",
    "innodbsemaphoreoswaits", "bufferpoolpages", "leakgrowth", "leakforecast", "innodbmemory",
}
# InnoDB memory's node-level leak states and the myLeakEntry row each copies on MariaDB 10.11
# (the series its size object serves there: the legacy objects' fallbacks).
NODE_LEAK_STATES = {
    "myLeakDictState": "innodb_mem_dictionary_bytes",
    "myLeakAhiState": "status_innodb_mem_adaptive_hash",
    "myLeakTotalState": "innodb_mem_total_large_allocated_bytes",
}


def need_rrdtool():
    if shutil.which("rrdtool") is None:
        pytest.fail("rrdtool is not installed (Debian package rrdtool)")


@pytest.fixture(scope="module")
def repository(tmp_path_factory, mariadb, mariadb_replica):
    """RRD files of one node (the replica) after COLLECTIONS collections a second apart."""
    need_rrdtool()
    catalog = load_catalog()
    collected = opennms_collection.collected_objects(catalog)
    root = tmp_path_factory.mktemp("rrd")
    rrd = RrdRepository(root, "1", collected, catalog)
    layout = TreeLayout.from_catalog(catalog)
    detector = LeakDetector({"state_file": None, "bin_seconds": 1})
    mariadb.execute("CREATE DATABASE IF NOT EXISTS rrd_hb", "CREATE DATABASE IF NOT EXISTS rrd_tables",
                    "CREATE TABLE IF NOT EXISTS rrd_hb.heartbeat (ts varchar(26) NOT NULL, "
                    "server_id int unsigned NOT NULL PRIMARY KEY)")
    heartbeat = HeartbeatOptions(database="rrd_hb", table="heartbeat")
    times = []
    with Collector(root_settings(mariadb_replica), heartbeat=heartbeat) as collector:
        for step in range(COLLECTIONS):
            # the dictionary grows as the primary creates tables the replica applies
            mariadb.execute(*(f"CREATE TABLE IF NOT EXISTS rrd_tables.t{step}_{i} (a int) ENGINE=InnoDB"
                              for i in range(40)),
                            "REPLACE INTO rrd_hb.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)")
            time.sleep(1.0 - time.time() % 1.0 + 0.05)  # one collection per second, distinct timestamps
            snapshot = collector.collect()
            assert snapshot.up, snapshot.error
            detector.observe(snapshot)
            now = int(time.time())
            rrd.store(build_view(layout, snapshot), now)
            times.append(now)
    rrd.times = times
    rrd.root = root
    yield rrd
    rrd.close()


def report_files(rrd: RrdRepository, report: dict) -> list[Path]:
    """The files of the report's columns on one resource of its type (OpenNMS: a resource that has them all)."""
    columns = report["columns"].split(",")
    if report["type"] == "nodeSnmp":
        directories = [rrd.node_dir]
    else:
        base = rrd.node_dir / report["type"]
        preferred = base / sibling_directory(LEAK_SERIES)
        directories = sorted(base.iterdir(), key=lambda d: d != preferred) if base.is_dir() else []
        if not directories:  # no row on this server: files go where OpenNMS puts the first one
            directories = [base / "0"]
    for directory in directories:
        files = [directory / f"{alias}.rrd" for alias in columns]
        if all(f.exists() for f in files):
            return files
    # A column no row had a value for yet (a leak growth rate before any trend): its file as
    # OpenNMS creates it on the first value, on the preferred resource.
    by_alias = {c.alias: c for c in rrd.collected}
    rrd.create_empty(directories[0], [by_alias[a] for a in columns], rrd.times[0])
    return [directories[0] / f"{alias}.rrd" for alias in columns]


def render(arguments: list[str], png: Path) -> None:
    result = subprocess.run(["rrdtool", "graph", str(png), *arguments], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "LC_ALL": "C", "TZ": "UTC"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_every_report_renders_a_png_from_real_collections(repository, tmp_path):
    rrd = repository
    properties = parse_properties((REPO / opennms_graphs.GRAPHS_PATH).read_text())
    start, end = rrd.times[0] - 2, rrd.times[-1] + 1
    without_data = set()
    for rid, report in reports(properties).items():
        files = report_files(rrd, report)
        if not all(f in rrd.filled for f in files):
            without_data.add(rid.removeprefix("mysql."))
        command = COMMAND_PREFIX + " " + report["command"]
        arguments = command_arguments(command, [str(f) for f in files], start, end)
        assert str(start) in arguments and str(end) in arguments
        render(arguments, tmp_path / f"{rid}.png")
    assert without_data == NO_DATA_ON_MARIADB_1011, " ".join(sorted(without_data))
    assert len(list(tmp_path.glob("*.png"))) == len(opennms_graphs.REPORTS)


def test_files_are_what_opennms_writes(repository):
    rrd = repository
    dictionary = rrd.node_dir / "myDictionaryCchMmry.rrd"
    info = subprocess.run(["rrdtool", "info", str(dictionary)], capture_output=True, text=True, check=True).stdout
    assert 'ds[myDictionaryCchMmry].type = "GAUGE"' in info
    counter = subprocess.run(["rrdtool", "info", str(rrd.node_dir / "myComSelect.rrd")], capture_output=True,
                             text=True, check=True).stdout
    assert 'ds[myComSelect].type = "COUNTER"' in counter
    leak = rrd.node_dir / "myLeakEntry" / sibling_directory(LEAK_SERIES) / "myLeakState.rrd"
    assert leak in rrd.filled
    fetched = subprocess.run(["rrdtool", "fetch", str(dictionary), "AVERAGE", "--start", str(rrd.times[0] - 1),
                              "--end", str(rrd.times[-1])], capture_output=True, text=True, check=True).stdout
    values = [float(line.split(":")[1]) for line in fetched.splitlines()[2:] if "nan" not in line.split(":")[1]]
    assert len(values) >= COLLECTIONS - 2
    assert values[-1] > values[0]  # 200 more tables in the dictionary


def fetch(path: Path, rrd: RrdRepository) -> list[str]:
    """The stored averages of one file over the collections, as rrdtool prints them."""
    text = subprocess.run(["rrdtool", "fetch", str(path), "AVERAGE", "--start", str(rrd.times[0] - 1),
                           "--end", str(rrd.times[-1])], capture_output=True, text=True, check=True).stdout
    return [line.split(":")[1].strip() for line in text.splitlines()[2:]]


def test_node_level_leak_states_are_the_rows_values(repository):
    """What the InnoDB memory report draws is the leak table's row, value for value."""
    rrd = repository
    for alias, series in NODE_LEAK_STATES.items():
        node = rrd.node_dir / f"{alias}.rrd"
        row = rrd.node_dir / "myLeakEntry" / sibling_directory(series) / "myLeakState.rrd"
        assert node in rrd.filled and row in rrd.filled, alias
        values = fetch(node, rrd)
        assert values == fetch(row, rrd), alias
        assert sum("nan" not in v for v in values) >= COLLECTIONS - 2, alias


def test_readme_graph_is_the_innodb_memory_report(repository, tmp_path):
    """The README's graph: the generated InnoDB memory report (sizes with their leak state and
    rate) as OpenNMS renders it, at README size, from the same files."""
    rrd = repository
    report = reports(parse_properties((REPO / opennms_graphs.GRAPHS_PATH).read_text()))["mysql.innodbmemory"]
    files = report_files(rrd, report)
    assert all(f in rrd.filled for f in files if "Growth" not in f.name)
    command = f"{COMMAND_PREFIX} --width 560 --height 160 {report['command']}"
    arguments = command_arguments(command, [str(f) for f in files], rrd.times[0] - 2, rrd.times[-1] + 1)
    target = os.environ.get("MYSQL_SNMP_WRITE_GRAPH")
    png = (REPO / target) if target else tmp_path / "innodb-memory.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    render(arguments, png)
