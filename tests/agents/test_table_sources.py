"""Which statement each table source sends to which server, and which servers it skips (no server needed)."""

from __future__ import annotations

import pytest

from mysql_snmp.agents.snapshot import ServerInfo
from mysql_snmp.agents.sources import scraper_classes
from mysql_snmp.agents.sources.options import SourceOptions
from mysql_snmp.agents.sources.table_source import TableSource

MARIADB_1011 = ServerInfo("mariadb", (10, 11, 6), "10.11.6-MariaDB")
MARIADB_104 = ServerInfo("mariadb", (10, 4, 30), "10.4.30-MariaDB")
MYSQL_57 = ServerInfo("mysql", (5, 7, 44), "5.7.44")
MYSQL_80 = ServerInfo("mysql", (8, 0, 36), "8.0.36")
MYSQL_84 = ServerInfo("mysql", (8, 4, 3), "8.4.3")
PERCONA_80 = ServerInfo("percona", (8, 0, 36), "8.0.36-28")
SERVERS = (MARIADB_1011, MARIADB_104, MYSQL_57, MYSQL_80, MYSQL_84, PERCONA_80)


def source(name: str, **options) -> TableSource:
    return scraper_classes()[name](SourceOptions(**options))


def table_sources() -> list[str]:
    return [name for name, cls in scraper_classes().items() if issubclass(cls, TableSource)]


def test_every_table_source_feeds_its_own_catalog_entries_and_is_off_outside_the_exporter():
    from mysql_snmp.agents.catalog import load_catalog

    catalog = load_catalog()
    assert len(table_sources()) == 25
    for name in table_sources():
        cls = scraper_classes()[name]
        assert cls.catalog_kind == name and not cls.enabled_by_default and cls.takes_options
        assert catalog.from_source(name), name
        assert all(metric.prometheus and metric.snmp is None for metric in catalog.from_source(name)), name


@pytest.mark.parametrize("server", SERVERS, ids=lambda s: s.version_string)
def test_a_server_either_gets_statements_or_a_reason(server):
    for name in table_sources():
        scraper = source(name)
        reason = scraper.unsupported_reason(server)
        if reason is None:
            statements = scraper.statements(server)
            assert statements and all(s.startswith("SELECT ") for s in statements), name
        else:
            assert len(reason) > 20, name


def test_tables_that_exist_on_one_flavour_only():
    skipped = {server.version_string: {name for name in table_sources() if source(name).unsupported_reason(server)}
               for server in SERVERS}
    group = {"perf_schema_group_members", "perf_schema_group_member_stats", "perf_schema_applier_workers"}
    userstat = {"table_statistics", "schema_statistics", "user_statistics", "client_statistics"}
    assert skipped["10.11.6-MariaDB"] == group | {"replica_host"}
    assert skipped["10.4.30-MariaDB"] == group | {"replica_host", "sys_user_summary"}  # sys: 10.6+
    assert skipped["5.7.44"] == userstat | {"perf_schema_applier_workers"}  # timestamps: 8.0+
    assert skipped["8.0.36"] == skipped["8.4.3"] == userstat
    assert skipped["8.0.36-28"] == set()  # Percona has userstat and everything MySQL has


def test_tablespace_statement_per_server():
    tablespaces = source("innodb_tablespaces")
    assert "information_schema.INNODB_TABLESPACES" in tablespaces.statement(MYSQL_80)
    assert "SPACE_TYPE" in tablespaces.statement(MYSQL_80) and "'NONE' AS FILE_FORMAT" in tablespaces.statement(MYSQL_80)
    mariadb = tablespaces.statement(MARIADB_1011)
    assert "INNODB_SYS_TABLESPACES" in mariadb and "'' AS SPACE_TYPE" in mariadb  # no such column since 10.5
    assert "IFNULL(FILE_FORMAT" in tablespaces.statement(MYSQL_57)


def test_events_statements_options_and_cpu_time():
    default = source("perf_schema_events_statements").statement(MYSQL_80)
    assert "LEFT(DIGEST_TEXT, 120)" in default and "INTERVAL 86400 SECOND" in default and default.endswith("LIMIT 250")
    assert "SUM_CPU_TIME" in default and "QUANTILE_999" in default
    assert "SUM_CPU_TIME" not in source("perf_schema_events_statements").statement(MARIADB_1011)
    assert "SUM_CPU_TIME" not in source("perf_schema_events_statements").statement(ServerInfo("mysql", (8, 0, 27), "x"))
    narrowed = source("perf_schema_events_statements", events_statements_limit=5, events_statements_timelimit=60,
                      events_statements_digest_text_limit=30,
                      events_statements_exclude_schemas=("app's",)).statement(MYSQL_80)
    assert "LEFT(DIGEST_TEXT, 30)" in narrowed and "INTERVAL 60 SECOND" in narrowed and narrowed.endswith("LIMIT 5")
    assert "'mysql', 'performance_schema', 'information_schema', 'app\\'s'" in narrowed  # quoted, not injected


def test_tables_file_instances_and_user_options_are_quoted_into_the_statement():
    everything = source("info_schema_tables").statement(MARIADB_1011)
    assert "TABLE_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema', 'sys')" in everything
    listed = source("info_schema_tables", tables_databases="shop, crm").statement(MARIADB_1011)
    assert "TABLE_SCHEMA IN ('shop', 'crm')" in listed
    assert "IN (NULL)" in source("info_schema_tables", tables_databases=",").statement(MARIADB_1011)
    files = source("perf_schema_file_instances", file_instances_filter="ibd$|x'y").statement(MARIADB_1011)
    assert files.endswith("REGEXP 'ibd$|x\\'y'")
    assert "Select_priv" not in source("mysql_user").statement(MYSQL_80)
    assert "Select_priv" in source("mysql_user", user_privileges=True).statement(MYSQL_80)
