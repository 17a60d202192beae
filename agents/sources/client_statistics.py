"""information_schema.CLIENT_STATISTICS (userstat=1): activity per client host."""

from mysql_snmp.agents.sources import SourceResult
from mysql_snmp.agents.sources.table_source import UserstatSource
from mysql_snmp.parsers.userstat import client_statistics_series


class ClientStatistics(UserstatSource):
    name = "client_statistics"
    description = "connections, time, bytes, rows and commands per client (information_schema.CLIENT_STATISTICS)"
    table = "information_schema.CLIENT_STATISTICS"

    def statement(self, server):
        return "SELECT * FROM information_schema.CLIENT_STATISTICS"

    def parse(self, rows):
        series = client_statistics_series(rows)
        # Also whole, for the exporter: the columns no catalog entry names are served too, as upstream serves them.
        return SourceResult(series=series, raw={self.name: series})


SCRAPER = ClientStatistics
