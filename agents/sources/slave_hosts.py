"""Replicas registered with this source: SHOW REPLICAS / SHOW REPLICA HOSTS / SHOW SLAVE HOSTS.

Off by default, as in mysqld_exporter: on MariaDB 10.5.9+ it needs REPLICATION MASTER
ADMIN, a grant a monitoring user should not need for everything else.
"""

from . import Scraper, SourceResult
from mysql_snmp.parsers.slave_hosts import replica_host_series


def slave_hosts_statement(server) -> str:
    if server.flavour == "mariadb":
        return "SHOW REPLICA HOSTS" if server.version >= (10, 5, 1) else "SHOW SLAVE HOSTS"
    return "SHOW REPLICAS" if server.version >= (8, 0, 22) else "SHOW SLAVE HOSTS"


class SlaveHosts(Scraper):
    name = "slave_hosts"
    catalog_kind = "slave_hosts"
    description = "replicas registered with this server (SHOW REPLICAS / SHOW SLAVE HOSTS)"
    pipelined = True
    enabled_by_default = False

    def statements(self, server):
        return (slave_hosts_statement(server),)

    def privilege_hint(self, server, statement):
        if server.flavour == "mariadb" and server.version >= (10, 5, 9):
            return "REPLICATION MASTER ADMIN"
        return "REPLICATION SLAVE"

    def collect(self, conn, server, context=None):
        rows = conn.query(slave_hosts_statement(server)).dicts()
        return SourceResult(series=replica_host_series(rows))


SCRAPER = SlaveHosts
