"""information_schema.INNODB_CMP: InnoDB page compression per page size (the exporter's default, as upstream)."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.innodb_cmp import innodb_cmp_series


class InnodbCmp(TableSource):
    name = "innodb_cmp"
    description = "InnoDB compression per page size (information_schema.INNODB_CMP)"
    grant = "PROCESS"

    def statement(self, server):
        return ("SELECT page_size, compress_ops, compress_ops_ok, compress_time, uncompress_ops, uncompress_time"
                " FROM information_schema.INNODB_CMP")

    def parse(self, rows):
        return SourceResult(series=innodb_cmp_series(rows))


SCRAPER = InnodbCmp
