"""performance_schema.events_statements_summary_by_digest summed over every digest."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_statements import SUM_COLUMNS, events_statements_sum_values


class PerfSchemaEventsStatementsSum(TableSource):
    name = "perf_schema_events_statements_sum"
    heavy = True
    description = "statement totals over all digests (performance_schema)"

    def statement(self, server):
        sums = ", ".join(f"SUM({column}) AS {column}" for column in SUM_COLUMNS)
        return f"SELECT {sums} FROM performance_schema.events_statements_summary_by_digest"

    def parse(self, rows):
        return SourceResult(values=events_statements_sum_values(rows))


SCRAPER = PerfSchemaEventsStatementsSum
