"""performance_schema.events_statements_summary_by_digest: the slowest recent statement digests.

Options (mysqld_exporter's): the ``limit`` digests with the most total time among
those seen in the last ``timelimit`` seconds, digest text cut to ``digest_text_limit``
characters, system schemas (and ``exclude_schemas``) left out.
"""

from . import SourceResult
from .table_source import TableSource, sql_text
from mysql_snmp.parsers.perf_schema_statements import events_statements_series

ALWAYS_EXCLUDED = ("mysql", "performance_schema", "information_schema")


class PerfSchemaEventsStatements(TableSource):
    name = "perf_schema_events_statements"
    heavy = True
    description = "statement digests: count, time, rows, temporary tables (performance_schema)"

    def statement(self, server):
        options = self.options
        excluded = ", ".join(sql_text(schema) for schema in ALWAYS_EXCLUDED + options.events_statements_exclude_schemas)
        # SUM_LOCK_TIME is in every version; SUM_CPU_TIME and the QUANTILE columns came with MySQL 8.0.28.
        recent = server.flavour != "mariadb" and server.version >= (8, 0, 28)
        cpu = ", SUM_CPU_TIME, QUANTILE_95, QUANTILE_99, QUANTILE_999" if recent else ""
        return (
            f"SELECT SCHEMA_NAME, DIGEST, LEFT(DIGEST_TEXT, {int(options.events_statements_digest_text_limit)})"
            f" AS DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT, SUM_LOCK_TIME{cpu}, SUM_ERRORS, SUM_WARNINGS,"
            " SUM_ROWS_AFFECTED, SUM_ROWS_SENT, SUM_ROWS_EXAMINED, SUM_CREATED_TMP_DISK_TABLES,"
            " SUM_CREATED_TMP_TABLES, SUM_SORT_MERGE_PASSES, SUM_SORT_ROWS, SUM_NO_INDEX_USED"
            " FROM performance_schema.events_statements_summary_by_digest"
            f" WHERE SCHEMA_NAME NOT IN ({excluded})"  # NULL NOT IN (...) is not true: no schema-less digests, as upstream
            f" AND LAST_SEEN > DATE_SUB(NOW(), INTERVAL {int(options.events_statements_timelimit)} SECOND)"
            f" ORDER BY SUM_TIMER_WAIT DESC LIMIT {int(options.events_statements_limit)}"
        )

    def parse(self, rows):
        return SourceResult(series=events_statements_series(rows))


SCRAPER = PerfSchemaEventsStatements
