"""information_schema.REPLICA_HOST_STATUS: the instances of an Amazon Aurora cluster."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.replica_host import replica_host_series


class ReplicaHost(TableSource):
    name = "replica_host"
    description = "Aurora cluster instances: CPU, lag, latencies (information_schema.REPLICA_HOST_STATUS)"
    grant = "PROCESS"

    def unsupported_reason(self, server):
        if server.flavour == "mariadb":
            return "information_schema.REPLICA_HOST_STATUS exists on Amazon Aurora only"
        return None

    def statement(self, server):
        return ("SELECT SERVER_ID, IF(SESSION_ID = 'MASTER_SESSION_ID', 'writer', 'reader') AS ROLE, CPU,"
                " MASTER_SLAVE_LATENCY_IN_MICROSECONDS, REPLICA_LAG_IN_MILLISECONDS,"
                " LOG_STREAM_SPEED_IN_KiB_PER_SECOND, CURRENT_REPLAY_LATENCY_IN_MICROSECONDS"
                " FROM information_schema.REPLICA_HOST_STATUS")

    def parse(self, rows):
        return SourceResult(series=replica_host_series(rows))


SCRAPER = ReplicaHost
