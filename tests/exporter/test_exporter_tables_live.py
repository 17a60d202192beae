"""mysqld_exporter's table collectors against a real MariaDB (userstat, performance_schema,
query_response_time): each family against what SQL says, and beside Debian's Go exporter."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from exporter_harness import Scrape, running_exporter, scrape_go_exporter

from mysql_snmp.agents.catalog import CATALOG_PATH, load_catalog, parse_catalog
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.exporter.go_exporter import GO_EXPORTER, go_flags
from tests.support import create_monitoring_user

pytestmark = pytest.mark.live

# Reads every table a collector needs (mysql.user, sys, performance_schema, information_schema).
READ_ALL_GRANTS = ("GRANT SELECT, PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {user}",)
TABLE_COLLECTORS = (
    "info_schema.innodb_cmp", "info_schema.innodb_cmpmem", "info_schema.query_response_time",
    "auto_increment.columns", "info_schema.tables", "info_schema.innodb_tablespaces", "info_schema.tablestats",
    "info_schema.schemastats", "info_schema.userstats", "info_schema.clientstats", "info_schema.replica_host",
    "mysql.user", "sys.user_summary", "perf_schema.eventsstatements", "perf_schema.eventsstatementssum",
    "perf_schema.eventswaits", "perf_schema.file_events", "perf_schema.file_instances", "perf_schema.tableiowaits",
    "perf_schema.indexiowaits", "perf_schema.tablelocks", "perf_schema.replication_group_members",
    "perf_schema.replication_group_member_stats", "perf_schema.replication_applier_status_by_worker",
)


@pytest.fixture(scope="module")
def workload(mariadb_tables):
    """A schema, an account with limits, and known work done by a user of its own."""
    server = mariadb_tables
    server.execute(
        "CREATE DATABASE IF NOT EXISTS shop",
        "CREATE TABLE IF NOT EXISTS shop.orders (id SMALLINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v INT, KEY (v))",
        "INSERT INTO shop.orders (v) VALUES (1), (2), (3), (4), (5)",
        "ANALYZE TABLE shop.orders",
        "CREATE USER IF NOT EXISTS 'limited'@'10.%' IDENTIFIED BY 'x' WITH MAX_QUERIES_PER_HOUR 7"
        " MAX_UPDATES_PER_HOUR 8 MAX_CONNECTIONS_PER_HOUR 9 MAX_USER_CONNECTIONS 3",
        "GRANT SELECT, PROCESS ON *.* TO 'limited'@'10.%'",
        "CREATE USER IF NOT EXISTS 'worker'@'127.0.0.1' IDENTIFIED BY 'w'",
        "GRANT SELECT, INSERT ON shop.* TO 'worker'@'127.0.0.1'",
    )
    conn = server.connect(user="worker", password="w")
    try:
        with conn.cursor() as cursor:
            for value in range(4):
                cursor.execute("SELECT v FROM shop.orders WHERE v = %s", (value,))
                cursor.fetchall()
            cursor.execute("INSERT INTO shop.orders (v) VALUES (42)")
        conn.commit()
    finally:
        conn.close()
    conn = server.connect(user="worker", password="w", database="shop")  # digests under schema "shop"
    try:
        with conn.cursor() as cursor:
            for value in range(3):
                cursor.execute("SELECT COUNT(*) FROM orders WHERE v > %s", (value,))
                cursor.fetchall()
    finally:
        conn.close()
    return server


@pytest.fixture(scope="module")
def reader(workload, tmp_path_factory):
    return create_monitoring_user(workload, tmp_path_factory.mktemp("reader"), READ_ALL_GRANTS)


def every_collector_flags() -> list[str]:
    return [f"--collect.{name}" for name in TABLE_COLLECTORS] + ["--collect.mysql.user.privileges"]


def sql_rows(server, statement: str) -> list[dict]:
    conn = server.connect()
    try:
        with conn.cursor() as cursor:
            cursor.execute(statement)
            columns = [d[0].lower() for d in cursor.description]
            return [dict(zip(columns, row)) for row in cursor.fetchall()]
    finally:
        conn.close()


def scrape_between(server, statement: str, flags: list[str], my_cnf) -> tuple[list[dict], Scrape, list[dict]]:
    """The table read before and after one scrape: a counter served must lie between the two."""
    with running_exporter(f"--config.my-cnf={my_cnf}", "--no-collect.host", *flags) as exporter:
        before = sql_rows(server, statement)
        scrape = exporter.scrape()
        after = sql_rows(server, statement)
    return before, scrape, after


def served(scrape: Scrape, family: str, labels: dict) -> float:
    """The sample of ``family`` with exactly ``labels`` (which may include one called "name")."""
    series = scrape.samples.get(family, {})
    key = tuple(sorted(labels.items()))
    assert key in series, f"{family}{labels} not served; have {list(series)[:5]}"
    return series[key]


def assert_between(scrape: Scrape, name: str, labels: dict, before: float, after: float) -> None:
    value = served(scrape, name, labels)
    low, high = sorted((float(before), float(after)))
    assert low - 1e-9 <= value <= high + 1e-9, (name, labels, before, value, after)


def test_defaults_and_schema_tables_agree_with_sql(workload, reader):
    server = workload
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", "--collect.auto_increment.columns",
                          "--collect.info_schema.tables", "--collect.info_schema.tables.databases=shop",
                          "--collect.info_schema.innodb_tablespaces", "--collect.mysql.user",
                          "--collect.mysql.user.privileges") as exporter:
        scrape = exporter.scrape()
    for collector in ("info_schema.innodb_cmp", "info_schema.innodb_cmpmem", "info_schema.query_response_time",
                      "auto_increment.columns", "info_schema.tables", "info_schema.innodb_tablespaces", "mysql.user"):
        assert scrape.value("mysql_exporter_collector_success", collector=f"collect.{collector}") == 1.0, collector
    # INNODB_CMP/CMPMEM: one series per compressed page size (and pool), as the tables list them.
    for row in sql_rows(server, "SELECT * FROM information_schema.INNODB_CMP"):
        assert scrape.value("mysql_info_schema_innodb_cmp_compress_ops_total", page_size=str(row["page_size"])) \
            == row["compress_ops"]
    cmpmem = sql_rows(server, "SELECT * FROM information_schema.INNODB_CMPMEM")
    assert len(scrape.samples["mysql_info_schema_innodb_cmpmem_pages_used_total"]) == len(cmpmem)
    for row in cmpmem:
        labels = {"page_size": str(row["page_size"]), "buffer_pool": str(row["buffer_pool_instance"])}
        assert scrape.value("mysql_info_schema_innodb_cmpmem_pages_free_total", **labels) == row["pages_free"]
    # auto_increment: next value 7 (six rows) of a SMALLINT UNSIGNED, whose maximum is 65535.
    (row,) = sql_rows(server, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_NAME = 'orders'")
    labels = {"schema": "shop", "table": "orders", "column": "id"}
    assert scrape.value("mysql_info_schema_auto_increment_column", **labels) == row["auto_increment"] == 7
    assert scrape.value("mysql_info_schema_auto_increment_column_max", **labels) == 65535
    # information_schema.TABLES, narrowed to the schema asked for.
    (table,) = sql_rows(server, "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop'")
    assert {dict(k)["schema"] for k in scrape.samples["mysql_info_schema_table_rows"]} == {"shop"}
    assert scrape.value("mysql_info_schema_table_rows", schema="shop", table="orders") == table["table_rows"]
    for component in ("data_length", "index_length", "data_free"):
        assert scrape.value("mysql_info_schema_table_size", schema="shop", table="orders",
                            component=component) == table[component]
    assert scrape.value("mysql_info_schema_table_version", schema="shop", table="orders", type="BASE TABLE",
                        engine="InnoDB", row_format=table["row_format"], create_options="") == table["version"]
    # Tablespaces: id and sizes of each.
    for row in sql_rows(server, "SELECT * FROM information_schema.INNODB_SYS_TABLESPACES"):
        assert scrape.value("mysql_info_schema_innodb_tablespace_file_size_bytes", tablespace_name=row["name"]) \
            == row["file_size"]
        assert scrape.value("mysql_info_schema_innodb_tablespace_space_info", tablespace_name=row["name"],
                            file_format="NONE", row_format=row["row_format"] or "NONE", space_type="") == row["space"]
    # mysql.user: the limits and privileges of the account made above.
    account = {"mysql_user": "limited", "hostmask": "10.%"}
    for name, value in (("max_questions", 7), ("max_updates", 8), ("max_connections", 9),
                        ("max_user_connections", 3), ("select_priv", 1), ("process_priv", 1), ("insert_priv", 0)):
        assert scrape.value(f"mysql_mysql_{name}", **account) == value, name


def test_userstat_tables_agree_with_sql(workload, reader):
    server = workload
    flags = ["--collect.info_schema.userstats", "--collect.info_schema.clientstats", "--collect.info_schema.tablestats",
             "--collect.info_schema.schemastats"]
    before, scrape, after = scrape_between(server, "SELECT * FROM information_schema.USER_STATISTICS", flags,
                                           reader.my_cnf)
    (worker,) = [row for row in after if row["user"] == "worker"]
    # The worker is idle now: its counters are settled.
    assert scrape.value("mysql_info_schema_user_statistics_rows_inserted_total", user="worker") \
        == worker["rows_inserted"] == 1
    assert scrape.value("mysql_info_schema_user_statistics_select_commands_total", user="worker") \
        == worker["select_commands"] == 4 + 3
    assert scrape.value("mysql_info_schema_user_statistics_total_connections", user="worker") \
        == worker["total_connections"]
    assert scrape.value("mysql_info_schema_user_statistics_busy_seconds_total", user="worker") \
        == pytest.approx(worker["busy_time"])
    # Every column a catalog entry names (source.key) is served under the entry's name (ROWS_FETCHED,
    # TABLE_ROWS_READ are Percona's: not on MariaDB).
    named = [m for m in load_catalog().from_source("user_statistics") if m.source.key in worker]
    assert len(named) >= 20
    for metric in named:
        assert scrape.value(metric.prometheus.name, user="worker") == pytest.approx(worker[metric.source.key]), \
            metric.name
    for row in sql_rows(server, "SELECT * FROM information_schema.CLIENT_STATISTICS"):
        assert scrape.has("mysql_info_schema_client_statistics_bytes_sent_total")
        assert scrape.value("mysql_info_schema_client_statistics_total_connections", client=row["client"]) >= 1
    (orders,) = sql_rows(server, "SELECT * FROM information_schema.TABLE_STATISTICS WHERE TABLE_NAME = 'orders'")
    assert scrape.value("mysql_info_schema_table_statistics_rows_read_total", schema="shop", table="orders") \
        == orders["rows_read"] > 0
    assert scrape.value("mysql_info_schema_table_statistics_rows_changed_total", schema="shop", table="orders") \
        == orders["rows_changed"] > 0
    (shop,) = sql_rows(server, "SELECT SUM(ROWS_CHANGED_X_INDEXES) AS x FROM information_schema.TABLE_STATISTICS"
                               " WHERE TABLE_SCHEMA = 'shop'")
    assert scrape.value("mysql_info_schema_schema_statistics_rows_changed_x_indexes_total", schema="shop") \
        == shop["x"] > 0


def test_userstat_columns_no_catalog_entry_names_are_served_as_upstream(workload, reader):
    """MariaDB 10.11 prints no USER_STATISTICS column the catalog lacks, so take two out of the catalog:
    the real rows' columns then come out as mysqld_exporter serves a column it does not know,
    mysql_info_schema_user_statistics_<column> (untyped), beside the columns still named."""
    document = yaml.safe_load(CATALOG_PATH.read_text())
    unnamed = {"user_statistics_rows_read": "rows_read", "user_statistics_busy_seconds": "busy_time"}
    document["metrics"] = [m for m in document["metrics"] if m["name"] not in unnamed]
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", "--collect.info_schema.userstats",
                          catalog=parse_catalog(document)) as exporter:
        scrape = exporter.scrape()
    (worker,) = [row for row in sql_rows(workload, "SELECT * FROM information_schema.USER_STATISTICS")
                 if row["user"] == "worker"]
    for column in unnamed.values():
        name = f"mysql_info_schema_user_statistics_{column}"
        assert (scrape.types[name], scrape.labels[name]) == ("unknown", {"user"}), name
        assert scrape.value(name, user="worker") == pytest.approx(worker[column]), name
    assert not scrape.has("mysql_info_schema_user_statistics_rows_read_total")
    assert scrape.value("mysql_info_schema_user_statistics_rows_inserted_total", user="worker") == 1


def test_perf_schema_tables_agree_with_sql(workload, reader):
    server = workload
    flags = ["--collect.perf_schema.tableiowaits", "--collect.perf_schema.indexiowaits",
             "--collect.perf_schema.tablelocks", "--collect.perf_schema.eventsstatements",
             "--collect.perf_schema.eventsstatementssum", "--collect.perf_schema.eventswaits",
             "--collect.perf_schema.file_events", "--collect.perf_schema.file_instances",
             f"--collect.perf_schema.file_instances.remove_prefix={server.datadir}/", "--collect.sys.user_summary"]
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", *flags) as exporter:
        scrape = exporter.scrape()
    for flag in flags:
        if "=" not in flag:
            assert scrape.value("mysql_exporter_collector_success", collector=flag[2:]) == 1.0, flag
    # shop.orders is idle now: its I/O and lock counters are settled.
    (io,) = sql_rows(server, "SELECT * FROM performance_schema.table_io_waits_summary_by_table"
                             " WHERE OBJECT_SCHEMA = 'shop' AND OBJECT_NAME = 'orders'")
    table = {"schema": "shop", "name": "orders"}
    for operation in ("fetch", "insert", "update", "delete"):
        labels = {"operation": operation, **table}
        assert served(scrape, "mysql_perf_schema_table_io_waits_total", labels) == io[f"count_{operation}"]
        assert served(scrape, "mysql_perf_schema_table_io_waits_seconds_total", labels) \
            == pytest.approx(io[f"sum_timer_{operation}"] / 1e12)
    assert io["count_insert"] >= 6 and io["count_fetch"] > 0
    for row in sql_rows(server, "SELECT * FROM performance_schema.table_io_waits_summary_by_index_usage"
                                " WHERE OBJECT_SCHEMA = 'shop'"):
        index = row["index_name"] or "NONE"
        assert served(scrape, "mysql_perf_schema_index_io_waits_total",
                      {"index": index, "operation": "fetch", **table}) == row["count_fetch"]
        inserts = scrape.samples["mysql_perf_schema_index_io_waits_total"]
        has_insert = tuple(sorted({**table, "index": index, "operation": "insert"}.items())) in inserts
        assert has_insert == (index == "NONE"), index  # only rows without an index count inserts
    (locks,) = sql_rows(server, "SELECT * FROM performance_schema.table_lock_waits_summary_by_table"
                                " WHERE OBJECT_SCHEMA = 'shop' AND OBJECT_NAME = 'orders'")
    assert served(scrape, "mysql_perf_schema_sql_lock_waits_total", {"operation": "read_normal", **table}) \
        == locks["count_read_normal"]
    assert served(scrape, "mysql_perf_schema_external_lock_waits_total", {"operation": "write", **table}) \
        == locks["count_write_external"] > 0
    # The worker's SELECT digest (its connection named no default schema).
    digests = sql_rows(server, "SELECT SCHEMA_NAME, DIGEST, LEFT(DIGEST_TEXT, 120) AS DIGEST_TEXT, COUNT_STAR"
                               " FROM performance_schema.events_statements_summary_by_digest"
                               " WHERE DIGEST_TEXT LIKE 'SELECT `v` FROM `shop` . `orders`%'"
                               " OR DIGEST_TEXT LIKE 'SELECT COUNT ( * ) FROM `orders`%'")
    digest_series = scrape.samples.get("mysql_perf_schema_events_statements_total", {})
    assert digests
    for row in digests:
        key = tuple(sorted({"schema": row["schema_name"] or "NONE", "digest": row["digest"],
                            "digest_text": row["digest_text"]}.items()))
        # Digests without a schema are left out, as mysqld_exporter's SCHEMA_NAME NOT IN (...) leaves them.
        assert (key in digest_series) == (row["schema_name"] is not None)
        if key in digest_series:
            assert digest_series[key] == row["count_star"]
    assert {dict(k)["schema"] for k in digest_series} == {"shop"}
    assert all(dict(k)["schema"] not in ("mysql", "performance_schema", "information_schema") for k in digest_series)
    # Sums, events and files move with every statement: the served value lies between two reads.
    # sys.user_summary: the worker is idle, its figures are settled.
    (summary,) = sql_rows(server, "SELECT * FROM sys.`x$user_summary` WHERE user = 'worker'")
    assert scrape.value("mysql_sys_statements_total", user="worker") == summary["statements"]
    assert scrape.value("mysql_sys_connections_total", user="worker") == summary["total_connections"]
    assert scrape.value("mysql_sys_statement_latency", user="worker") == pytest.approx(
        float(summary["statement_latency"]) / 1e12)


@pytest.mark.parametrize("statement, family, labels_of, column, scale", [
    ("SELECT SUM(COUNT_STAR) AS v FROM performance_schema.events_statements_summary_by_digest",
     "mysql_perf_schema_events_statements_sum_total", lambda row: {}, "v", 1.0),
    ("SELECT EVENT_NAME, COUNT_STAR FROM performance_schema.events_waits_summary_global_by_event_name"
     " WHERE EVENT_NAME = 'wait/io/table/sql/handler'",
     "mysql_perf_schema_events_waits_total", lambda row: {"event_name": row["event_name"]}, "count_star", 1.0),
    ("SELECT EVENT_NAME, SUM_NUMBER_OF_BYTES_READ FROM performance_schema.file_summary_by_event_name"
     " WHERE EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'",
     "mysql_perf_schema_file_events_bytes_total", lambda row: {"event_name": row["event_name"], "mode": "read"},
     "sum_number_of_bytes_read", 1.0),
    ("SELECT SUM(COUNT) AS v FROM information_schema.QUERY_RESPONSE_TIME",
     "mysql_info_schema_query_response_time_seconds_count", lambda row: {}, "v", 1.0),
])
def test_moving_counters_lie_between_two_reads(workload, reader, statement, family, labels_of, column, scale):
    flags = ["--collect.perf_schema.eventsstatementssum", "--collect.perf_schema.eventswaits",
             "--collect.perf_schema.file_events"]
    before, scrape, after = scrape_between(workload, statement, flags, reader.my_cnf)
    assert before and len(before) == len(after)
    for old, new in zip(before, after):
        assert_between(scrape, family, labels_of(new), float(old[column]) * scale, float(new[column]) * scale)


def test_query_response_time_is_a_histogram(workload, reader):
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host") as exporter:
        scrape = exporter.scrape()
        connection = exporter.app.default_target().collector.connection
        sent = connection.statements
        failed = connection.failed_statements
        again = exporter.scrape()
        # Status, variables, InnoDB status, replica status, INNODB_CMP, INNODB_CMPMEM, QUERY_RESPONSE_TIME.
        assert connection.statements - sent == 7 and connection.failed_statements == failed
    assert again.value("mysql_exporter_collector_success", collector="collect.info_schema.query_response_time") == 1
    assert scrape.types["mysql_info_schema_query_response_time_seconds"] == "histogram"
    buckets = scrape.samples["mysql_info_schema_query_response_time_seconds_bucket"]
    bounds = [dict(labels)["le"] for labels in buckets]
    # MariaDB's default base 10: 1e-06 s ... 1e+06 s, written as Go writes them, then +Inf.
    assert "1e-06" in bounds and "1" in bounds and "1e+06" in bounds and "+Inf" in bounds
    counts = [buckets[labels] for labels in sorted(buckets, key=lambda l: float(dict(l)["le"]))]
    assert counts == sorted(counts) and counts[-1] == \
        scrape.value("mysql_info_schema_query_response_time_seconds_count") > 0
    # MariaDB's plugin has no READ/WRITE tables (Percona's has): not served, and not asked for again.
    assert not scrape.names("mysql_info_schema_read_query") and not scrape.names("mysql_info_schema_write_query")


def test_tables_a_server_lacks_are_skipped_once_with_the_reason(workload, reader):
    """Group replication, the 8.0 applier columns and Aurora's table do not exist on MariaDB."""
    flags = ["--collect.info_schema.replica_host", "--collect.perf_schema.replication_group_members",
             "--collect.perf_schema.replication_group_member_stats",
             "--collect.perf_schema.replication_applier_status_by_worker"]
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", *flags) as exporter:
        statements_before = exporter.app.default_target().collector.connection.statements \
            if exporter.app._default else 0
        first = exporter.scrape()
        connection = exporter.app.default_target().collector.connection
        sent = connection.statements
        second = exporter.scrape()
        sent_again = connection.statements - sent
    for flag in flags:
        assert first.value("mysql_exporter_collector_success", collector=flag[2:]) == 0.0
        assert second.value("mysql_exporter_collector_success", collector=flag[2:]) == 0.0
    assert statements_before == 0
    # The second scrape sends only the default collectors' statements, none for these four.
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host") as plain:
        plain.scrape()
        plain_connection = plain.app.default_target().collector.connection
        baseline = plain_connection.statements
        plain.scrape()
        assert sent_again == plain_connection.statements - baseline
    # A table the server lacks is no scrape error (mysqld_exporter's rule for optional tables).
    assert second.value("mysql_exporter_last_scrape_error") == 0.0
    errors = second.samples["mysql_exporter_scrape_errors_total"]
    assert {dict(labels)["reason"] for labels in errors if dict(labels)["collector"] in
            {flag[2:] for flag in flags}} == {"unsupported"}


def test_response_time_plugin_not_loaded_is_skipped_once(mariadb, make_monitoring_user):
    """On by default, as upstream: a server without the plugin skips it, with the reason, and no error."""
    user = make_monitoring_user(mariadb)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
        first = exporter.scrape()
        collector = exporter.app.default_target().collector
        status = collector.connection.statements
        exporter.scrape()
        second_statements = collector.connection.statements - status
        disabled = collector._disabled["query_response_time"]
    assert first.value("mysql_exporter_collector_success", collector="collect.info_schema.query_response_time") == 0
    assert first.value("mysql_exporter_last_scrape_error") == 0.0
    assert "QUERY_RESPONSE_TIME" in disabled.error and disabled.reason == "unsupported"
    assert not first.names("mysql_info_schema_query_response_time")
    assert first.has("mysql_info_schema_innodb_cmp_compress_ops_total")
    # The second scrape sends the other default collectors' statements only: status, variables,
    # InnoDB status, replica status, INNODB_CMP, INNODB_CMPMEM.
    assert second_statements == 6


def test_tokudb_absent_is_skipped_once_with_the_servers_reason(mariadb, make_monitoring_user):
    """MariaDB 10.6+ has no TokuDB: SHOW ENGINE TOKUDB STATUS answers ERROR 1286 (unknown storage
    engine) at the first scrape; the source is then skipped, with that reason, and it is no scrape error."""
    user = make_monitoring_user(mariadb)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host",
                          "--collect.engine_tokudb_status") as exporter:
        first = exporter.scrape()
        collector = exporter.app.default_target().collector
        sent = collector.connection.statements
        second = exporter.scrape()
        second_statements = collector.connection.statements - sent
        disabled = collector._disabled["engine_tokudb_status"]
    assert disabled.reason == "unsupported"
    assert "SHOW ENGINE TOKUDB STATUS" in disabled.error and "ERROR 1286" in disabled.error
    for scrape in (first, second):
        assert scrape.value("mysql_exporter_collector_success", collector="collect.engine_tokudb_status") == 0
        assert scrape.value("mysql_exporter_last_scrape_error") == 0.0
        assert not scrape.names("mysql_engine_tokudb_")
    # Only the default collectors' statements the second time (query_response_time is skipped too).
    assert second_statements == 6


def go_collector_flags() -> list[str]:
    """Every boolean --collect.X flag of the installed Go exporter: its collectors and on/off options."""
    return sorted(name.removeprefix("collect.") for name, default in go_flags().items()
                  if default is None and name.startswith("collect."))


# Families the Go exporter serves that we do not, by name prefix, and why (none may appear without a reason).
EXPLAINED_GO_ONLY = {
    "mysql_global_status_wsrep": "Galera is off on this server: MariaDB still prints wsrep_* status (wsrep_ready "
                                 "OFF would fire the mixin's MySQLGaleraNotReady), which we do not serve then",
}


def test_every_family_the_go_exporter_serves_is_served(workload, reader):
    if shutil.which(GO_EXPORTER) is None:
        pytest.skip(f"{GO_EXPORTER} not installed (apt-get install prometheus-mysqld-exporter)")
    collectors = go_collector_flags()
    assert len(collectors) >= 30, collectors
    assert "mysql.user.privileges" in collectors  # a boolean option, listed with the collectors
    flags = [f"--collect.{name}" for name in collectors]
    theirs = scrape_go_exporter(GO_EXPORTER, reader.my_cnf, flags)
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", *flags) as exporter:
        ours = exporter.scrape()
    own = ("mysql_exporter_", "go_", "process_", "promhttp_")
    served = [name for name in theirs.types if name.startswith("mysql_") and not name.startswith(own)]
    assert len(served) > 500
    missing = sorted(name for name in served
                     if name not in ours.types and not name.startswith(tuple(EXPLAINED_GO_ONLY)))
    assert missing == []
    assert any(name.startswith("mysql_global_status_wsrep") for name in served)  # the exception is real
    assert not any(name.startswith("mysql_global_status_wsrep") for name in ours.types)
    # The table collectors' families: same labels, same type, except the counters Go serves without
    # _total: prometheus_client would append _total to a counter, so those stay untyped to keep the name.
    table_prefixes = ("mysql_info_schema_", "mysql_perf_schema_", "mysql_sys_", "mysql_mysql_")
    compared = [name for name in served
                if name.startswith(table_prefixes) and not name.startswith("mysql_info_schema_processlist")]
    assert len(compared) > 100
    for name in compared:
        assert ours.labels.get(name, set()) == theirs.labels.get(name, set()), name
        untyped_counter = theirs.types[name] == "counter" and ours.types[name] == "unknown" \
            and not name.endswith("_total")
        assert ours.types[name] == theirs.types[name] or untyped_counter, (name, ours.types[name])


def test_promtool_accepts_every_table_collector(workload, reader):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    with running_exporter(f"--config.my-cnf={reader.my_cnf}", "--no-collect.host", *every_collector_flags()) as exporter:
        scrape = exporter.scrape()
    assert scrape.has("mysql_perf_schema_events_statements_total") and scrape.has("mysql_mysql_select_priv")
    result = subprocess.run([promtool, "check", "metrics"], input=scrape.text.encode(), capture_output=True)
    assert result.returncode in (0, 3), result.stderr.decode()[-2000:]  # 1 would be a parse error
    # Exit 3 is promtool's naming lint, about names mysqld_exporter chose (kept for its users' queries).
    upstream = ("mysql_global_variables_", "mysql_global_status_", "mysql_info_schema_", "mysql_perf_schema_",
                "mysql_sys_", "mysql_mysql_")
    flagged = {line.split()[0] for line in result.stderr.decode().splitlines() if line}
    assert {name for name in flagged if not name.startswith(upstream)} == set()


ROCKSDB_PLUGIN = Path("/usr/lib/mysql/plugin/ha_rocksdb.so")


@pytest.fixture(scope="module")
def mariadb_rocksdb():
    if not ROCKSDB_PLUGIN.exists():
        pytest.skip(f"{ROCKSDB_PLUGIN} absent (apt-get install mariadb-plugin-rocksdb)")
    with ThrowawayMariaDB(server_id=12, extra_args=("--plugin-load-add=ha_rocksdb",)) as server:
        yield server


def test_rocksdb_perf_context_agrees_with_sql(mariadb_rocksdb, tmp_path):
    server = mariadb_rocksdb
    server.execute("CREATE DATABASE r", "CREATE TABLE r.kv (id INT PRIMARY KEY, v INT) ENGINE=ROCKSDB",
                   "INSERT INTO r.kv VALUES (1, 1), (2, 2), (3, 3)", "SELECT * FROM r.kv WHERE id = 2")
    user = create_monitoring_user(server, tmp_path, READ_ALL_GRANTS)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host",
                          "--collect.info_schema.rocksdb_perf_context") as exporter:
        scrape = exporter.scrape()
    assert scrape.value("mysql_exporter_collector_success", collector="collect.info_schema.rocksdb_perf_context") == 1
    rows = sql_rows(server, "SELECT STAT_TYPE, VALUE FROM information_schema.ROCKSDB_PERF_CONTEXT"
                            " WHERE TABLE_SCHEMA = 'r' AND TABLE_NAME = 'kv'")
    values = {row["stat_type"]: row["value"] for row in rows}
    assert len(values) > 40  # the table's own counters and timers
    served = {name: scrape.value(f"mysql_info_schema_rocksdb_perf_context_{name}", schema="r", table="kv", part="")
              for name in ("user_key_comparison_count", "get_from_memtable_count", "io_bytes_read",
                           "key_lock_wait_count", "bloom_memtable_miss_count")}
    # r.kv is idle between the scrape and the read: each counter served is the table's value.
    assert served == {name: values[name.upper()] for name in served}
    assert scrape.types["mysql_info_schema_rocksdb_perf_context_io_bytes_read"] == "unknown"  # upstream: no _total
    assert not scrape.names("mysql_info_schema_rocksdb_perf_context_block_read_time")  # timers are not served
