"""As an OpenNMS site runs it: the generated data collection, polled through a real snmpd from
the real agent on a real MariaDB primary and its replica, written to RRD files the way OpenNMS
writes them (tests/generate/opennms_collectd.py), and every report offered on a resource
rendered with rrdtool.

- the primary: default and full system definitions, ``storeByGroup=false`` (a file per alias);
- the replica: the default one, ``storeByGroup=true`` (a file per group: the original's group
  ``mysql`` keeps the original's ``mysql.rrd``).

The primary serves its replica, so its processlist has ``Binlog Dump`` with its 61-character
state: the row whose index OID made a 269-character directory.

The README's graphs come from these files:
    MYSQL_SNMP_WRITE_GRAPHS=docs .venv/bin/python -m pytest tests/generate/test_opennms_collectd.py -k readme
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from mysql_snmp.agents.generate import opennms_collection, opennms_graphs
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp
from tests.generate.opennms_collectd import Node, read_collection, walk
from tests.generate.opennms_properties import command_arguments, parse_properties, reports

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]
ROOT_OID = "1.3.6.1.4.1.20267.200"
STEP = 2
POLLS = 10
# OpenNMS's rrd-configuration.properties default, before each report's command.
COMMAND_PREFIX = "--imgformat PNG --font DEFAULT:7 --font TITLE:10 --start {startTime} --end {endTime}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_INSTANCE_PATH = 200  # bytes of <node>/<resource type>/<instance>/<file>: far below a name's 255
NODE_LEAK_STATES = {
    "myLeakDictState": "innodb_mem_dictionary_bytes",
    "myLeakAhiState": "status_innodb_mem_adaptive_hash",
    "myLeakTotalState": "innodb_mem_total_large_allocated_bytes",
}
# Reports a MariaDB 10.11 gives no data for: the server has none of their objects (docs/opennms.md
# says which and why), or the leak detector has no trend yet after seconds of history (growth,
# forecast), or there is no row (one buffer pool, printed without per-instance blocks; the
# heartbeat table is not configured here).  OpenNMS does not offer them: none of the files exists.
NOT_OFFERED_ON_BOTH = {
    "innodbinsertbufferusage", "innodbsemaphores", "innodbrowoperations", "innodbiopending",
    "innodbinternalhashmemoryusage", "innodbmemoryallocation", "innodbadaptivehashindex",
    "innodbsemaphoreoswaits", "bufferpoolpages", "leakgrowth", "leakforecast", "innodbdictionarymemory",
    "innodbadaptivehashmemory", "innodbtotalmemory", "replicationlag",
}
NOT_OFFERED = {
    # a primary has no replication channel (no row) and no lag to report (mySlaveLag)
    "primary": NOT_OFFERED_ON_BOTH | {"replicationchannellag", "replicationchannelthreads", "mysqlreplication"},
    "replica": NOT_OFFERED_ON_BOTH,
}
# (node, report): one of the original's reports (rates and levels on one axis) and a new one
README_GRAPHS = (("primary", "innodbtransactions"), ("primary", "mysqldmemory"))


def need_rrdtool():
    if shutil.which("rrdtool") is None:
        pytest.fail("rrdtool is not installed (Debian package rrdtool)")


def _sleeper(server, stop: threading.Event) -> None:
    """A client in a long statement, so the processlist has a state and a user of its own."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            while not stop.is_set():
                cur.execute("SELECT SLEEP(3)")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory, mariadb, mariadb_replica):
    need_rrdtool()
    need_net_snmp()
    group_file = REPO / opennms_collection.GROUP_PATH
    root = tmp_path_factory.mktemp("opennms") / "snmp"
    servers = {"primary": mariadb, "replica": mariadb_replica}
    systems = {"primary": (opennms_collection.DEFAULT_SYSTEM, opennms_collection.FULL_SYSTEM),
               "replica": (opennms_collection.DEFAULT_SYSTEM,)}
    nodes = {name: Node(root, str(i), read_collection(group_file, systems[name]), store_by_group=(name == "replica"),
                        step=STEP) for i, name in enumerate(servers, start=1)}
    snmpds, agents = {}, {}
    stop = threading.Event()
    sleeper = threading.Thread(target=_sleeper, args=(mariadb, stop), daemon=True)
    try:
        for name, server in servers.items():
            snmpds[name] = Snmpd(tmp_path_factory.mktemp(f"snmpd-{name}"))
            snmpds[name].start()
            agents[name] = run_agent(snmpds[name], server, tmp_path_factory.mktemp(f"agent-{name}"))
        sleeper.start()
        mariadb.execute("CREATE DATABASE IF NOT EXISTS onms_tables")
        times = []
        for poll in range(POLLS):
            mariadb.execute(*(f"CREATE TABLE IF NOT EXISTS onms_tables.t{poll}_{i} (a int) ENGINE=InnoDB"
                              for i in range(20)))
            time.sleep(STEP - time.time() % STEP + 0.2)
            now = int(time.time()) // STEP * STEP
            for name, node in nodes.items():
                node.store(walk(snmpds[name], ROOT_OID), now)
            times.append(now)
        for name, node in nodes.items():
            node.times = times
            node.server = servers[name]
        yield nodes
    finally:
        stop.set()
        for agent in agents.values():
            stop_agent(agent)
        for snmpd in snmpds.values():
            snmpd.stop()
        for node in nodes.values():
            node.close()
        sleeper.join(timeout=10)


def fetch(path: Path, alias: str, node: Node) -> list[float]:
    """The stored averages of one data source over the polls (nan where none)."""
    text = subprocess.run(["rrdtool", "fetch", str(path), "AVERAGE", "--start", str(node.times[0] - STEP),
                           "--end", str(node.times[-1])], capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    column = lines[0].split().index(alias)
    return [float(line.split(":")[1].split()[column]) for line in lines[2:] if ":" in line]


def has_data(values: list[float]) -> bool:
    return any(v == v for v in values)


def resource_label(node: Node, resource_type: str, directory: Path) -> str:
    """A resource's label as OpenNMS evaluates resourceLabel: ${index} and ${<string attribute>}."""
    expression = node.collection.resource_types[resource_type].label
    strings = node.strings(directory)
    return re.sub(r"\$\{(\w+)\}", lambda m: directory.name if m.group(1) == "index" else strings.get(m.group(1), m.group(0)),
                  expression)


def offered_reports(node: Node):
    """(report id, report, resource directory, column files) of every report OpenNMS offers."""
    properties = parse_properties((REPO / opennms_graphs.GRAPHS_PATH).read_text())
    for resource_type, directory in node.resources():
        files = node.attribute_files(directory)
        for rid, report in reports(properties).items():
            columns = report["columns"].split(",")
            if report["type"] == resource_type and all(alias in files for alias in columns):
                yield rid.removeprefix("mysql."), report, directory, [files[alias] for alias in columns]


def render(node: Node, report: dict, files: list[Path], png: Path) -> None:
    command = COMMAND_PREFIX + " " + report["command"]
    arguments = command_arguments(command, [str(f) for f in files], node.times[0] - STEP, node.times[-1])
    result = subprocess.run(["rrdtool", "graph", str(png), *arguments], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "LC_ALL": "C", "TZ": "UTC"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_every_row_is_stored_under_a_short_path_without_an_error(site):
    for name, node in site.items():
        assert node.errors == [], name
        for path in node.node_dir.rglob("*"):
            relative = path.relative_to(node.root)
            assert len(str(relative).encode()) <= MAX_INSTANCE_PATH, relative
    # the row that could never be stored: Binlog Dump's state, on the primary serving the replica
    primary = site["primary"]
    dumps = [d for t, d in primary.resources()
             if t == "myProcesslistCommandStateEntry" and d.name.startswith("Binlog_Dump")]
    assert dumps, [d.name for _, d in primary.resources()]
    assert (dumps[0] / "myProcesslistThr.rrd").exists()


def test_every_resource_reads_as_its_name(site):
    labels = {}
    for name, node in site.items():
        for resource_type, directory in node.resources():
            if resource_type == "nodeSnmp":
                continue
            label = resource_label(node, resource_type, directory)
            assert label and "${" not in label, (resource_type, directory.name)
            # never an encoded index such as "4.105.100.108.101"
            assert not re.fullmatch(r"\d+(\.\d+)+", label), (resource_type, label)
            labels.setdefault((name, resource_type), set()).add(label)
    assert {"idle", "user", "system"} <= labels[("primary", "myHostCpuEntry")]
    assert {"root"} <= labels[("primary", "myProcesslistUserEntry")]
    assert {"Query / user_sleep", "Binlog Dump / master_has_sent_all_binlog_to_slave_waiting_for_more_updates"} <= (
        labels[("primary", "myProcesslistCommandStateEntry")])
    assert labels[("replica", "myReplicationChannelEntry")] == {"(default)"}
    assert "innodb_mem_dictionary_bytes" in labels[("primary", "myLeakEntry")]


def test_every_offered_report_renders_with_data_and_the_others_have_no_file(site, tmp_path):
    all_ids = {r.id for r in opennms_graphs.REPORTS}
    for name, node in site.items():
        offered = set()
        for rid, report, directory, files in offered_reports(node):
            aliases = report["columns"].split(",")
            data = [has_data(fetch(f, alias, node)) for f, alias in zip(files, aliases)]
            assert any(data), f"{name}: {rid} on {directory.name} is offered with no data"
            render(node, report, files, tmp_path / f"{name}-{rid}-{directory.name}.png")
            offered.add(rid)
        assert all_ids - offered == NOT_OFFERED[name], (name, sorted(all_ids - offered))


def test_the_original_group_keeps_its_file_and_values_match_the_server(site):
    replica = site["replica"]
    group_file = replica.node_dir / "mysql.rrd"  # storeByGroup: the original's file name
    assert replica.attribute_files(replica.node_dir)["myQueryCacheSize"] == group_file
    info = subprocess.run(["rrdtool", "info", str(group_file)], capture_output=True, text=True, check=True).stdout
    for alias in ("myQueryCacheSize", "myTableCache", "myMaxUsedConnectins"):  # settings and a high mark: gauges
        assert f'ds[{alias}].type = "GAUGE"' in info, alias
    assert 'ds[myComSelect].type = "COUNTER"' in info
    conn = replica.server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@query_cache_size, @@table_open_cache, @@max_connections")
            expected = dict(zip(("myQueryCacheSize", "myTableCache", "myMaxConnections"), cur.fetchone()))
    finally:
        conn.close()
    for alias, value in expected.items():
        stored = [v for v in fetch(group_file, alias, replica) if v == v]
        assert stored and abs(stored[-1] - value) <= value * 0.001, (alias, stored[-1:], value)


def test_node_level_leak_states_are_the_rows_values(site):
    primary = site["primary"]
    for alias, series in NODE_LEAK_STATES.items():
        node_file = primary.node_dir / f"{alias}.rrd"
        row = primary.node_dir / "myLeakEntry" / series / "myLeakState.rrd"
        if not row.exists():  # this server has no such series (MariaDB 10.11: the AHI's is a status variable)
            assert not node_file.exists(), alias
            continue
        values = fetch(node_file, alias, primary)
        assert list(map(str, values)) == list(map(str, fetch(row, "myLeakState", primary))), alias
        assert has_data(values), alias


def test_readme_graphs(site, tmp_path):
    """The README's graphs, at the size OpenNMS renders them, from the same files."""
    target = os.environ.get("MYSQL_SNMP_WRITE_GRAPHS")
    for name, rid in README_GRAPHS:
        node = site[name]
        chosen = next((report, files) for r, report, _, files in offered_reports(node) if r == rid)
        png = (REPO / target / f"opennms-{rid}.png") if target else tmp_path / f"{rid}.png"
        render(node, *chosen, png)
