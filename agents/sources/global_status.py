"""SHOW GLOBAL STATUS: every server counter and gauge, name as printed -> typed value."""

from . import NameValueScraper
from mysql_snmp.parsers.status import without_wsrep, wsrep_enabled


class GlobalStatus(NameValueScraper):
    name = "global_status"
    catalog_kind = "global_status"
    description = "server counters and gauges (SHOW GLOBAL STATUS)"
    statement = "SHOW GLOBAL STATUS"

    def refine(self, parsed):
        # MariaDB prints wsrep_ready OFF & co. with Galera off: kept, they read as a broken
        # cluster node (the mysqld-mixin's MySQLGaleraNotReady fires on every plain MariaDB).
        return parsed if wsrep_enabled(parsed) else without_wsrep(parsed)


SCRAPER = GlobalStatus
