"""Recovery rules of the collector, on a scripted server (the fault suite runs them on a real one):
denied sources retried on reconnect and with a backoff in minutes, a lost connection reopened
within the collection, repeated failures logged once, a server that answers nothing is down."""

from __future__ import annotations

import logging

import pymysql
import pytest

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.config.settings import ConnectionSettings
from mysql_snmp.agents.mysql.connection import MySQLConnection
from tests.agents.test_collection import _FakeConnection, metric, small_catalog

DENIED = pymysql.err.OperationalError(1227, "Access denied; you need (at least one of) the PROCESS privilege(s)")
LOST = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query")
NO_ANSWER = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query (timed out)")
LOCKED = pymysql.err.OperationalError(1205, "Lock wait timeout exceeded; try restarting transaction")


class ScriptedServer:
    """Answers by statement; ``overrides`` change an answer, ``once`` answers one statement
    differently the next time only.  Counts the connections opened."""

    def __init__(self):
        self.overrides: dict[str, object] = {}
        self.once: dict[str, object] = {}
        self.connections = 0
        self.grants = ["GRANT PROCESS, REPLICATION CLIENT ON *.* TO `mon`@`%`"]
        self.statements: list[str] = []

    def answer(self, statement):
        self.statements.append(statement)
        if statement in self.once:
            return self.once.pop(statement)
        if statement in self.overrides:
            return self.overrides[statement]
        if statement.startswith("SELECT @@version"):
            return ("@@version", "@@version_comment"), [("8.0.36", "MySQL Community Server - GPL")]
        if statement.startswith("SET "):
            return (), []
        if statement == "SHOW GLOBAL STATUS":
            return ("Variable_name", "Value"), [("Uptime", "42")]
        if statement == "SHOW ENGINE INNODB STATUS":
            return ("Type", "Name", "Status"), [("InnoDB", "", "")]
        if statement == "SHOW REPLICA STATUS":
            return ("Channel_Name",), []
        if statement == "SHOW GRANTS":
            return ("Grants for mon@%",), [(grant,) for grant in self.grants]
        raise AssertionError(statement)

    def connect(self, **kwargs):
        self.connections += 1
        return _FakeConnection(self.answer)


@pytest.fixture
def scripted(monkeypatch):
    """(server, collector, clock): the collector's retry times follow ``clock[0]``."""
    clock = [1000.0]
    monkeypatch.setattr("mysql_snmp.agents.collection.time.monotonic", lambda: clock[0])
    server = ScriptedServer()
    settings = ConnectionSettings(host="192.0.2.10")
    connection = MySQLConnection(settings, connector=server.connect, clock=lambda: clock[0])
    collector = Collector(settings, small_catalog(metric("status_uptime", "global_status", "Uptime")),
                          sources={"global_status", "innodb_status", "replication"}, host_metrics="off",
                          connection=connection, disabled_retry_seconds=15, disabled_retry_max_seconds=900)
    return server, collector, clock


def test_a_denied_source_backs_off_in_minutes_and_is_retried_on_every_reconnect(scripted, caplog):
    server, collector, clock = scripted
    server.overrides["SHOW ENGINE INNODB STATUS"] = DENIED
    retries = []
    with caplog.at_level(logging.DEBUG, logger="mysql_snmp.agents.collection"):
        for _ in range(8):
            if retries:
                clock[0] += retries[-1]  # the retry is due
            snapshot = collector.collect()
            assert snapshot.up and snapshot.sources["innodb_status"].reason == "privilege"
            assert "grant PROCESS" in snapshot.sources["innodb_status"].error
            retries.append(collector._disabled["innodb_status"].retry_at - clock[0])
    assert retries == [15, 30, 60, 120, 240, 480, 900, 900]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "disabled" in r.getMessage()]
    assert len(warnings) == 1

    # Skipped without a statement until then...
    before = collector.connection.statements
    assert collector.collect().sources["innodb_status"].statements == 0
    # global_status and replication, and SHOW GRANTS to see whether the grant came back
    assert collector.connection.statements - before == 3
    # ...except after a reconnect: the new session may have the grant.
    server.overrides.pop("SHOW ENGINE INNODB STATUS")
    collector.connection.close()
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.collection"):
        fixed = collector.collect()
    assert fixed.sources["innodb_status"].ok
    assert "source innodb_status works again" in caplog.text
    # The backoff starts over at the next denial.
    server.overrides["SHOW ENGINE INNODB STATUS"] = DENIED
    collector.connection.close()
    collector.collect()
    assert collector._disabled["innodb_status"].retry_at - clock[0] == 15


def test_a_denied_source_is_retried_at_the_first_collection_after_the_grants_change(scripted, caplog):
    server, collector, clock = scripted
    server.overrides["SHOW ENGINE INNODB STATUS"] = DENIED
    server.grants = ["GRANT REPLICATION CLIENT ON *.* TO `mon`@`%`"]
    for _ in range(5):  # a long denial: the back-off has reached 4 minutes
        clock[0] += collector._disabled["innodb_status"].retry_at - clock[0] if collector._disabled else 0
        assert collector.collect().sources["innodb_status"].reason == "privilege"
    assert collector._disabled["innodb_status"].retry_at - clock[0] == 240
    # Grants unchanged: one SHOW GRANTS per collection, the denied statement is not sent.
    for _ in range(3):
        clock[0] += 1
        server.statements.clear()
        assert collector.collect().sources["innodb_status"].statements == 0
        assert server.statements.count("SHOW GRANTS") == 1
        assert "SHOW ENGINE INNODB STATUS" not in server.statements
    connections = server.connections
    # GRANT PROCESS: the next collection retries it at once, on a new session.
    server.grants = ["GRANT PROCESS, REPLICATION CLIENT ON *.* TO `mon`@`%`"]
    server.overrides.pop("SHOW ENGINE INNODB STATUS")
    clock[0] += 1
    with caplog.at_level(logging.INFO, logger="mysql_snmp.agents.collection"):
        snapshot = collector.collect()
    assert snapshot.up and snapshot.sources["innodb_status"].ok
    assert server.connections == connections + 1
    assert "grants changed; retrying innodb_status now" in caplog.text
    assert "source innodb_status works again" in caplog.text
    # Nothing denied any more: no SHOW GRANTS either.
    server.statements.clear()
    clock[0] += 1
    collector.collect()
    assert "SHOW GRANTS" not in server.statements


def test_a_grant_change_that_does_not_help_sets_a_new_reference(scripted):
    server, collector, clock = scripted
    server.overrides["SHOW ENGINE INNODB STATUS"] = DENIED
    server.grants = ["GRANT REPLICATION CLIENT ON *.* TO `mon`@`%`"]
    collector.collect()
    server.grants = ["GRANT SELECT, REPLICATION CLIENT ON *.* TO `mon`@`%`"]  # not the grant it needs
    clock[0] += 1
    server.statements.clear()
    assert collector.collect().sources["innodb_status"].reason == "privilege"
    assert "SHOW ENGINE INNODB STATUS" in server.statements  # retried once...
    clock[0] += 1
    server.statements.clear()
    collector.collect()
    assert "SHOW ENGINE INNODB STATUS" not in server.statements  # ...and not again for the same grants


def test_a_lost_connection_is_reopened_within_the_collection(scripted, caplog):
    server, collector, _ = scripted
    assert collector.collect().up
    server.once["SHOW GLOBAL STATUS"] = LOST  # e.g. KILL CONNECTION, wait_timeout, a proxy restart
    with caplog.at_level(logging.INFO, logger="mysql_snmp.agents.collection"):
        snapshot = collector.collect()
    assert snapshot.up and all(status.ok for status in snapshot.sources.values())
    assert snapshot.values["status_uptime"] == 42
    assert server.connections == 2
    assert "reconnecting" in caplog.text and "lost the server" not in caplog.text


def test_a_connection_lost_twice_in_one_collection_is_down(scripted):
    server, collector, _ = scripted
    assert collector.collect().up
    server.once["SHOW GLOBAL STATUS"] = LOST
    server.once["SHOW ENGINE INNODB STATUS"] = LOST
    snapshot = collector.collect()
    assert not snapshot.up and snapshot.error and "connection" in snapshot.error.lower()
    assert [name for name in snapshot.values if not name.startswith("agent_")] == []


def test_a_server_that_answers_nothing_in_time_is_down_not_up_without_values(scripted):
    server, collector, _ = scripted
    for statement in ("SHOW GLOBAL STATUS", "SHOW ENGINE INNODB STATUS", "SHOW REPLICA STATUS"):
        server.overrides[statement] = NO_ANSWER
    snapshot = collector.collect()
    assert not snapshot.up and "no answer from the server" in snapshot.error
    assert "status_uptime" not in snapshot.values


def test_a_server_side_timeout_is_an_answer(scripted):
    server, collector, _ = scripted
    for statement in ("SHOW GLOBAL STATUS", "SHOW ENGINE INNODB STATUS", "SHOW REPLICA STATUS"):
        server.overrides[statement] = LOCKED
    snapshot = collector.collect()
    assert snapshot.up and {s.reason for s in snapshot.sources.values()} == {"timeout"}


def test_a_repeated_failure_is_logged_when_it_starts_and_when_it_ends(scripted, caplog):
    server, collector, _ = scripted
    server.overrides["SHOW REPLICA STATUS"] = LOCKED  # a heartbeat or status table held by a lock
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.collection"):
        for _ in range(5):
            assert collector.collect().sources["replication"].reason == "timeout"
        server.overrides.pop("SHOW REPLICA STATUS")
        assert collector.collect().sources["replication"].ok
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "replication failed" in m]) == 1, messages
    assert len([m for m in messages if "source replication works again" in m]) == 1, messages
