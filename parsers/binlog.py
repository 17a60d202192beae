"""Binary log state: SHOW BINARY LOGS and SHOW BINARY LOG STATUS / SHOW MASTER STATUS.

``SHOW MASTER STATUS`` became ``SHOW BINARY LOG STATUS`` in MySQL 8.2 (the old
form is gone in 8.4); ``SHOW MASTER LOGS`` is a synonym of ``SHOW BINARY LOGS``.
The columns did not change: File, Position, Binlog_Do_DB, Binlog_Ignore_DB and,
on MySQL, Executed_Gtid_Set.  SHOW BINARY LOGS prints Log_name, File_size and,
from MySQL 8.0.14, Encrypted.  Both are empty or fail when log_bin is OFF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from .columns import MISSING, fold_row, pick
from .gtid import normalise_gtid_set
from .values import CatalogValues, text_of, typed, typed_int

_FILE_NUMBER = re.compile(r"\.([0-9]+)$")


class BinlogError(ValueError):
    """A row that does not look like binary log output."""


@dataclass(frozen=True)
class BinaryLogs:
    """Summary of SHOW BINARY LOGS.  Sizes are None when the server printed no File_size."""

    files: int
    size_bytes: int | None
    current_file: str | None
    current_file_size_bytes: int | None
    encrypted_files: int | None  # None: no Encrypted column


def file_number(log_name: str | None) -> int | None:
    """The sequence number of a binary log file name: 2 for ``mysql-bin.000002``."""
    match = _FILE_NUMBER.search(log_name or "")
    return int(match.group(1)) if match else None


def parse_binary_logs(rows: Iterable[object]) -> BinaryLogs:
    names: list[str | None] = []
    sizes: list[int] = []
    sizes_complete = True
    encrypted: int | None = None
    for index, row in enumerate(rows):
        folded = fold_row(row, f"binary logs row {index}")
        name = pick(folded, ("Log_name",))
        if name is MISSING:
            raise BinlogError(f"binary logs row {index}: no Log_name column (columns: {sorted(folded)})")
        names.append(text_of(name))
        size = typed_int(pick(folded, ("File_size",)))
        if size is None:
            # Old servers printed no File_size (the original mysql-snmp then summed the
            # rows seen so far); a total missing files would be a wrong number: none at all.
            sizes_complete = False
        else:
            sizes.append(size)
        flag = pick(folded, ("Encrypted",))
        if flag is not MISSING:
            encrypted = (encrypted or 0) + (1 if typed(flag) == 1 else 0)
    return BinaryLogs(
        files=len(names),
        size_bytes=sum(sizes) if sizes_complete else None,
        current_file=names[-1] if names else None,
        current_file_size_bytes=sizes[-1] if sizes_complete and sizes else None,
        encrypted_files=encrypted,
    )


def parse_binlog_status(rows: Iterable[object]) -> dict[str, object]:
    """SHOW BINARY LOG STATUS / SHOW MASTER STATUS: {file, position, do_db, ignore_db, gtid_executed}.

    Fields the server did not print are absent; no row (binary log off) gives {}.
    """
    rows = list(rows)
    if not rows:
        return {}
    folded = fold_row(rows[0], "binary log status row")
    status: dict[str, object] = {}
    for key, column, read in (
        ("file", "File", text_of),
        ("position", "Position", typed_int),
        ("do_db", "Binlog_Do_DB", text_of),
        ("ignore_db", "Binlog_Ignore_DB", text_of),
        ("gtid_executed", "Executed_Gtid_Set", lambda v: normalise_gtid_set(text_of(v))),
    ):
        value = pick(folded, (column,))
        if value is not MISSING:
            status[key] = read(value)
    if status.get("position") is None and "position" in status:
        raise BinlogError(f"binary log status: Position {text_of(pick(folded, ('Position',)))!r} is not a number")
    return status


def binlog_values(status_rows: Iterable[object] | None = None, logs_rows: Iterable[object] | None = None) -> CatalogValues:
    """Catalog values from either or both statements (None: statement not run)."""
    reading = CatalogValues()
    values = reading.values
    current_file = None
    if logs_rows is not None:
        logs = parse_binary_logs(logs_rows)
        values["binlog_files"] = logs.files
        for name, value in (
            ("binlog_size_bytes", logs.size_bytes),
            ("binlog_current_file_size_bytes", logs.current_file_size_bytes),
            ("binlog_encrypted_files", logs.encrypted_files),
        ):
            if value is not None:
                values[name] = value
        current_file = logs.current_file
    if status_rows is not None:
        status = parse_binlog_status(status_rows)
        for name, key in (
            ("binlog_position", "position"),
            ("binlog_current_file", "file"),
            ("binlog_do_db", "do_db"),
            ("binlog_ignore_db", "ignore_db"),
            ("binlog_gtid_executed", "gtid_executed"),
        ):
            if key in status:
                values[name] = status[key]  # type: ignore[assignment]
        current_file = status.get("file") or current_file
    number = file_number(current_file)  # type: ignore[arg-type]
    if number is not None:
        values["binlog_file_number"] = number
    return reading
