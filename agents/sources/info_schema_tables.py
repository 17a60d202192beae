"""information_schema.TABLES: version, row estimate and sizes per table (--collect.info_schema.tables.databases)."""

from . import SourceResult
from .table_source import TableSource, sql_text
from mysql_snmp.parsers.info_schema_tables import info_schema_tables_series

COLUMNS = (
    "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, IFNULL(ENGINE, 'NONE') AS ENGINE, IFNULL(VERSION, 0) AS VERSION,"
    " IFNULL(ROW_FORMAT, 'NONE') AS ROW_FORMAT, IFNULL(TABLE_ROWS, 0) AS TABLE_ROWS,"
    " IFNULL(DATA_LENGTH, 0) AS DATA_LENGTH, IFNULL(INDEX_LENGTH, 0) AS INDEX_LENGTH,"
    " IFNULL(DATA_FREE, 0) AS DATA_FREE, IFNULL(CREATE_OPTIONS, 'NONE') AS CREATE_OPTIONS"
    " FROM information_schema.TABLES"
)
SYSTEM_SCHEMAS = ("mysql", "performance_schema", "information_schema", "sys")


class InfoSchemaTables(TableSource):
    name = "info_schema_tables"
    heavy = True
    description = "tables: version, rows, data/index/free bytes (information_schema.TABLES)"
    grant = "SELECT on the schemas to watch (information_schema lists only tables the user can see)"

    def statement(self, server):
        # One statement for every schema (mysqld_exporter sends one per schema).
        wanted = self.options.tables_databases.strip()
        if wanted == "*":
            excluded = ", ".join(sql_text(schema) for schema in SYSTEM_SCHEMAS)
            return f"{COLUMNS} WHERE TABLE_SCHEMA NOT IN ({excluded})"
        schemas = [schema.strip() for schema in wanted.split(",") if schema.strip()]
        return f"{COLUMNS} WHERE TABLE_SCHEMA IN ({', '.join(sql_text(schema) for schema in schemas) or 'NULL'})"

    def parse(self, rows):
        return SourceResult(series=info_schema_tables_series(rows))


SCRAPER = InfoSchemaTables
