"""The non-InnoDB parsers on rows and processes of real throwaway MariaDB servers.

The parsers are pure; these tests check that what pymysql and psutil really
return (ints, None, str) reads as the hand-built rows of the unit tests do, and
cross-check values between statements.
"""

import threading
import time

import psutil
import pymysql
import pytest

from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port
from mysql_snmp.parsers.binlog import binlog_values
from mysql_snmp.parsers.host import pick_mysqld_process, pid_from_pid_file_text, process_values
from mysql_snmp.parsers.processlist import processlist_values
from mysql_snmp.parsers.replication import THREAD_CONNECTING, parse_replica_status, replica_values

pytestmark = pytest.mark.live


def dict_rows(server, statement):
    conn = server.connect(cursorclass=pymysql.cursors.DictCursor)
    try:
        with conn.cursor() as cur:
            cur.execute(statement)
            return list(cur.fetchall())
    finally:
        conn.close()


def test_running_replica(mariadb, mariadb_replica):
    (channel,) = parse_replica_status(dict_rows(mariadb_replica, "SHOW ALL SLAVES STATUS"))
    assert channel.channel == ""
    assert (channel.io_running, channel.sql_running) == (1, 1)
    assert channel.source_port == mariadb.port
    assert channel.source_server_id == 1
    assert channel.using_gtid == 1  # MASTER_USE_GTID=slave_pos
    assert channel.relay_log_space > 0
    assert channel.seconds_behind_source is not None and channel.seconds_behind_source >= 0
    assert channel.executed_gtid_set.startswith("0-1-")
    assert channel.problems == ()
    legacy = replica_values([channel]).values
    assert legacy["replica_slave_running"] == 1 and legacy["replica_slave_stopped"] == 0


def test_io_thread_connecting_to_a_closed_port():
    with ThrowawayMariaDB(server_id=3) as server:
        server.execute(
            f"CHANGE MASTER 'nowhere' TO MASTER_HOST='127.0.0.1', MASTER_PORT={free_loopback_port()}, "
            "MASTER_USER='repl', MASTER_CONNECT_RETRY=1",
            "START SLAVE 'nowhere'",
        )
        deadline = time.monotonic() + 15
        while True:
            (channel,) = parse_replica_status(dict_rows(server, "SHOW ALL SLAVES STATUS"))
            if channel.last_io_errno or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        server.execute("STOP SLAVE 'nowhere'")
    assert channel.channel == "nowhere"
    assert channel.io_running == THREAD_CONNECTING
    assert channel.raw["Slave_IO_Running"] == "Connecting"
    assert channel.sql_running == 1
    assert channel.seconds_behind_source is None  # NULL while the receiver is not connected
    assert channel.last_io_errno == 2003  # can't connect
    reading = replica_values([channel])
    assert reading.series["replica_io_running"] == {labels_of(channel="nowhere"): 2}
    assert reading.values["replica_slave_lag_seconds"] is None


def test_binary_logs_and_position_agree(mariadb):
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS parsers_live",
        "CREATE TABLE IF NOT EXISTS parsers_live.t (id INT PRIMARY KEY AUTO_INCREMENT, v TEXT)",
        "INSERT INTO parsers_live.t (v) VALUES (REPEAT('x', 1000))",
    )
    values = binlog_values(dict_rows(mariadb, "SHOW MASTER STATUS"), dict_rows(mariadb, "SHOW BINARY LOGS")).values
    assert values["binlog_files"] >= 1
    # Nothing else writes: the write position is the size of the file being written.
    assert values["binlog_position"] == values["binlog_current_file_size_bytes"]
    assert values["binlog_size_bytes"] >= values["binlog_current_file_size_bytes"]
    assert values["binlog_current_file"].startswith("mysql-bin.")
    assert values["binlog_file_number"] == int(values["binlog_current_file"].rsplit(".", 1)[1])


def test_processlist_sees_a_user_lock_wait(mariadb):
    holder = mariadb.connect(autocommit=True)
    waiter = mariadb.connect(autocommit=True)
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT GET_LOCK('parsers_live', 10)")
        waiting = threading.Thread(target=lambda: waiter.cursor().execute("SELECT GET_LOCK('parsers_live', 3)"))
        waiting.start()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            rows = dict_rows(mariadb, "SELECT * FROM information_schema.PROCESSLIST")
            if any(row["STATE"] == "User lock" for row in rows):
                break
            time.sleep(0.05)
        waiting.join()
    finally:
        holder.close()
        waiter.close()
    reading = processlist_values(rows)
    assert reading.series["processlist_threads"][labels_of(command="Query", state="user_lock")] == 1
    assert reading.values["processlist_state_other"] >= 1
    assert reading.series["processlist_command_threads"][labels_of(command="Sleep")] >= 1  # the lock holder
    assert reading.series["processlist_user_threads"][labels_of(user="root")] >= 3
    assert reading.values["processlist_rows"] == len(rows)


def test_finding_and_measuring_the_mariadbd_process(mariadb):
    assert pid_from_pid_file_text(mariadb.pid_file.read_text()) == mariadb.pid
    candidates = [
        (p.info["pid"], p.info["name"], p.info["cmdline"])
        for p in psutil.process_iter(["pid", "name", "cmdline"])
    ]
    assert pick_mysqld_process(candidates, datadir=str(mariadb.datadir), port=mariadb.port) == mariadb.pid
    process = psutil.Process(mariadb.pid)
    memory = process.memory_info()
    values = process_values(memory_info=memory, num_threads=process.num_threads(),
                            num_fds=process.num_fds(), create_time=process.create_time()).values
    assert values["process_resident_memory_bytes"] == memory.rss > 32 * 1024 * 1024  # 64M buffer pool
    assert values["process_threads"] > 1
    assert values["process_open_files"] > 0
