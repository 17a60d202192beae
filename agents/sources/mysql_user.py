"""mysql.user: resource limits per account, and privileges with --collect.mysql.user.privileges."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.mysql_user import PRIVILEGE_COLUMNS, mysql_user_series


class MysqlUser(TableSource):
    name = "mysql_user"
    description = "account limits and global privileges (mysql.user)"
    grant = "SELECT ON mysql.user"

    def statement(self, server):
        privileges = "".join(f", {column}" for column in PRIVILEGE_COLUMNS) if self.options.user_privileges else ""
        return (f"SELECT user, host{privileges}, max_questions, max_updates, max_connections, max_user_connections"
                " FROM mysql.user")

    def parse(self, rows):
        return SourceResult(series=mysql_user_series(rows, self.options.user_privileges))


SCRAPER = MysqlUser
