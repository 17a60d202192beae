"""information_schema.QUERY_RESPONSE_TIME(_READ|_WRITE): the response time plugin's histograms.

On by default in the exporter, as in mysqld_exporter.  The tables exist only while the plugin is
loaded (Percona Server; MariaDB's query_response_time plugin): without it the
first statement fails with "unknown table" and the source is skipped, once.
"""

from agents.connection import QueryError
from agents.sources import SourceResult
from agents.sources.table_source import TableSource
from parsers.query_response_time import response_time_histogram

# Catalog name -> table.  READ and WRITE came later than the all-queries table.
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

    def statement(self, server):
        return f"SELECT TIME, COUNT, TOTAL FROM information_schema.{TABLES[0][1]}"

    def collect(self, conn, server, context=None):
        result = SourceResult()
        for index, (name, table) in enumerate(TABLES):
            try:
                rows = conn.query(f"SELECT TIME, COUNT, TOTAL FROM information_schema.{table}").dicts()
            except QueryError as exc:
                if index == 0 or exc.reason != "unsupported":
                    raise
                continue  # an older plugin without the READ/WRITE split
            result.values[name] = response_time_histogram(rows)
        return result


SCRAPER = QueryResponseTime
