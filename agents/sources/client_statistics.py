"""information_schema.CLIENT_STATISTICS (userstat=1): activity per client host."""

from .table_source import WholeUserstatSource
from mysql_snmp.parsers.userstat import client_statistics_series


class ClientStatistics(WholeUserstatSource):
    name = "client_statistics"
    description = "connections, time, bytes, rows and commands per client (information_schema.CLIENT_STATISTICS)"
    table = "information_schema.CLIENT_STATISTICS"
    series_of = staticmethod(client_statistics_series)


SCRAPER = ClientStatistics
