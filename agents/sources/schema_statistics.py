"""information_schema.TABLE_STATISTICS (userstat=1) summed per schema."""

from . import SourceResult
from .table_source import UserstatSource
from mysql_snmp.parsers.table_statistics import schema_statistics_series


class SchemaStatistics(UserstatSource):
    name = "schema_statistics"
    heavy = True
    description = "rows read/changed per schema (information_schema.TABLE_STATISTICS summed, userstat=1)"
    table = "information_schema.TABLE_STATISTICS"

    def statement(self, server):
        return ("SELECT TABLE_SCHEMA, SUM(ROWS_READ) AS ROWS_READ, SUM(ROWS_CHANGED) AS ROWS_CHANGED,"
                " SUM(ROWS_CHANGED_X_INDEXES) AS ROWS_CHANGED_X_INDEXES"
                " FROM information_schema.TABLE_STATISTICS GROUP BY TABLE_SCHEMA")

    def parse(self, rows):
        return SourceResult(series=schema_statistics_series(rows))


SCRAPER = SchemaStatistics
