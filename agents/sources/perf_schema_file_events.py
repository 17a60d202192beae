"""performance_schema.file_summary_by_event_name: file reads, writes and other operations per instrument."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_files import file_events_series


class PerfSchemaFileEvents(TableSource):
    name = "perf_schema_file_events"
    description = "file I/O per instrument and mode (performance_schema)"

    def statement(self, server):
        return ("SELECT EVENT_NAME, COUNT_READ, SUM_TIMER_READ, SUM_NUMBER_OF_BYTES_READ, COUNT_WRITE, SUM_TIMER_WRITE,"
                " SUM_NUMBER_OF_BYTES_WRITE, COUNT_MISC, SUM_TIMER_MISC"
                " FROM performance_schema.file_summary_by_event_name")

    def parse(self, rows):
        return SourceResult(series=file_events_series(rows))


SCRAPER = PerfSchemaFileEvents
