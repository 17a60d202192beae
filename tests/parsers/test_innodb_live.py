"""parse_innodb_status on a throwaway MariaDB: a real Status column, and a deadlock whose SQL fakes headers."""
from __future__ import annotations

import threading
import time

import pymysql
import pytest

from mysql_snmp.parsers.innodb import parse_innodb_status

pytestmark = pytest.mark.live

FAKE_COMMENT = ("/*\n------------\nTRANSACTIONS\n------------\nTrx id counter 123456789\n"
                "History list length 424242\n----------------------------\nEND OF INNODB MONITOR OUTPUT\n"
                "============================\n*/")


def innodb_status_and_globals(server) -> tuple[str, dict[str, str]]:
    conn = server.connect(autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW ENGINE INNODB STATUS")
            text = cur.fetchone()[2]
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb%'")
            status = dict(cur.fetchall())
            cur.execute("SELECT @@innodb_adaptive_hash_index_parts")
            status["@@innodb_adaptive_hash_index_parts"] = str(cur.fetchone()[0])
        return text, status
    finally:
        conn.close()


def test_real_status_column_agrees_with_show_status(mariadb):
    text, status = innodb_status_and_globals(mariadb)
    parsed = parse_innodb_status(text)
    assert parsed.truncated is False
    assert {"SEMAPHORES", "TRANSACTIONS", "FILE I/O", "LOG", "BUFFER POOL AND MEMORY", "ROW OPERATIONS"} \
        <= set(parsed.sections)
    values = parsed.values
    assert values["innodb_bp_size_pages"] == int(status["Innodb_buffer_pool_pages_total"])
    # the fixture turns the adaptive hash index on: one "Hash table size" line per partition
    assert values["innodb_ahi_partitions"] == int(status["@@innodb_adaptive_hash_index_parts"])
    # the LSN only grows: the one printed first is at most the one read after it
    assert 0 < values["innodb_log_sequence_number_bytes"] <= int(status["Innodb_lsn_current"])
    assert values["innodb_mem_dictionary_bytes"] > 0
    assert values["innodb_trx_id_counter"] >= values["innodb_trx_purged_up_to"]


def test_deadlock_with_fake_headers_in_the_statement(mariadb):
    db = f"innodb_live_{int(time.time() * 1000) % 10**9}"
    mariadb.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
                    f"INSERT INTO {db}.t VALUES (1, 0), (2, 0)")
    first, second = mariadb.connect(), mariadb.connect()
    errors: list[Exception] = []
    try:
        with first.cursor() as a, second.cursor() as b:
            a.execute("BEGIN")
            a.execute(f"UPDATE {db}.t SET v = 1 WHERE id = 1")
            b.execute("BEGIN")
            b.execute(f"UPDATE {db}.t SET v = 2 WHERE id = 2")

            def blocked_update():
                try:
                    a.execute(f"UPDATE {db}.t SET v = 1 {FAKE_COMMENT} WHERE id = 2")
                except pymysql.MySQLError as error:
                    errors.append(error)

            waiter = threading.Thread(target=blocked_update)
            waiter.start()
            time.sleep(0.5)  # let the first UPDATE wait for the row lock
            try:
                b.execute(f"UPDATE {db}.t SET v = 2 {FAKE_COMMENT} WHERE id = 1")
            except pymysql.MySQLError as error:
                errors.append(error)
            waiter.join(10)
    finally:
        first.close()
        second.close()
    assert any(error.args[0] == 1213 for error in errors), errors  # ER_LOCK_DEADLOCK

    text, _ = innodb_status_and_globals(mariadb)
    assert "Trx id counter 123456789" in text  # the server really printed the fake lines
    values = parse_innodb_status(text).values
    assert values["innodb_deadlock_present"] == 1
    assert abs(values["innodb_deadlock_latest_timestamp_seconds"] - time.time()) < 2 * 86400  # local time read as UTC
    assert values["innodb_trx_id_counter"] != 123456789
    assert values["innodb_trx_history_list_length"] != 424242
    real_counter = next(line for line in text.splitlines()[::-1] if line.startswith("Trx id counter "))
    assert values["innodb_trx_id_counter"] == int(real_counter.split()[-1])
    mariadb.execute(f"DROP DATABASE {db}")
