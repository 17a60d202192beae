"""information_schema.USER_STATISTICS and CLIENT_STATISTICS (userstat=1, MariaDB and Percona).

Both tables have the same columns after the first (USER or CLIENT); each known
column is one catalog series, ``user_statistics_<column>`` / ``client_statistics_<column>``.
Columns a newer server adds are left out until the catalog names them.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from mysql_snmp.parsers.table_rows import Field, Series, series_from_rows

COLUMNS = (
    "total_connections", "concurrent_connections", "connected_time", "busy_time", "cpu_time", "bytes_received",
    "bytes_sent", "binlog_bytes_written", "rows_read", "rows_sent", "rows_deleted", "rows_inserted",
    "rows_fetched", "rows_updated", "table_rows_read", "select_commands", "update_commands", "other_commands",
    "commit_transactions", "rollback_transactions", "denied_connections", "lost_connections", "access_denied",
    "empty_queries", "total_ssl_connections", "max_statement_time_exceeded",
)
# Catalog names say their unit: the three time columns count seconds.
_SECONDS = {"connected_time": "connected_time_seconds", "busy_time": "busy_seconds", "cpu_time": "cpu_time_seconds"}


def _fields(prefix: str) -> tuple[Field, ...]:
    return tuple(Field(f"{prefix}_{_SECONDS.get(column, column)}", column) for column in COLUMNS)


USER_FIELDS = _fields("user_statistics")
CLIENT_FIELDS = _fields("client_statistics")


def user_statistics_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"user": "user"}, USER_FIELDS)


def client_statistics_series(rows: Iterable[Mapping]) -> Series:
    return series_from_rows(rows, {"client": "client"}, CLIENT_FIELDS)
