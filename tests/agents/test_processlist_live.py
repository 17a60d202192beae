"""The processlist source counts on the server (GROUP BY) what the per-thread rows would count."""

import time

import pymysql
import pytest

from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.agents.sources.processlist import grouped_statement
from mysql_snmp.parsers.processlist import processlist_values, upstream_processlist_rows

pytestmark = pytest.mark.live

PER_THREAD = "SELECT ID, USER, HOST, DB, COMMAND, TIME, STATE FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"


def rows(conn, statement):
    with conn.cursor(pymysql.cursors.DictCursor) as cursor:
        cursor.execute(statement)
        return list(cursor.fetchall())


def test_grouped_rows_give_the_per_thread_counts(mariadb):
    idle = [mariadb.connect() for _ in range(7)]
    monitor = mariadb.connect()
    try:
        time.sleep(2.2)  # the idle ones have slept at least 2 s
        # Sleeping threads' Time moves between the two statements: compare counts, and times loosely.
        for _attempt in range(5):
            before = rows(monitor, PER_THREAD)
            grouped = rows(monitor, grouped_statement(2))
            after = rows(monitor, PER_THREAD)
            if [(r["ID"], r["COMMAND"], r["STATE"]) for r in before] == [(r["ID"], r["COMMAND"], r["STATE"]) for r in after]:
                break
        assert len(grouped) < len(before)  # grouped: fewer rows than threads
        by_thread, by_group = processlist_values(before), processlist_values(grouped)
        assert by_group.values["processlist_rows"] == by_thread.values["processlist_rows"] == len(before)
        assert by_group.series["processlist_threads"] == by_thread.series["processlist_threads"]
        assert by_group.series["processlist_user_threads"] == by_thread.series["processlist_user_threads"]
        assert by_group.series["processlist_threads"][labels_of(command="Sleep", state="none")] >= 7
        sleeping = labels_of(command="Sleep", state="none")
        later = processlist_values(after).series["processlist_seconds"][sleeping]
        assert by_thread.series["processlist_seconds"][sleeping] <= by_group.series["processlist_seconds"][sleeping] <= later

        upstream = {(r.key, r.labels): r.value for r in upstream_processlist_rows(grouped, None, 2)}
        # The 7 idle connections and the monitor's own left out; the root user's hosts without ports.
        assert upstream[("threads", (("command", "sleep"), ("state", "unknown")))] >= 7
        assert upstream[("processes_by_host", (("client_host", "127.0.0.1"),))] >= 7
        none_recent = {(r.key, r.labels): r.value for r in upstream_processlist_rows(rows(monitor, grouped_statement(3600)), None, 3600)}
        assert ("threads", (("command", "sleep"), ("state", "unknown"))) not in none_recent
    finally:
        for conn in idle + [monitor]:
            conn.close()
