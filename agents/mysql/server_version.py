"""What the server is, and the statements that depend on it: flavour and version from
``@@version``, the per-statement time limit each server takes, the per-session limits."""

from __future__ import annotations

import re

from ..snapshot import ServerInfo

# --------------------------------------------------------------------------- server identity


def server_info_from_version(version: str, comment: str = "") -> ServerInfo:
    """``SELECT @@version, @@version_comment`` -> flavour and numeric version.

    MariaDB says so in @@version ("10.11.19-MariaDB-0+deb12u1-log"); Percona Server
    only in @@version_comment ("Percona Server (GPL), Release 33, ...").
    """
    numbers = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    parts = tuple(int(n) for n in numbers.groups()) if numbers else (0, 0, 0)
    if "mariadb" in (version or "").lower():
        flavour = "mariadb"
    elif "percona" in (comment or "").lower() or "percona" in (version or "").lower():
        flavour = "percona"
    else:
        flavour = "mysql"
    return ServerInfo(flavour=flavour, version=parts, version_string=version, version_comment=comment or "")


def limited_statement(server: ServerInfo, statement: str, seconds: float | None) -> str | None:
    """``statement`` bounded by the server to ``seconds`` (None: no limit, or none this server takes
    per statement).  MariaDB bounds any statement (SET STATEMENT ... FOR), MySQL 5.7.8+ a SELECT (hint)."""
    if seconds is None:
        return None
    seconds = max(0.001, seconds)
    if server.flavour == "mariadb":
        return f"SET STATEMENT max_statement_time = {seconds:.3f} FOR {statement}" if server.version >= (10, 1, 2) else None
    if server.version >= (5, 7, 8) and statement[:7].upper() == "SELECT ":
        return f"SELECT /*+ MAX_EXECUTION_TIME({max(1, int(seconds * 1000))}) */ {statement[7:]}"
    return None


# mysqld_exporter's --exporter.log_slow_filter: keep the scrapes' temporary tables and sorts on
# disk out of the slow query log.  The variable exists on MariaDB and Percona Server only.
LOG_SLOW_FILTER = "SET SESSION log_slow_filter = 'tmp_table_on_disk,filesort_on_disk'"


def session_setup_statements(server: ServerInfo, statement_timeout: float, lock_wait_timeout: int,
                             log_slow_filter: bool = False) -> list[str]:
    """Per-session limits so a monitoring statement never hangs or blocks DDL for long."""
    statements = [f"SET SESSION lock_wait_timeout = {int(lock_wait_timeout)}"]
    if log_slow_filter and server.flavour in ("mariadb", "percona"):
        statements.append(LOG_SLOW_FILTER)
    if server.flavour == "mariadb":
        if server.version >= (10, 1, 1):
            statements.append(f"SET SESSION max_statement_time = {statement_timeout:g}")
    elif server.version >= (5, 7, 8):
        statements.append(f"SET SESSION max_execution_time = {int(statement_timeout * 1000)}")
    return statements
