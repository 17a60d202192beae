"""Replica status of every channel: SHOW ALL SLAVES STATUS / SHOW REPLICA STATUS / SHOW SLAVE STATUS."""

from . import Scraper, SourceResult
from mysql_snmp.parsers.replication import parse_replica_status, replica_values


def replica_status_statement(server) -> str:
    if server.flavour == "mariadb":
        # Only ALL SLAVES shows every named connection (multi-source, MariaDB 10.0+).
        return "SHOW ALL SLAVES STATUS"
    if server.version >= (8, 0, 22):
        return "SHOW REPLICA STATUS"
    return "SHOW SLAVE STATUS"


def replication_grant(server) -> str:
    # MariaDB 10.5.9 split SLAVE MONITOR out of REPLICATION CLIENT (ERROR 1227 otherwise).
    if server.flavour == "mariadb" and server.version >= (10, 5, 9):
        return "SLAVE MONITOR"
    return "REPLICATION CLIENT"


def replication_result(rows: list[dict]) -> SourceResult:
    """Replica status rows (one per channel, columns as printed) as a SourceResult."""
    channels = parse_replica_status(rows)
    reading = replica_values(channels)
    return SourceResult(values=reading.values, series=reading.series,
                        raw={"replica_status": [channel.raw for channel in channels]})


class Replication(Scraper):
    name = "replication"
    catalog_kind = "replication"
    description = "replication threads, lag and positions of every channel"
    pipelined = True

    def statements(self, server):
        return (replica_status_statement(server),)

    def privilege_hint(self, server, statement):
        return replication_grant(server)

    def collect(self, conn, server, context=None):
        return replication_result(conn.query(replica_status_statement(server)).dicts())


SCRAPER = Replication
