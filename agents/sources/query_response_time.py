"""information_schema.QUERY_RESPONSE_TIME(_READ|_WRITE): the response time plugin's histograms.

On by default in the exporter, as in mysqld_exporter.  The tables exist only while the plugin is
loaded (Percona Server; MariaDB's query_response_time plugin): without it the
first statement fails with "unknown table" and the source is skipped, once.
A missing READ or WRITE table is remembered the same way, so what the source
sends is known before it runs (it is pipelined with the other sources).
"""

import time

from ..mysql.errors import QueryError
from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.query_response_time import response_time_histogram

# Catalog name -> table.  Percona's plugin splits reads and writes too; MariaDB's has only the first.
TABLES = (
    ("query_response_time_seconds", "QUERY_RESPONSE_TIME"),
    ("read_query_response_time_seconds", "QUERY_RESPONSE_TIME_READ"),
    ("write_query_response_time_seconds", "QUERY_RESPONSE_TIME_WRITE"),
)


class QueryResponseTime(TableSource):
    name = "query_response_time"
    description = "query response time histograms (information_schema.QUERY_RESPONSE_TIME plugin)"
    grant = "PROCESS"

    # A READ/WRITE table found missing is not asked for again for this long (as the collector
    # does with a source whose first table is missing).
    retry_missing_seconds = 3600.0

    def __init__(self, options=None):
        super().__init__(options)
        self._missing_until: dict[str, float] = {}

    def _asked(self) -> list[tuple[int, str, str]]:
        """(index, catalog name, statement) of the tables to read this time."""
        now = time.monotonic()
        return [(index, name, f"SELECT TIME, COUNT, TOTAL FROM information_schema.{table}")
                for index, (name, table) in enumerate(TABLES)
                if index == 0 or self._missing_until.get(table, 0.0) <= now]

    def statements(self, server):
        return tuple(statement for _, _, statement in self._asked())

    def collect(self, conn, server, context=None):
        result = SourceResult()
        for index, name, statement in self._asked():
            try:
                rows = conn.query(statement).dicts()
            except QueryError as exc:
                if index == 0 or exc.reason != "unsupported":
                    raise
                self._missing_until[TABLES[index][1]] = time.monotonic() + self.retry_missing_seconds
                continue
            result.values[name] = response_time_histogram(rows)
        return result


SCRAPER = QueryResponseTime
