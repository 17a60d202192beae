"""performance_schema.table_lock_waits_summary_by_table: SQL and external lock waits per table."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_waits import table_lock_waits_series


class PerfSchemaTableLockWaits(TableSource):
    name = "perf_schema_table_lock_waits"
    heavy = True
    description = "table lock waits per table and lock type (performance_schema)"

    def statement(self, server):
        return ("SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_READ_NORMAL, COUNT_READ_WITH_SHARED_LOCKS,"
                " COUNT_READ_HIGH_PRIORITY, COUNT_READ_NO_INSERT, COUNT_READ_EXTERNAL, COUNT_WRITE_ALLOW_WRITE,"
                " COUNT_WRITE_CONCURRENT_INSERT, COUNT_WRITE_LOW_PRIORITY, COUNT_WRITE_NORMAL, COUNT_WRITE_EXTERNAL,"
                " SUM_TIMER_READ_NORMAL, SUM_TIMER_READ_WITH_SHARED_LOCKS, SUM_TIMER_READ_HIGH_PRIORITY,"
                " SUM_TIMER_READ_NO_INSERT, SUM_TIMER_READ_EXTERNAL, SUM_TIMER_WRITE_ALLOW_WRITE,"
                " SUM_TIMER_WRITE_CONCURRENT_INSERT, SUM_TIMER_WRITE_LOW_PRIORITY, SUM_TIMER_WRITE_NORMAL,"
                " SUM_TIMER_WRITE_EXTERNAL FROM performance_schema.table_lock_waits_summary_by_table"
                " WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema', 'information_schema')")

    def parse(self, rows):
        return SourceResult(series=table_lock_waits_series(rows))


SCRAPER = PerfSchemaTableLockWaits
