"""information_schema.USER_STATISTICS (userstat=1): activity per user."""

from .table_source import WholeUserstatSource
from mysql_snmp.parsers.userstat import user_statistics_series


class UserStatistics(WholeUserstatSource):
    name = "user_statistics"
    description = "connections, time, bytes, rows and commands per user (information_schema.USER_STATISTICS)"
    table = "information_schema.USER_STATISTICS"
    series_of = staticmethod(user_statistics_series)


SCRAPER = UserStatistics
