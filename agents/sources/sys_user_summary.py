"""sys.x$user_summary: statements, file I/O, connections and memory per user."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.sys_user_summary import sys_user_summary_series


class SysUserSummary(TableSource):
    name = "sys_user_summary"
    heavy = True
    description = "statements, file I/O, connections and memory per user (sys.x$user_summary)"
    grant = "SELECT ON sys.* and SELECT ON performance_schema.*"

    def unsupported_reason(self, server):
        if server.flavour == "mariadb" and server.version < (10, 6, 0):
            return "the sys schema ships with MariaDB 10.6+"
        if server.flavour != "mariadb" and server.version < (5, 7, 7):
            return "the sys schema ships with MySQL 5.7.7+"
        return None

    def statement(self, server):
        return ("SELECT user, statements, statement_latency, table_scans, file_ios, file_io_latency,"
                " current_connections, total_connections, unique_hosts, current_memory, total_memory_allocated"
                " FROM sys.`x$user_summary`")

    def parse(self, rows):
        return SourceResult(series=sys_user_summary_series(rows))


SCRAPER = SysUserSummary
