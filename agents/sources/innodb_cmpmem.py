"""information_schema.INNODB_CMPMEM: the compressed page allocator (the exporter's default, as upstream)."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.innodb_cmpmem import innodb_cmpmem_series


class InnodbCmpMem(TableSource):
    name = "innodb_cmpmem"
    description = "InnoDB compressed page allocator per page size and pool (information_schema.INNODB_CMPMEM)"
    grant = "PROCESS"

    def statement(self, server):
        return ("SELECT page_size, buffer_pool_instance, pages_used, pages_free, relocation_ops, relocation_time"
                " FROM information_schema.INNODB_CMPMEM")

    def parse(self, rows):
        return SourceResult(series=innodb_cmpmem_series(rows))


SCRAPER = InnodbCmpMem
