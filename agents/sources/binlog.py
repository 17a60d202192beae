"""Binary log position and files: SHOW MASTER/BINARY LOG STATUS and SHOW BINARY LOGS."""

from . import Scraper, SourceResult
from mysql_snmp.parsers.binlog import binlog_values
from mysql_snmp.parsers.values import text_of, typed_int

LOGS_STATEMENT = "SHOW BINARY LOGS"


def status_statement(server) -> str:
    # MySQL 8.2 deprecated SHOW MASTER STATUS and 8.4 removed it.
    if server.flavour != "mariadb" and server.version >= (8, 2, 0):
        return "SHOW BINARY LOG STATUS"
    return "SHOW MASTER STATUS"


def binlog_grant(server) -> str:
    if server.flavour == "mariadb" and server.version >= (10, 5, 2):
        return "BINLOG MONITOR (alias REPLICATION CLIENT)"
    return "REPLICATION CLIENT"


class Binlog(Scraper):
    name = "binlog"
    catalog_kind = "binlog"
    description = "binary log position and files (SHOW MASTER STATUS, SHOW BINARY LOGS)"

    def statements(self, server):
        return (status_statement(server), LOGS_STATEMENT)

    def privilege_hint(self, server, statement):
        return binlog_grant(server)

    def collect(self, conn, server, context=None):
        variables = (context or {}).get("global_variables") or {}
        if variables.get("log_bin") == 0:
            # SHOW BINARY LOGS fails with ERROR 1381 when binary logging is off: that is
            # a configuration, not an error.  Nothing to report, and no statement sent.
            return SourceResult()
        conn.pipeline(self.statements(server))  # both in one round trip
        status_rows = conn.query(status_statement(server)).dicts()
        logs_rows = conn.query(LOGS_STATEMENT).dicts()
        reading = binlog_values(status_rows, logs_rows)
        files = [(text_of(row.get("Log_name")), typed_int(row.get("File_size"))) for row in logs_rows]
        return SourceResult(values=reading.values, raw={"binary_logs": files, "master_status": status_rows})


SCRAPER = Binlog
