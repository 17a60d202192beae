"""information_schema.QUERY_RESPONSE_TIME(_READ|_WRITE): the response time plugin's histograms.

On by default in the exporter, as in mysqld_exporter.  The tables exist only while the plugin is
loaded (Percona Server; MariaDB's query_response_time plugin): without it the
first statement fails with "unknown table" and the source is skipped, once.
"""

import time

from agents.connection import QueryError
from agents.sources import SourceResult
from agents.sources.table_source import TableSource
from parsers.query_response_time import response_time_histogram

# Catalog name -> table.  Percona's plugin splits reads and writes too; MariaDB's has only the first.
TABLES = (
    ("query_response_time_seconds", "QUERY_RESPONSE_TIME"),
    ("read_query_response_time_seconds", "QUERY_RESPONSE_TIME_READ"),
    ("write_query_response_time_seconds", "QUERY_RESPONSE_TIME_WRITE"),
)


class QueryResponseTime(TableSource):
    name = "query_response_time"
    description = "query response time histograms (information_schema.QUERY_RESPONSE_TIME plugin)"
    pipelined = False  # the READ/WRITE tables are read only when the main one exists
    grant = "PROCESS"

    # A READ/WRITE table found missing is not asked for again for this long (as the collector
    # does with a source whose first table is missing).
    retry_missing_seconds = 3600.0

    def __init__(self, options=None):
        super().__init__(options)
        self._missing_until: dict[str, float] = {}

    def statement(self, server):
        return f"SELECT TIME, COUNT, TOTAL FROM information_schema.{TABLES[0][1]}"

    def collect(self, conn, server, context=None):
        result = SourceResult()
        for index, (name, table) in enumerate(TABLES):
            if self._missing_until.get(table, 0.0) > time.monotonic():
                continue
            try:
                rows = conn.query(f"SELECT TIME, COUNT, TOTAL FROM information_schema.{table}").dicts()
            except QueryError as exc:
                if index == 0 or exc.reason != "unsupported":
                    raise
                self._missing_until[table] = time.monotonic() + self.retry_missing_seconds
                continue
            result.values[name] = response_time_histogram(rows)
        return result


SCRAPER = QueryResponseTime
