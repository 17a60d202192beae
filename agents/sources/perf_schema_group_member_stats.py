"""performance_schema.replication_group_member_stats: this member's certification and applier queues (MySQL)."""

from . import SourceResult
from .table_source import TableSource, mysql_only
from mysql_snmp.parsers.perf_schema_replication import group_member_stats_values


class PerfSchemaGroupMemberStats(TableSource):
    name = "perf_schema_group_member_stats"
    description = "group replication queues and conflicts of this member (performance_schema)"

    def unsupported_reason(self, server):
        return mysql_only(server, "performance_schema.replication_group_member_stats")

    def statement(self, server):
        return "SELECT * FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@server_uuid"

    def parse(self, rows):
        return SourceResult(values=group_member_stats_values(rows))


SCRAPER = PerfSchemaGroupMemberStats
