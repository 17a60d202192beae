"""The text-row reader (agents/mysql/answer_limits.py ``read_text_rows`` / ``text_row``) on a throwaway MariaDB:
every value as pymysql's own reader gives it, NULLs, long strings, binary columns, bytes that are not
UTF-8, packets continued past 16 MiB, and the answer's bounds (rows, bytes, deadline) kept."""

from __future__ import annotations

import time

import pymysql
import pytest

from mysql_snmp.agents.mysql import answer_limits
from mysql_snmp.agents.mysql.answer_limits import GuardedConnection, MalformedRow, ReadGuard, ReadStopped, text_row
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.errors import QueryError
from tests.support import root_settings


def guarded(mariadb, guard: ReadGuard | None = None, **options) -> GuardedConnection:
    return GuardedConnection(host="127.0.0.1", port=mariadb.port, user="root", password="", charset="utf8mb4",
                             read_guard=guard or ReadGuard(), **options)


def plain(mariadb, **options) -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=mariadb.port, user="root", password="", charset="utf8mb4",
                           **options)


@pytest.fixture
def ours(mariadb):
    connection = guarded(mariadb)
    yield connection
    if connection.open:
        connection.close()


@pytest.fixture
def theirs(mariadb):
    connection = plain(mariadb)
    yield connection
    connection.close()


def rows_of(connection, statement: str) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(statement)
        return cursor.fetchall()


@pytest.fixture(scope="module")
def odd_table(mariadb):
    """Text and binary columns with NULLs, empty strings, and strings past each length prefix's range."""
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS text_rows",
        "DROP TABLE IF EXISTS text_rows.t",
        "CREATE TABLE text_rows.t (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET latin1,"
        " txt MEDIUMTEXT CHARACTER SET utf8mb4, bin MEDIUMBLOB)",
        "INSERT INTO text_rows.t VALUES (1, 'café', 'ünïcødé ✓', x'00ff41'), (2, NULL, '', NULL),"
        " (3, '', REPEAT('x', 250), REPEAT(x'fe', 251)), (4, 'a', REPEAT('é', 40000), REPEAT('b', 70000)),"
        " (5, 'z', REPEAT('y', 65535), x'')")
    return "SELECT name, txt, bin FROM text_rows.t ORDER BY id"


def test_status_and_variables_read_as_pymysql_reads_them(ours, theirs):
    for statement in ("SHOW GLOBAL VARIABLES", "SHOW GLOBAL STATUS LIKE 'Innodb_page_size'",
                      "SELECT @@version, @@version_comment, NULL, ''"):
        mine = rows_of(ours, statement)
        assert ours._result.text_encodings is not None  # the text path read it
        assert mine == rows_of(theirs, statement) and mine
    status = dict(rows_of(ours, "SHOW GLOBAL STATUS"))
    assert len(status) > 400 and status["Uptime"].isdigit() and status["Innodb_page_size"] == "16384"


def test_nulls_long_strings_and_binary_columns(ours, theirs, odd_table):
    rows = rows_of(ours, odd_table)
    assert ours._result.text_encodings == ("utf8", "utf8", None)  # Python's name for utf8mb4
    assert rows == rows_of(theirs, odd_table)
    assert rows[0] == ("café", "ünïcødé ✓", b"\x00\xffA")
    assert rows[1] == (None, "", None)
    assert rows[2] == ("", "x" * 250, b"\xfe" * 251)  # 251 bytes: a 0xFC (2-byte) length
    assert rows[3] == ("a", "é" * 40000, b"b" * 70000)  # 80,000 bytes: a 0xFD (3-byte) length
    assert rows[4] == ("z", "y" * 65535, b"")


def test_two_text_columns_of_every_length(ours, theirs, odd_table):
    # The two-column rows (SHOW GLOBAL STATUS's shape) are cut without text_row when both strings are short.
    for statement in ("SELECT name, txt FROM text_rows.t ORDER BY id", "SELECT txt, name FROM text_rows.t ORDER BY id",
                      "SELECT REPEAT('v', 249), REPEAT('w', 250)", "SELECT '', REPEAT('w', 251)"):
        assert rows_of(ours, statement) == rows_of(theirs, statement)
        assert ours._result.text_encodings == ("utf8", "utf8")


def test_column_definitions_are_parsed_once(mariadb, ours, theirs, odd_table):
    answer_limits._PARSED_COLUMNS.clear()
    statements = ("SHOW SLAVE STATUS", "SELECT id, name FROM text_rows.t ORDER BY id", odd_table)
    second = guarded(mariadb)  # another connection (another target of the same server) shares them
    try:
        for connection in (ours, ours, second):
            for statement in statements:
                for cursor_type in (pymysql.cursors.Cursor, pymysql.cursors.DictCursor):
                    with connection.cursor(cursor_type) as mine, theirs.cursor(cursor_type) as reference:
                        mine.execute(statement)
                        reference.execute(statement)
                        assert mine.description == reference.description
                        assert mine.fetchall() == reference.fetchall()
    finally:
        second.close()
    assert len(answer_limits._PARSED_COLUMNS) == 3  # the same bytes, parsed once
    # A column set that differs by one byte (another alias) is parsed on its own.
    assert rows_of(ours, "SELECT 'x' AS b") == (("x",),) and len(answer_limits._PARSED_COLUMNS) == 4


def test_a_result_with_numbers_is_left_to_pymysql(ours, odd_table):
    assert rows_of(ours, "SELECT id, name FROM text_rows.t ORDER BY id LIMIT 2") == ((1, "café"), (2, None))
    assert ours._result.text_encodings is None


def test_bytes_that_are_not_utf8_are_escaped(ours, odd_table):
    # Results in the columns' own charset: the latin1 'é' arrives as the byte 0xE9, in a column
    # whose charset pymysql decodes as the connection's (utf8mb4).
    rows_of(ours, "SET character_set_results = NULL")
    assert rows_of(ours, "SELECT name, txt FROM text_rows.t WHERE id = 1") == (("caf\\xe9", "ünïcødé ✓"),)


def test_pipelined_answers_are_read_by_the_text_path(mariadb):
    connection = MySQLConnection(root_settings(mariadb))
    try:
        connection.ensure_connected()
        alone = connection.query("SHOW GLOBAL VARIABLES")
        connection.pipeline(["SHOW GLOBAL STATUS", "SHOW GLOBAL VARIABLES", "SELECT 'last', NULL"])
        assert len(connection.query("SHOW GLOBAL STATUS").rows) > 400
        assert connection.query("SHOW GLOBAL VARIABLES") == alone
        assert connection.query("SELECT 'last', NULL").rows == [("last", None)]
        assert connection.query("SELECT 'after'").rows == [("after",)]
    finally:
        connection.close()


def test_a_packet_continued_past_16_mib(mariadb):
    mariadb.execute("SET GLOBAL max_allowed_packet = 64 * 1024 * 1024")
    ours = guarded(mariadb, ReadGuard(max_bytes=64 << 20), max_allowed_packet=64 << 20)
    try:
        size = (16 << 20) + 5
        (row,) = rows_of(ours, f"SELECT REPEAT('q', {size}), 'tail'")
        assert ours._result.text_encodings is not None
        assert len(row[0]) == size and set(row[0]) == {"q"} and row[1] == "tail"
        assert rows_of(ours, "SELECT 'next'") == (("next",),)  # the sequence numbers stayed in step
    finally:
        ours.close()
        mariadb.execute("SET GLOBAL max_allowed_packet = DEFAULT")


def test_the_row_limit_stops_the_text_path_and_closes_the_connection(mariadb, monkeypatch):
    monkeypatch.setattr(answer_limits, "MAX_ANSWER_ROWS", 100)
    connection = MySQLConnection(root_settings(mariadb))
    try:
        with pytest.raises(QueryError) as stopped:
            connection.query("SHOW GLOBAL STATUS")  # 500+ rows
        assert stopped.value.reason == "too_large" and "100 rows (MAX_ANSWER_ROWS)" in str(stopped.value)
        assert not connection.connected
        assert connection.query("SELECT 'again'").rows == [("again",)]  # a new connection
    finally:
        connection.close()


def test_the_byte_limit_stops_the_text_path(mariadb):
    guard = ReadGuard(max_bytes=4096)
    ours = guarded(mariadb, guard)
    with pytest.raises(ReadStopped) as stopped:
        rows_of(ours, "SHOW GLOBAL VARIABLES")  # ~40 kB
    assert stopped.value.reason == "too_large" and ours._sock is None


def test_the_deadline_stops_the_text_path(mariadb):
    guard = ReadGuard()
    ours = guarded(mariadb, guard)
    guard.start(time.monotonic() - 1)
    with pytest.raises(ReadStopped) as stopped:
        rows_of(ours, "SHOW GLOBAL VARIABLES")
    assert stopped.value.reason == "timeout" and ours._sock is None


@pytest.mark.parametrize("packet, why", [
    (b"\x05abc", "runs past"),
    (b"\x02ab\xfc\x10", "runs past"),
    (b"\xff\x00", "length prefix 0xff"),
])
def test_a_malformed_row_is_refused(packet, why):
    with pytest.raises(MalformedRow, match=why):
        text_row(packet, ("utf8", "utf8"))


def test_a_short_row_ends_where_its_data_ends():
    # As pymysql reads it (PyMySQL#434): missing trailing columns are left out.
    assert text_row(b"\x01a", ("utf8", "utf8")) == ("a",)
    assert text_row(b"\xfb\x00", ("utf8", None)) == (None, b"")
