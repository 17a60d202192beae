"""information_schema.TABLE_STATISTICS (userstat=1): rows read and changed per table."""

from . import SourceResult
from .table_source import UserstatSource
from mysql_snmp.parsers.table_statistics import table_statistics_series


class TableStatistics(UserstatSource):
    name = "table_statistics"
    heavy = True
    description = "rows read/changed per table (information_schema.TABLE_STATISTICS, userstat=1)"
    table = "information_schema.TABLE_STATISTICS"

    def statement(self, server):
        return ("SELECT TABLE_SCHEMA, TABLE_NAME, ROWS_READ, ROWS_CHANGED, ROWS_CHANGED_X_INDEXES"
                " FROM information_schema.TABLE_STATISTICS")

    def parse(self, rows):
        return SourceResult(series=table_statistics_series(rows))


SCRAPER = TableStatistics
