"""mysql.user: resource limits of each account, and (optionally) its global privileges as 1/0."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, folded_rows, series_from_rows

ACCOUNT = {"mysql_user": "user", "hostmask": "host"}
LIMIT_FIELDS = tuple(Field(f"mysql_user_{column}", column)
                     for column in ("max_questions", "max_updates", "max_connections", "max_user_connections"))
PRIVILEGE_COLUMNS = (
    "Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv", "Drop_priv", "Reload_priv",
    "Shutdown_priv", "Process_priv", "File_priv", "Grant_priv", "References_priv", "Index_priv", "Alter_priv",
    "Show_db_priv", "Super_priv", "Create_tmp_table_priv", "Lock_tables_priv", "Execute_priv",
    "Repl_slave_priv", "Repl_client_priv", "Create_view_priv", "Show_view_priv", "Create_routine_priv",
    "Alter_routine_priv", "Create_user_priv", "Event_priv", "Trigger_priv", "Create_tablespace_priv",
)
_FLAGS = {"Y": 1, "N": 0}


def mysql_user_series(rows: Iterable[Mapping], privileges: bool = False) -> Series:
    rows = folded_rows(rows)
    series = series_from_rows(rows, ACCOUNT, LIMIT_FIELDS)
    if privileges:
        flagged = [_privileges_as_numbers(row) for row in rows]
        fields = tuple(Field(f"mysql_user_{column.lower()}", column.lower()) for column in PRIVILEGE_COLUMNS)
        series_from_rows(flagged, ACCOUNT, fields, series)
    return series


def _privileges_as_numbers(row: dict) -> dict:
    """Y/N privilege columns as 1/0; anything else in them gives no sample."""
    folded = dict(row)
    for column in PRIVILEGE_COLUMNS:
        flag = folded.get(column.lower())
        if isinstance(flag, (bytes, bytearray)):
            flag = flag.decode("ascii", errors="replace")
        folded[column.lower()] = _FLAGS.get(flag)
    return folded
