"""performance_schema.table_io_waits_summary_by_table: row operations and their wait time per table."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_waits import table_io_waits_series


class PerfSchemaTableIoWaits(TableSource):
    name = "perf_schema_table_io_waits"
    heavy = True
    description = "table I/O waits per table and operation (performance_schema)"

    def statement(self, server):
        return ("SELECT OBJECT_SCHEMA, OBJECT_NAME, COUNT_FETCH, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE,"
                " SUM_TIMER_FETCH, SUM_TIMER_INSERT, SUM_TIMER_UPDATE, SUM_TIMER_DELETE"
                " FROM performance_schema.table_io_waits_summary_by_table"
                " WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')")

    def parse(self, rows):
        return SourceResult(series=table_io_waits_series(rows))


SCRAPER = PerfSchemaTableIoWaits
