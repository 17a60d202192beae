"""End to end: the real ``mysql-snmp agentx`` process finds a dictionary leak on a real MariaDB,
serves it in myLeakTable and sends leakDetected / leakCleared through snmpd to snmptrapd.

The clock cannot be compressed in another process, so the detector's time scales are:
a leak config with half-second bins, a 5 s trend window and a 5 s baseline turns the
agent's 7 days / 15 min defaults into seconds, on wall-clock time.  With
table_definition_cache=10000 MariaDB keeps every opened table definition, so tables
created and opened grow "Dictionary memory allocated" steadily (about 2.2 KiB each, reason
``tables``), and dropping them gives the memory back: the level falls below the mark the
leak was detected above, which clears it.
"""

import json
import time

import pytest

from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import need_net_snmp, wait_until
from tests.leak import trap_sink
from tests.leak.trap_sink import TrapForwardingSnmpd, traps, traps_of

pytestmark = [pytest.mark.snmp, pytest.mark.live]

SERIES = "innodb_mem_dictionary_bytes"
CATALOG = load_catalog()
TABLE = CATALOG.tables["myLeakTable"]
INDEX = format_oid(encode_index(TABLE, labels_of(series=SERIES)))
DETECTED = next(n["oid"] for n in CATALOG.extra["notifications"] if n["name"] == "leakDetected")
CLEARED = next(n["oid"] for n in CATALOG.extra["notifications"] if n["name"] == "leakCleared")
REFRESH_SECONDS = 0.2
WINDOW_SECONDS = 5
LEAK_CONFIG = f"""\
leak:
  bin_seconds: 0.5
  windows_seconds: [{WINDOW_SECONDS}]
  window_points: 10
  baseline_bucket_seconds: 0.5
  min_baseline_seconds: 2
  mature_baseline_seconds: 2
  suspect_clear_seconds: 5
  leaking_clear_seconds: 60
  save_every_seconds: 1
  series:
    - name: {SERIES}
      min_growth_bytes: 65536
"""


def column(name: str) -> str:
    return format_oid(TABLE.oid + (1, CATALOG.by_name(name).snmp.column))


def leak_row(snmpd) -> dict[str, str]:
    """Our series' row of myLeakTable, from an snmpbulkwalk of the table: column name -> value."""
    names = {column(m.name): m.name for m in CATALOG.table_columns("myLeakTable")}
    row = {}
    for var in snmpd.bulkwalk(format_oid(TABLE.oid)):
        column_oid, _, index = var.oid.rpartition("." + INDEX)
        if index == "" and column_oid in names:
            row[names[column_oid]] = var.text if var.type == "STRING" else var.number
    return row


def create_tables_until(server, done, limit_seconds: float = 20.0) -> int:
    """CREATE and open tables (definitions stay cached) until ``done()``; how many were created."""
    created = 0
    deadline = time.monotonic() + limit_seconds
    conn = server.connect(autocommit=True)
    try:
        with conn.cursor() as cur:
            while not done() and time.monotonic() < deadline:
                for _ in range(5):
                    created += 1
                    cur.execute(f"CREATE TABLE leak_e2e.t{created} "
                                "(id INT PRIMARY KEY, name VARCHAR(64), grp INT, KEY(grp), KEY(name))")
                    cur.execute(f"SELECT COUNT(*) FROM leak_e2e.t{created}")
    finally:
        conn.close()
    return created


@pytest.fixture(scope="module")
def server():
    with ThrowawayMariaDB(extra_args=("--table-definition-cache=10000",)) as server:
        server.execute("CREATE DATABASE leak_e2e")
        yield server


def test_agent_process_serves_the_leak_table_and_notifies_each_change(server, tmp_path):
    need_net_snmp()
    config = tmp_path / "leak.yml"
    config.write_text(LEAK_CONFIG)
    with trap_sink.trap_receiver(tmp_path) as (trap_port, trap_log):
        snmpd = TrapForwardingSnmpd(tmp_path / "snmpd", trap_port=trap_port)
        snmpd.start()
        agent = None
        try:
            agent = run_agent(snmpd, server, tmp_path, REFRESH_SECONDS, "--leak-config", str(config))
            # The idle server is the baseline: the row is there, and ok.
            wait_until(lambda: leak_row(snmpd).get("leak_state") == 0, what="myLeakTable row, state ok")
            idle = leak_row(snmpd)
            assert idle["leak_series_name"] == SERIES
            assert idle["leak_reason_code"] == 0  # none
            time.sleep(WINDOW_SECONDS + 1)  # a baseline longer than the window before growth starts

            created = create_tables_until(server, lambda: traps_of(trap_log, DETECTED))
            print(f"leakDetected after {created} tables")
            # The notification is sent once the new view is served: a manager polling on the
            # trap reads the state it announced.
            leaking = leak_row(snmpd)
            assert leaking["leak_state"] == 2
            assert leaking["leak_reason_code"] == 1  # tables: Open_table_definitions grew with it
            (detected,) = traps_of(trap_log, DETECTED)
            assert detected[f".{column('leak_series_name')}.{INDEX}"] == f'STRING: "{SERIES}"'
            assert detected[f".{column('leak_state')}.{INDEX}"] == "INTEGER: 2"
            assert detected[f".{column('leak_reason_code')}.{INDEX}"] == "INTEGER: 1"
            rate = int(detected[f".{column('leak_growth_bytes_per_hour')}.{INDEX}"].split(": ")[1])
            assert rate > 0 and leaking["leak_growth_bytes_per_hour"] > 0
            # The node-level copies OpenNMS graphs with the dictionary's size are the row's values
            # (one Get: one view answers all four).
            node_state, row_state, node_rate, row_rate = snmpd.get(
                format_oid(CATALOG.by_name("leak_dictionary_state").snmp.oid) + ".0", f"{column('leak_state')}.{INDEX}",
                format_oid(CATALOG.by_name("leak_dictionary_growth_bytes_per_hour").snmp.oid) + ".0",
                f"{column('leak_growth_bytes_per_hour')}.{INDEX}")
            assert node_state.number == row_state.number == 2
            assert node_rate.number == row_rate.number > 0

            server.execute(*(f"DROP TABLE leak_e2e.t{i}" for i in range(1, created + 1)))
            wait_until(lambda: traps_of(trap_log, CLEARED), what="leakCleared trap")
            (cleared,) = traps_of(trap_log, CLEARED)
            assert cleared[f".{column('leak_state')}.{INDEX}"] == "INTEGER: 0"
            assert leak_row(snmpd)["leak_state"] == 0
        finally:
            if agent is not None:
                status = stop_agent(agent)
            snmpd.stop()
    # One of each (snmpd adds its own coldStart and shutdown traps).
    assert (len(traps_of(trap_log, DETECTED)), len(traps_of(trap_log, CLEARED))) == (1, 1), traps(trap_log)
    log = agent.log_text()
    assert status == 0, log[-3000:]
    assert f"leak detector watching {SERIES} (explained by status_open_table_definitions); " \
           f"history: {agent.leak_state}" in log
    saved = json.loads(agent.leak_state.read_text())
    assert saved["series"][SERIES]["state"] == 0
