"""information_schema.USER_STATISTICS (userstat=1): activity per user."""

from mysql_snmp.agents.sources import SourceResult
from mysql_snmp.agents.sources.table_source import UserstatSource
from mysql_snmp.parsers.userstat import user_statistics_series


class UserStatistics(UserstatSource):
    name = "user_statistics"
    description = "connections, time, bytes, rows and commands per user (information_schema.USER_STATISTICS)"
    table = "information_schema.USER_STATISTICS"

    def statement(self, server):
        return "SELECT * FROM information_schema.USER_STATISTICS"

    def parse(self, rows):
        series = user_statistics_series(rows)
        # Also whole, for the exporter: the columns no catalog entry names are served too, as upstream serves them.
        return SourceResult(series=series, raw={self.name: series})


SCRAPER = UserStatistics
