"""Collections from real throwaway MariaDB servers: relationships the numbers must satisfy."""

from __future__ import annotations

import logging
import time

import psutil
import pytest

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.sources.heartbeat import HeartbeatOptions
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port
from tests.support import create_monitoring_user, root_settings, wait_for_replication

pytestmark = pytest.mark.live

# A monitoring user that lacks SLAVE MONITOR (what REPLICATION CLIENT alone gives on 10.5.9+).
GRANTS_WITHOUT_SLAVE_MONITOR = (
    "GRANT PROCESS, REPLICATION CLIENT ON *.* TO {user}",
    "GRANT SELECT ON performance_schema.* TO {user}",
)


def global_status(server: ThrowawayMariaDB, name: str):
    rows = server.execute(f"SHOW GLOBAL STATUS LIKE '{name}'")
    return int(rows[0][1])


def failing_statements(snapshot) -> int:
    """Statements sent in this collection by sources that failed."""
    return sum(s.statements for s in snapshot.sources.values() if not s.ok)


@pytest.fixture
def root_collector(mariadb):
    with Collector(root_settings(mariadb), host_metrics="off") as collector:
        yield collector


def test_every_default_source_works_for_root(root_collector):
    snapshot = root_collector.collect()
    assert snapshot.up and snapshot.error is None
    assert snapshot.server.flavour == "mariadb"
    failed = {name: (s.reason, s.error) for name, s in snapshot.sources.items() if not s.ok}
    assert failed == {}
    # Each source sends exactly the statements it declares for this server, no more.
    for name, status in snapshot.sources.items():
        assert status.statements == len(root_collector.scrapers[name].statements(snapshot.server)), name
    # Values keyed by catalog name, raw rows keep everything the server printed.
    assert snapshot.values["status_uptime"] == snapshot.raw["global_status"]["Uptime"]
    assert snapshot.values["variable_max_connections"] == 200
    assert len(snapshot.raw["global_status"]) > 400
    assert snapshot.raw["innodb_status_text"].lstrip().startswith("=")


def test_uptime_grows_between_collections(root_collector):
    first = root_collector.collect()
    time.sleep(1.1)
    second = root_collector.collect()
    assert second.values["status_uptime"] > first.values["status_uptime"]
    assert second.timestamp > first.timestamp


def test_com_select_counts_the_selects_we_ran(mariadb, root_collector):
    before = root_collector.collect().values["status_com_select"]
    conn = mariadb.connect()
    try:
        with conn.cursor() as cur:
            for i in range(7):
                cur.execute(f"SELECT {i}")
    finally:
        conn.close()
    after = root_collector.collect().values["status_com_select"]
    # Our own collections run SHOW statements and one SELECT of information_schema per
    # source that uses it; count those from the connection rather than guessing.
    own_selects = sum(1 for name in ("processlist", "innodb_metrics", "perf_schema_memory")
                      if name in root_collector.source_names)
    assert after - before == 7 + own_selects


def test_dictionary_memory_matches_status_variable(root_collector, mariadb):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS dict_probe",
                    "CREATE TABLE IF NOT EXISTS dict_probe.t (id INT PRIMARY KEY, v VARCHAR(10))")
    snapshot = root_collector.collect(sources={"global_status", "innodb_status"})
    # MariaDB prints both from the same counter (dict_sys); on an idle server they agree.
    assert snapshot.values["innodb_mem_dictionary_bytes"] == snapshot.raw["global_status"]["Innodb_mem_dictionary"]
    assert snapshot.values["innodb_mem_dictionary_bytes"] > 0


def test_binary_log_space_is_the_sum_of_show_binary_logs(mariadb, root_collector):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS binlog_probe",
                    "CREATE TABLE IF NOT EXISTS binlog_probe.t (id INT PRIMARY KEY)",
                    "INSERT INTO binlog_probe.t VALUES (1), (2), (3)", "FLUSH BINARY LOGS")
    # The server is shared with other tests, whose writes can land between our collection and
    # the check: compare against a SHOW BINARY LOGS that was the same before and after it.
    for _attempt in range(10):
        before = mariadb.execute("SHOW BINARY LOGS")
        snapshot = root_collector.collect(sources={"global_variables", "binlog"})
        logs = mariadb.execute("SHOW BINARY LOGS")
        if logs == before:
            break
    assert logs == before, "the binary logs never stayed still for one collection"
    assert len(logs) >= 2
    # binlog_size_bytes is the original's myBinaryLogSpace (legacy object 108).
    assert snapshot.values["binlog_size_bytes"] == sum(int(size) for _name, size in logs)
    assert root_collector.catalog.by_name("binlog_size_bytes").snmp.legacy.key == "binary_log_space"
    assert snapshot.values["binlog_files"] == len(logs)
    assert snapshot.raw["binary_logs"] == [(name, int(size)) for name, size in logs]


def test_key_buffer_derivations_follow_the_original_formulas(root_collector):
    snapshot = root_collector.collect(sources={"global_status", "global_variables"})
    status, variables = snapshot.raw["global_status"], snapshot.raw["global_variables"]
    block = variables["key_cache_block_size"]
    assert snapshot.values["key_buffer_bytes_used"] == (
        variables["key_buffer_size"] - status["Key_blocks_unused"] * block)
    assert snapshot.values["key_buffer_bytes_unflushed"] == status["Key_blocks_not_flushed"] * block
    assert snapshot.values["table_cache"] == variables["table_open_cache"]


def test_innodb_status_override_prefers_show_status(root_collector):
    snapshot = root_collector.collect(sources={"global_status", "innodb_status"})
    status = snapshot.raw["global_status"]
    overridden = [m for m in root_collector.catalog if m.source.status_override]
    assert overridden, "the catalog names SHOW STATUS overrides for InnoDB values"
    for metric in overridden:
        if metric.source.status_override in status:
            assert snapshot.values[metric.name] == status[metric.source.status_override], metric.name


def test_replica_lag_is_null_while_the_sql_thread_is_stopped(mariadb, mariadb_replica):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS repl_probe",
                    "CREATE TABLE IF NOT EXISTS repl_probe.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    wait_for_replication(mariadb_replica)
    channel = (("channel", ""),)
    with Collector(root_settings(mariadb_replica), sources={"replication"}) as collector:
        running = collector.collect()
        assert running.series["replica_sql_running"][channel] == 1
        assert running.series["replica_io_running"][channel] == 1
        assert running.series["replica_seconds_behind_source"][channel] == 0
        assert running.values["replica_slave_running"] == 1
        assert running.series["replica_source_port"][channel] == mariadb.port

        mariadb_replica.execute("STOP SLAVE SQL_THREAD")
        try:
            mariadb.execute("INSERT INTO repl_probe.t (v) VALUES (1)")
            deadline = time.monotonic() + 10
            while True:  # until the receiver has the event the applier does not
                stopped = collector.collect()
                read = stopped.series["replica_read_source_log_pos"][channel]
                executed = stopped.series["replica_exec_source_log_pos"][channel]
                if read > executed or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert read > executed
            # MariaDB prints Seconds_Behind_Master NULL while the SQL thread is stopped.
            assert stopped.series["replica_seconds_behind_source"][channel] is None
            assert stopped.series["replica_sql_running"][channel] == 0
            assert stopped.series["replica_io_running"][channel] == 1
            assert stopped.values["replica_slave_stopped"] == 1
            assert stopped.values["replica_slave_lag_seconds"] is None
            assert stopped.raw["replica_status"][0]["Seconds_Behind_Master"] is None
        finally:
            mariadb_replica.execute("START SLAVE SQL_THREAD")
        wait_for_replication(mariadb_replica)
        caught_up = collector.collect()
        assert caught_up.series["replica_exec_source_log_pos"][channel] == \
            caught_up.series["replica_read_source_log_pos"][channel]
        assert caught_up.series["replica_seconds_behind_source"][channel] == 0


def test_primary_has_no_replica_channels(root_collector):
    snapshot = root_collector.collect(sources={"replication"})
    assert snapshot.sources["replication"].ok
    assert snapshot.values["replica_channels"] == 0
    assert "replica_seconds_behind_source" not in snapshot.series


def test_missing_slave_monitor_is_detected_once_and_not_retried(mariadb, tmp_path, caplog):
    user = create_monitoring_user(mariadb, tmp_path, GRANTS_WITHOUT_SLAVE_MONITOR)
    with Collector(user.settings, host_metrics="off") as collector:
        with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.collection"):
            first = collector.collect()
        status = first.sources["replication"]
        assert (status.ok, status.reason, status.statements) == (False, "privilege", 1)
        assert "SLAVE MONITOR" in status.error and "SHOW ALL SLAVES STATUS" in status.error
        warnings = [r.getMessage() for r in caplog.records if "replication" in r.getMessage()]
        assert len(warnings) == 1

        sent_before = global_status(mariadb, "Com_show_slave_status")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.collection"):
            later = [collector.collect() for _ in range(3)]
        assert global_status(mariadb, "Com_show_slave_status") == sent_before
        for snapshot in later:
            assert snapshot.up
            assert snapshot.sources["replication"].reason == "privilege"
            assert snapshot.sources["replication"].statements == 0
            assert failing_statements(snapshot) == 0
        assert not [r for r in caplog.records if "replication" in r.getMessage()]
        # Everything else still collects.
        assert later[-1].sources["innodb_status"].ok and later[-1].sources["global_status"].ok


def test_minimal_grants_user_has_no_failing_statement(monitoring_user):
    with Collector(monitoring_user.settings, host_metrics="off") as collector:
        for _ in range(2):
            snapshot = collector.collect()
            failed = {name: (s.reason, s.error) for name, s in snapshot.sources.items() if not s.ok}
            assert failed == {}
            assert failing_statements(snapshot) == 0
        assert collector.connection.failed_statements == 0


class KillingConnection(MySQLConnection):
    """Kills the server right before one statement: a crash in the middle of a collection."""

    def __init__(self, *args, server: ThrowawayMariaDB, before: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.victim, self.before, self.armed = server, before, False

    def query(self, statement):
        if self.armed and statement.startswith(self.before):
            self.armed = False
            self.victim.kill()
        return super().query(statement)


def test_server_killed_mid_collection_then_restarted(caplog):
    server = ThrowawayMariaDB(server_id=9)
    server.start()
    try:
        settings = root_settings(server)
        conn = KillingConnection(settings, server=server, before="SHOW ENGINE INNODB STATUS",
                                 backoff_initial=0.1, backoff_max=0.5)
        with Collector(settings, connection=conn, host_metrics="off") as collector:
            healthy = collector.collect()
            assert healthy.up and healthy.values["status_uptime"] >= 0

            conn.armed = True
            crashed = collector.collect()
            assert crashed.up is False
            assert crashed.error and "connection" in crashed.error.lower()
            assert all(not s.ok and s.reason == "connection" for s in crashed.sources.values())
            # global_status had run before the crash: its numbers must not survive.
            mysql_values = {k for k in crashed.values if not k.startswith("agent_")}
            assert mysql_values == set() and crashed.series == {} and crashed.raw == {}

            time.sleep(0.6)  # past the reconnect backoff: this collection tries to connect
            with caplog.at_level(logging.INFO, logger="mysql_snmp.agents.connection"):
                down = collector.collect()
                assert collector.collect().up is False
            assert down.up is False and all(name.startswith("agent_") for name in down.values)
            assert down.values["agent_mysql_up"] == 0

            restarted = time.monotonic()
            server.start()
            deadline = time.monotonic() + 10
            recovered = collector.collect()
            while not recovered.up and time.monotonic() < deadline:
                time.sleep(0.1)
                recovered = collector.collect()
            assert recovered.up and recovered.values["agent_mysql_up"] == 1
            outage_lines = [r.getMessage() for r in caplog.records if r.name == "mysql_snmp.agents.connection"]
            assert len([m for m in outage_lines if m.startswith("cannot reconnect")]) == 1, outage_lines
            # A new server process: its uptime counts from the restart.
            assert recovered.values["status_uptime"] <= time.monotonic() - restarted + 1
            assert all(s.ok for s in recovered.sources.values())
    finally:
        server.stop(remove=True)


@pytest.mark.parametrize("utc", [False, True])
def test_pt_heartbeat_lag(mariadb, utc):
    now = "UTC_TIMESTAMP(6)" if utc else "NOW(6)"
    # The table pt-heartbeat --create-table makes; a row written 100 s ago by server 1.
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS hb",
        "CREATE TABLE IF NOT EXISTS hb.heartbeat (ts varchar(26) NOT NULL, server_id int unsigned NOT NULL"
        " PRIMARY KEY, file varchar(255) DEFAULT NULL, position bigint unsigned DEFAULT NULL)",
        f"REPLACE INTO hb.heartbeat (ts, server_id) VALUES"
        f" (DATE_FORMAT({now} - INTERVAL 100 SECOND, '%Y-%m-%dT%H:%i:%s.%f'), 1)",
    )
    options = HeartbeatOptions(database="hb", table="heartbeat", utc=utc)
    with Collector(root_settings(mariadb), sources={"heartbeat"}, heartbeat=options) as collector:
        snapshot = collector.collect()
    assert snapshot.sources["heartbeat"].ok, snapshot.sources["heartbeat"].error
    assert 100 <= snapshot.values["heartbeat_lag_seconds"] < 160
    assert snapshot.values["heartbeat_source_server_id"] == 1
    # Every row, per server_id, for mysqld_exporter's heartbeat families.
    labels = (("server_id", "1"),)
    (stored,) = snapshot.series["heartbeat_row_stored_timestamp_seconds"].items()
    (now,) = snapshot.series["heartbeat_row_now_timestamp_seconds"].items()
    assert stored[0] == now[0] == labels
    assert now[1] - stored[1] == pytest.approx(snapshot.values["heartbeat_lag_seconds"])


def test_process_metrics_find_the_server_by_its_pid_file(mariadb):
    with Collector(root_settings(mariadb), sources={"global_variables", "host", "process"}) as collector:
        snapshot = collector.collect()
        assert snapshot.sources["process"].ok and snapshot.sources["host"].ok
        assert collector.local_mysqld.pid(snapshot.raw["global_variables"]) == mariadb.pid
    process = psutil.Process(mariadb.pid)
    assert snapshot.values["process_start_time_seconds"] == process.create_time()
    assert snapshot.values["process_resident_memory_bytes"] > 64 * 2**20  # the 64M buffer pool is touched
    assert snapshot.values["process_threads"] >= 1
    assert snapshot.values["host_cpus"] == psutil.cpu_count()
    assert set(dict(labels)["mode"] for labels in snapshot.series["host_cpu_seconds"]) >= {"user", "system", "idle"}


def test_host_and_process_run_while_the_server_works_on_the_batch(mariadb):
    sources = {"global_status", "global_variables", "innodb_status", "host", "process"}
    with Collector(root_settings(mariadb), sources=sources) as collector:
        unread = {}  # source -> whether the batch's answers were still unread when it ran

        def watching(scraper):
            collect = scraper.collect

            def watched(*args, **kwargs):
                unread[scraper.name] = collector.connection.batch_unread
                return collect(*args, **kwargs)
            scraper.collect = watched

        for name in ("host", "process", "innodb_status"):
            watching(collector.scrapers[name])
        first = collector.collect()
        # The process is found from global_variables (its pid file) the first time: it waits for them.
        assert unread == {"host": True, "process": False, "innodb_status": False}
        second = collector.collect()
        assert unread == {"host": True, "process": True, "innodb_status": False}
    for snapshot in (first, second):
        assert all(status.ok for status in snapshot.sources.values()), snapshot.sources
        assert snapshot.values["process_start_time_seconds"] == psutil.Process(mariadb.pid).create_time()
        assert snapshot.values["host_cpus"] == psutil.cpu_count()
    # Read again at the second collection, not carried over.
    assert second.values["process_cpu_user_seconds"] >= first.values["process_cpu_user_seconds"]
    assert second.values["status_uptime"] >= first.values["status_uptime"]


def test_granting_the_privilege_is_picked_up_at_the_retry_time(mariadb, tmp_path):
    user = create_monitoring_user(mariadb, tmp_path, GRANTS_WITHOUT_SLAVE_MONITOR)
    with Collector(user.settings, sources={"replication"}, disabled_retry_seconds=0.0) as collector:
        assert collector.collect().sources["replication"].reason == "privilege"
        mariadb.execute(f"GRANT SLAVE MONITOR ON *.* TO '{user.name}'@'127.0.0.1'")
        fixed = collector.collect()
    assert fixed.sources["replication"].ok and fixed.values["replica_channels"] == 0


@pytest.mark.parametrize("limit", ["lock_wait_timeout", "statement_timeout"])
def test_a_blocked_statement_is_bounded_and_the_connection_survives(mariadb, limit):
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS hb",
        "CREATE TABLE IF NOT EXISTS hb.locked (ts varchar(26) NOT NULL, server_id int unsigned PRIMARY KEY)",
    )
    timeouts = {"lock_wait_timeout": 1, "statement_timeout": 30.0} if limit == "lock_wait_timeout" \
        else {"lock_wait_timeout": 60, "statement_timeout": 0.5}
    holder = mariadb.connect(autocommit=True)
    try:
        with Collector(root_settings(mariadb), sources={"heartbeat", "global_status"}, host_metrics="off",
                       heartbeat=HeartbeatOptions(database="hb", table="locked"), **timeouts) as collector:
            with holder.cursor() as cur:
                cur.execute("LOCK TABLES hb.locked WRITE")
            blocked = collector.collect()
            with holder.cursor() as cur:
                cur.execute("UNLOCK TABLES")
            after = collector.collect()
    finally:
        holder.close()
    status = blocked.sources["heartbeat"]
    assert (status.ok, status.reason, status.statements) == (False, "timeout", 1)
    # ERROR 1205 for lock_wait_timeout, ERROR 1969 for MariaDB's max_statement_time.
    assert ("ERROR 1205" if limit == "lock_wait_timeout" else "ERROR 1969") in status.error
    assert blocked.up and blocked.sources["global_status"].ok
    assert after.sources["heartbeat"].ok and collector.connection.statements > 0


def test_sources_not_started_by_the_deadline_are_reported(root_collector):
    snapshot = root_collector.collect(deadline=time.monotonic())
    assert snapshot.up
    assert {s.reason for s in snapshot.sources.values()} == {"deadline"}
    assert all(s.statements == 0 for s in snapshot.sources.values())
    assert all(name.startswith("agent_") for name in snapshot.values)


def test_unreadable_heartbeat_row_is_a_counted_parse_failure(mariadb):
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS hb",
        "CREATE TABLE IF NOT EXISTS hb.garbled (ts varchar(26) NOT NULL, server_id int unsigned PRIMARY KEY)",
        "REPLACE INTO hb.garbled VALUES ('not a timestamp', 1)",
    )
    options = HeartbeatOptions(database="hb", table="garbled")
    with Collector(root_settings(mariadb), sources={"global_status", "heartbeat"}, heartbeat=options) as collector:
        snapshot = collector.collect()
    status = snapshot.sources["heartbeat"]
    assert (status.ok, status.reason, status.statements) == (False, "parse", 1)
    assert "not a timestamp" in status.error
    assert not any(name.startswith("heartbeat_") for name in snapshot.values)
    assert snapshot.up and snapshot.sources["global_status"].ok and snapshot.values["agent_collection_errors"] == 1


def test_every_replication_channel_is_reported(mariadb, mariadb_replica):
    # A second, named source connection (MariaDB multi-source) to a port nobody listens on.
    dead_port = free_loopback_port()
    mariadb_replica.execute(
        f"CHANGE MASTER 'second' TO MASTER_HOST='127.0.0.1', MASTER_PORT={dead_port}, MASTER_USER='repl',"
        " MASTER_PASSWORD='x', MASTER_CONNECT_RETRY=1",
        "START SLAVE 'second'",
    )
    try:
        with Collector(root_settings(mariadb_replica), sources={"replication"}) as collector:
            deadline = time.monotonic() + 10
            snapshot = collector.collect()
            while snapshot.series["replica_last_io_errno"].get((("channel", "second"),)) == 0 \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
                snapshot = collector.collect()
    finally:
        mariadb_replica.execute("STOP SLAVE 'second'", "RESET SLAVE 'second' ALL")
    default, second = (("channel", ""),), (("channel", "second"),)
    assert snapshot.values["replica_channels"] == 2
    assert snapshot.series["replica_io_running"][default] == 1
    assert snapshot.series["replica_io_running"][second] == 2  # "Connecting"
    assert snapshot.series["replica_source_port"] == {default: mariadb.port, second: dead_port}
    assert snapshot.series["replica_last_io_errno"][second] == 2003  # cannot connect
    assert [row["Connection_name"] for row in snapshot.raw["replica_status"]] == ["", "second"]


def test_a_table_the_server_lacks_is_an_info_line_and_a_missing_grant_a_warning(mariadb, tmp_path, caplog):
    """query_response_time is on by default in the exporter; a plain MariaDB has no such table."""
    caplog.set_level(logging.INFO, logger="mysql_snmp.agents.collection")
    user = create_monitoring_user(mariadb, tmp_path, GRANTS_WITHOUT_SLAVE_MONITOR)
    with Collector(user.settings, sources={"global_status", "query_response_time", "replication"},
                   host_metrics="off") as collector:
        snapshot = collector.collect()
    assert snapshot.up and snapshot.sources["query_response_time"].reason == "unsupported"
    assert snapshot.sources["replication"].reason == "privilege"
    levels = {record.getMessage().split(": ", 2)[1]: record.levelname for record in caplog.records
              if " disabled: " in record.getMessage()}
    assert levels == {"source query_response_time disabled": "INFO", "source replication disabled": "WARNING"}


def test_connections_with_the_same_tls_options_share_one_tls_context(mariadb):
    """pymysql builds a TLS context for every connection (loading the system's CA store, ~20 ms of
    CPU) even when it only prefers TLS: the connections of one exporter share it."""
    import ssl

    from mysql_snmp.agents.mysql.tls_on_demand import ensure_ssl

    ensure_ssl()
    first, second = MySQLConnection(root_settings(mariadb)), MySQLConnection(root_settings(mariadb))
    try:
        for connection in (first, second):
            assert connection.query("SELECT 1").rows == [(1,)]
        assert isinstance(first._conn.ctx, ssl.SSLContext)
        assert first._conn.ctx is second._conn.ctx
    finally:
        first.close()
        second.close()
