"""Auto-increment columns: next value and the maximum of the column's type."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.auto_increment import auto_increment_series

# The column type's maximum: 2^(bits - 1) - 1, or 2^bits - 1 when unsigned.
STATEMENT = (
    "SELECT c.table_schema, c.table_name, c.column_name, t.auto_increment,"
    " POW(2, CASE c.data_type WHEN 'tinyint' THEN 7 WHEN 'smallint' THEN 15 WHEN 'mediumint' THEN 23"
    " WHEN 'int' THEN 31 WHEN 'bigint' THEN 63 END + (c.column_type LIKE '% unsigned')) - 1 AS max_int"
    " FROM information_schema.COLUMNS c STRAIGHT_JOIN information_schema.TABLES t"
    " ON (BINARY c.table_schema = t.table_schema AND BINARY c.table_name = t.table_name)"
    " WHERE c.extra = 'auto_increment' AND t.auto_increment IS NOT NULL"
)


class AutoIncrement(TableSource):
    name = "auto_increment"
    heavy = True
    description = "auto_increment columns: current value and type maximum (information_schema.COLUMNS, TABLES)"
    grant = "SELECT on the schemas to watch (information_schema lists only tables the user can see)"

    def statement(self, server):
        return STATEMENT

    def parse(self, rows):
        return SourceResult(series=auto_increment_series(rows))


SCRAPER = AutoIncrement
