"""Binary log position and files: SHOW MASTER/BINARY LOG STATUS and SHOW BINARY LOGS."""

from agents.sources import Scraper, SourceResult, binlog_grant
from parsers.binlog import parse_binary_logs, parse_binlog_status


def status_statement(server) -> str:
    # MySQL 8.2 deprecated SHOW MASTER STATUS and 8.4 removed it.
    if server.flavour != "mariadb" and server.version >= (8, 2, 0):
        return "SHOW BINARY LOG STATUS"
    return "SHOW MASTER STATUS"


LOGS_STATEMENT = "SHOW BINARY LOGS"


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
        if str(variables.get("log_bin", "ON")).upper() in ("OFF", "0"):
            # SHOW BINARY LOGS fails with ERROR 1381 when binary logging is off:
            # that is a configuration, not an error, so run nothing.
            return SourceResult(raw={"binary_logs": [], "master_status": None})
        status = conn.query(status_statement(server))
        logs = conn.query(LOGS_STATEMENT)
        position = parse_binlog_status(status.dicts())
        files = parse_binary_logs(logs.rows)
        result = SourceResult(raw={"binary_logs": files, "master_status": position})
        if position:
            result.values.update(position)
        result.values["files"] = len(files)
        result.values["size_bytes"] = sum(size for _, size in files)
        return result


SCRAPER = Binlog
