"""information_schema.ROCKSDB_PERF_CONTEXT: RocksDB counters per table (MyRocks, MariaDB and Percona)."""

from . import SourceResult
from .table_source import TableSource, sql_text
from mysql_snmp.parsers.rocksdb_perf_context import STAT_TYPES, rocksdb_perf_context_series


class RocksdbPerfContext(TableSource):
    name = "rocksdb_perf_context"
    description = "RocksDB counters per table (information_schema.ROCKSDB_PERF_CONTEXT, MyRocks)"
    grant = "PROCESS"

    def statement(self, server):
        # Only the counters served: the table has ~57 rows per table, half of them timers.
        wanted = ", ".join(sql_text(stat) for stat in STAT_TYPES)
        return ("SELECT TABLE_SCHEMA, TABLE_NAME, IFNULL(PARTITION_NAME, '') AS PARTITION_NAME, STAT_TYPE, VALUE"
                f" FROM information_schema.ROCKSDB_PERF_CONTEXT WHERE STAT_TYPE IN ({wanted})")

    def parse(self, rows):
        return SourceResult(series=rocksdb_perf_context_series(rows))


SCRAPER = RocksdbPerfContext
