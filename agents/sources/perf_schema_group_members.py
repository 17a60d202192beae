"""performance_schema.replication_group_members: the members of a group replication group (MySQL)."""

from . import SourceResult
from .table_source import TableSource, mysql_only
from mysql_snmp.parsers.perf_schema_replication import group_members_series


class PerfSchemaGroupMembers(TableSource):
    name = "perf_schema_group_members"
    description = "group replication members and their state (performance_schema.replication_group_members)"

    def unsupported_reason(self, server):
        return mysql_only(server, "performance_schema.replication_group_members")

    def statement(self, server):
        return "SELECT * FROM performance_schema.replication_group_members"

    def parse(self, rows):
        return SourceResult(series=group_members_series(rows))


SCRAPER = PerfSchemaGroupMembers
