"""performance_schema.events_waits_summary_global_by_event_name: waits per instrument."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.perf_schema_waits import events_waits_series


class PerfSchemaEventsWaits(TableSource):
    name = "perf_schema_events_waits"
    description = "wait events and their time per instrument (performance_schema)"

    def statement(self, server):
        return ("SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT"
                " FROM performance_schema.events_waits_summary_global_by_event_name")

    def parse(self, rows):
        return SourceResult(series=events_waits_series(rows))


SCRAPER = PerfSchemaEventsWaits
