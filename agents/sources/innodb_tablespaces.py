"""InnoDB tablespaces and their file sizes: INNODB_TABLESPACES (MySQL 8) or INNODB_SYS_TABLESPACES."""

from . import SourceResult
from .table_source import TableSource
from mysql_snmp.parsers.innodb_tablespaces import innodb_tablespaces_series


class InnodbTablespaces(TableSource):
    name = "innodb_tablespaces"
    heavy = True
    description = "InnoDB tablespaces: id, row format, file and allocated bytes (information_schema)"
    grant = "PROCESS"

    def unsupported_reason(self, server):
        if server.flavour != "mariadb" and server.version < (5, 7, 0):
            return "InnoDB tablespace tables need MySQL 5.7+"
        return None

    def statement(self, server):
        # The servers differ in table name and columns; the missing ones are constants here.
        if server.flavour != "mariadb" and server.version >= (8, 0, 0):
            return ("SELECT SPACE, NAME, 'NONE' AS FILE_FORMAT, IFNULL(ROW_FORMAT, 'NONE') AS ROW_FORMAT,"
                    " IFNULL(SPACE_TYPE, 'NONE') AS SPACE_TYPE, FILE_SIZE, ALLOCATED_SIZE"
                    " FROM information_schema.INNODB_TABLESPACES")
        if server.flavour == "mariadb" and server.version >= (10, 5, 0):
            return ("SELECT SPACE, NAME, 'NONE' AS FILE_FORMAT, IFNULL(ROW_FORMAT, 'NONE') AS ROW_FORMAT,"
                    " '' AS SPACE_TYPE, FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES")
        return ("SELECT SPACE, NAME, IFNULL(FILE_FORMAT, 'NONE') AS FILE_FORMAT,"
                " IFNULL(ROW_FORMAT, 'NONE') AS ROW_FORMAT, IFNULL(SPACE_TYPE, 'NONE') AS SPACE_TYPE,"
                " FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES")

    def parse(self, rows):
        return SourceResult(series=innodb_tablespaces_series(rows))


SCRAPER = InnodbTablespaces
