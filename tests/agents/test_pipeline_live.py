"""MySQLConnection.pipeline on a throwaway MariaDB: one round trip, and every answer as if sent alone."""

from __future__ import annotations

import threading
import time

import pytest

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.errors import MySQLUnavailable, QueryError
from tests.support import root_settings

STATUS = "SHOW GLOBAL STATUS"
VARIABLES = "SHOW GLOBAL VARIABLES"
INNODB = "SHOW ENGINE INNODB STATUS"
MISSING_TABLE = "SELECT * FROM mysql.no_such_table_here"


def server_statements(connection: MySQLConnection) -> int:
    """Statements this connection's session has run, as the server counts them (before this one)."""
    with connection._conn.cursor() as cursor:
        cursor.execute("SHOW SESSION STATUS LIKE 'Questions'")
        return int(cursor.fetchone()[1])


@pytest.fixture
def connection(mariadb):
    conn = MySQLConnection(root_settings(mariadb))
    conn.ensure_connected()
    yield conn
    conn.close()


def test_pipelined_answers_equal_answers_sent_alone(connection):
    alone = connection.query(VARIABLES)
    sent = connection.statements
    connection.pipeline([STATUS, VARIABLES, INNODB])
    status = connection.query(STATUS)
    variables = connection.query(VARIABLES)
    innodb = connection.query(INNODB)
    assert variables == alone
    assert status.columns == ("Variable_name", "Value") and len(status.rows) > 400
    assert innodb.columns == ("Type", "Name", "Status") and "BUFFER POOL AND MEMORY" in innodb.rows[0][2]
    assert connection.statements - sent == 3
    # pipeline() only sent the batch: the first answer was read by its query().


def test_a_batch_costs_as_many_statements_as_sending_them_alone(connection):
    questions_before = server_statements(connection)
    connection.pipeline([STATUS, VARIABLES, INNODB])
    for statement in (STATUS, VARIABLES, INNODB):
        connection.query(statement)
    # +1: the SHOW SESSION STATUS of the first count.  The server counts each statement of
    # the batch, so a batch costs as many statements as sending them one by one.
    assert server_statements(connection) - questions_before == 1 + 3


def test_failing_statement_keeps_its_error_and_the_rest_run_alone(connection):
    sent, failed = connection.statements, connection.failed_statements
    connection.pipeline([STATUS, MISSING_TABLE, VARIABLES])
    assert len(connection.query(STATUS).rows) > 400
    with pytest.raises(QueryError) as raised:
        connection.query(MISSING_TABLE)
    assert raised.value.reason == "unsupported" and raised.value.code == 1146
    assert raised.value.statement == MISSING_TABLE
    # The server ran nothing after the error: VARIABLES is sent again, alone, and answered.
    assert len(connection.query(VARIABLES).rows) > 400
    assert connection.statements - sent == 3 and connection.failed_statements - failed == 1


def test_other_statement_waits_for_the_batch_then_runs(connection):
    connection.pipeline([STATUS, VARIABLES, INNODB])
    assert connection.query("SELECT 41 + 1").rows == [(42,)]
    # The batch was read to the end first; its answers are still served.
    assert len(connection.query(INNODB).rows) == 1
    connection.discard_pipelined()
    assert connection.query("SELECT 1").rows == [(1,)]


def test_answers_nobody_asked_for_are_read_and_counted(connection):
    sent = connection.statements
    connection.pipeline([STATUS, VARIABLES, INNODB])
    connection.query(STATUS)
    connection.discard_pipelined()
    assert connection.statements - sent == 3
    # The connection is clean: the next statement is answered normally.
    assert connection.query("SELECT 7").rows == [(7,)]


def test_statement_waiting_on_a_lock_delays_only_itself(mariadb, connection):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS pipeline_lock",
                    "CREATE TABLE IF NOT EXISTS pipeline_lock.t (id INT PRIMARY KEY) ENGINE=InnoDB")
    holder = mariadb.connect()
    try:
        with holder.cursor() as cursor:
            cursor.execute("LOCK TABLES pipeline_lock.t WRITE")
        blocked = "SELECT COUNT(*) FROM pipeline_lock.t"
        with connection._conn.cursor() as cursor:
            cursor.execute("SET SESSION lock_wait_timeout = 2")
        started = time.monotonic()
        connection.pipeline([STATUS, VARIABLES, blocked])
        assert len(connection.query(STATUS).rows) > 400
        assert len(connection.query(VARIABLES).rows) > 400
        assert time.monotonic() - started < 1.0  # answered before the lock wait ends
        with pytest.raises(QueryError) as raised:
            connection.query(blocked)
        assert raised.value.reason == "timeout" and time.monotonic() - started >= 1.5
    finally:
        holder.close()


def test_server_killing_the_connection_mid_batch(mariadb, connection):
    victim = connection.thread_id
    long_statement = "SELECT SLEEP(5)"
    connection.pipeline([STATUS, long_statement, VARIABLES])
    assert len(connection.query(STATUS).rows) > 400
    threading.Timer(0.3, lambda: mariadb.execute(f"KILL CONNECTION {victim}")).start()
    with pytest.raises(MySQLUnavailable):
        connection.query(long_statement)
    assert not connection.connected
    # VARIABLES never ran: asked for, it reconnects and is answered.
    assert len(connection.query(VARIABLES).rows) > 400
    assert connection.thread_id != victim


def test_collector_values_are_the_same_pipelined_or_not(mariadb):
    sources = {"global_variables", "innodb_status", "replication"}
    with Collector(root_settings(mariadb), sources=sources, host_metrics="off") as pipelined, \
            Collector(root_settings(mariadb), sources=sources, host_metrics="off") as alone:
        alone.connection.can_pipeline = False
        first, second = pipelined.collect(), alone.collect()
    assert first.up and second.up
    assert first.values["variable_max_connections"] == second.values["variable_max_connections"]
    assert first.raw["global_variables"] == second.raw["global_variables"]
    assert {s.name: (s.ok, s.statements) for s in first.sources.values()} == \
        {s.name: (s.ok, s.statements) for s in second.sources.values()} == \
        {"global_variables": (True, 1), "innodb_status": (True, 1), "replication": (True, 1)}
    assert all(s.duration_seconds > 0 for s in first.sources.values())


def test_a_hung_statement_holds_up_only_its_own_run_of_sources(mariadb):
    from mysql_snmp.agents.sources.heartbeat import HeartbeatOptions

    mariadb.execute("CREATE DATABASE IF NOT EXISTS pipeline_hb",
                    "CREATE TABLE IF NOT EXISTS pipeline_hb.heartbeat (ts VARCHAR(26), server_id INT PRIMARY KEY)")
    holder = mariadb.connect()
    sources = {"global_status", "global_variables", "binlog", "processlist"}
    try:
        with holder.cursor() as cursor:
            cursor.execute("LOCK TABLES pipeline_hb.heartbeat WRITE")
        with Collector(root_settings(mariadb), sources=sources, host_metrics="off", lock_wait_timeout=1,
                       heartbeat=HeartbeatOptions("pipeline_hb", "heartbeat")) as collector:
            snapshot = collector.collect()
    finally:
        holder.close()
    statuses = snapshot.sources
    assert snapshot.up
    assert not statuses["heartbeat"].ok and statuses["heartbeat"].reason == "timeout"
    assert statuses["heartbeat"].duration_seconds >= 0.9
    # binlog (decides from log_bin whether to ask) runs between two pipelined runs: the
    # heartbeat statement, pipelined after it with processlist, does not hold it up.
    assert statuses["binlog"].ok and statuses["binlog"].statements == 2
    assert statuses["binlog"].duration_seconds < 0.5
    assert all(statuses[name].ok for name in ("global_status", "global_variables", "processlist"))
    assert snapshot.values["binlog_files"] >= 1
