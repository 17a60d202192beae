"""performance_schema.replication_applier_status_by_worker: what each applier worker applied last (MySQL 8.0+)."""

from . import SourceResult
from .table_source import TableSource, mysql_only
from mysql_snmp.parsers.perf_schema_replication import WORKER_TIMESTAMPS, applier_workers_series


class PerfSchemaApplierWorkers(TableSource):
    name = "perf_schema_applier_workers"
    description = "transaction timestamps per replication applier worker (performance_schema, MySQL 8.0+)"

    def unsupported_reason(self, server):
        # MariaDB has the table, without the transaction timestamp columns.
        reason = mysql_only(server, "the transaction timestamps of replication_applier_status_by_worker")
        if reason is None and server.version < (8, 0, 0):
            reason = "replication_applier_status_by_worker has transaction timestamps from MySQL 8.0"
        return reason

    def statement(self, server):
        columns = ", ".join(column for column, _ in WORKER_TIMESTAMPS)
        return (f"SELECT CHANNEL_NAME, WORKER_ID, {columns}"
                " FROM performance_schema.replication_applier_status_by_worker")

    def parse(self, rows):
        return SourceResult(series=applier_workers_series(rows))


SCRAPER = PerfSchemaApplierWorkers
