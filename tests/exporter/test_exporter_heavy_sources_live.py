"""Heavy sources (a row per table, digest or file) on a real MariaDB: a slow one costs only itself.

The fault: the statements of ``info_schema.tables`` and ``auto_increment.columns`` wait 30 s on
the server before their rows (a real ``SLEEP`` in the statement, as a server with 20,000 tables
makes them slow), beside ``info_schema.tablestats``, which stays quick.  Run one after another
with the whole time each, the first slow one would leave nothing for ``tablestats``.
"""

from __future__ import annotations

import time

import pytest
from exporter_harness import running_exporter

from mysql_snmp.agents.collection import failure_reason
from mysql_snmp.agents.mysql.errors import QueryError
from tests.support import create_monitoring_user

pytestmark = pytest.mark.live

GRANTS = ("GRANT SELECT, PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {user}",)
HEAVY_FLAGS = ("--collect.info_schema.tables", "--collect.auto_increment.columns", "--collect.info_schema.tablestats")
SLOW_SOURCES = ("info_schema_tables", "auto_increment")


@pytest.fixture(scope="module")
def reader(mariadb_tables, tmp_path_factory):
    mariadb_tables.execute(
        "CREATE DATABASE IF NOT EXISTS heavy",
        "CREATE TABLE IF NOT EXISTS heavy.items (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
        "INSERT INTO heavy.items (v) VALUES (1), (2)",
        "SELECT COUNT(*) FROM heavy.items",  # a row in TABLE_STATISTICS
    )
    return create_monitoring_user(mariadb_tables, tmp_path_factory.mktemp("heavy"), GRANTS)


def slow_down(exporter, names=SLOW_SOURCES) -> None:
    """Make the named sources of the /metrics target wait 30 s on the server before their rows."""
    scrapers = exporter.app.default_target().collector.scrapers
    for name in names:
        real = type(scrapers[name])

        class Slow(real):
            def statement(self, server, real=real):
                return f"SELECT t.* FROM ({real.statement(self, server)}) AS t, (SELECT SLEEP(30) AS s) AS pause"

        scrapers[name] = Slow(scrapers[name].options)


def errors(scrape, collector: str) -> dict[str, float]:
    return {dict(labels)["reason"]: value for labels, value in scrape.samples["mysql_exporter_scrape_errors_total"].items()
            if dict(labels)["collector"] == collector}


def test_slow_heavy_sources_leave_time_for_the_quick_one_and_count_deadline(reader):
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", *HEAVY_FLAGS) as exporter:
        slow_down(exporter)
        for _ in range(2):  # the first scrape times nothing yet; the second orders by what it learned
            started = time.monotonic()
            scrape = exporter.scrape(headers={"X-Prometheus-Scrape-Timeout-Seconds": "4"})
            took = time.monotonic() - started
            assert took < 4.0
            assert scrape.value("mysql_up") == 1.0
            assert scrape.value("mysql_exporter_collector_success", collector="collect.global_status") == 1.0
            assert scrape.value("mysql_exporter_collector_success", collector="collect.info_schema.tablestats") == 1.0
            assert scrape.has("mysql_info_schema_table_statistics_rows_read_total")
            for slow in ("collect.info_schema.tables", "collect.auto_increment.columns"):
                assert scrape.value("mysql_exporter_collector_success", collector=slow) == 0.0
        # Each failure is counted under its true reason: the scrape deadline, not "error".
        assert errors(scrape, "collect.info_schema.tables") == {"deadline": 2.0}
        assert errors(scrape, "collect.auto_increment.columns") == {"deadline": 2.0}
        assert errors(scrape, "collect.info_schema.tablestats") == {}
        learned = exporter.app.default_target().collector._heavy_seconds
        assert learned["table_statistics"] < learned["info_schema_tables"]


def test_a_statement_over_the_collector_timeout_is_counted_as_timeout(reader):
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--collect.info_schema.tables",
                          "--exporter.collector-timeout=1") as exporter:
        slow_down(exporter, ("info_schema_tables",))
        started = time.monotonic()
        scrape = exporter.scrape(headers={"X-Prometheus-Scrape-Timeout-Seconds": "10"})
        assert time.monotonic() - started < 5.0  # the server stopped it at 1 s, not at the deadline
        assert scrape.value("mysql_exporter_collector_success", collector="collect.info_schema.tables") == 0.0
        assert errors(scrape, "collect.info_schema.tables") == {"timeout": 1.0}


def test_a_kill_query_at_the_deadline_is_deadline_and_any_other_is_error():
    killed = QueryError("ERROR 1317: Query execution was interrupted", reason="error", code=1317)
    now = time.monotonic()
    assert failure_reason(killed, now - 0.1, cut_by_deadline=False) == "deadline"
    assert failure_reason(killed, now + 60, cut_by_deadline=False) == "error"  # someone else's KILL
    assert failure_reason(killed, None, cut_by_deadline=False) == "error"
    over = QueryError("ERROR 1969: max_statement_time exceeded", reason="timeout", code=1969)
    assert failure_reason(over, now + 60, cut_by_deadline=True) == "deadline"
    assert failure_reason(over, now + 60, cut_by_deadline=False) == "timeout"
    denied = QueryError("ERROR 1227", reason="privilege", code=1227)
    assert failure_reason(denied, now - 1, cut_by_deadline=True) == "privilege"
