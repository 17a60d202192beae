"""performance_schema.table_io_waits_summary_by_index_usage: row operations and their wait time per index."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_waits import index_io_waits_series


class PerfSchemaIndexIoWaits(TableSource):
    name = "perf_schema_index_io_waits"
    heavy = True
    description = "index I/O waits per index and operation (performance_schema)"

    def statement(self, server):
        return ("SELECT OBJECT_SCHEMA, OBJECT_NAME, INDEX_NAME, COUNT_FETCH, COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE,"
                " SUM_TIMER_FETCH, SUM_TIMER_INSERT, SUM_TIMER_UPDATE, SUM_TIMER_DELETE"
                " FROM performance_schema.table_io_waits_summary_by_index_usage"
                " WHERE OBJECT_SCHEMA NOT IN ('mysql', 'performance_schema')")

    def parse(self, rows):
        return SourceResult(series=index_io_waits_series(rows))


SCRAPER = PerfSchemaIndexIoWaits
