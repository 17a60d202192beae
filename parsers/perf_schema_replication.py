"""performance_schema group replication and applier tables (MySQL 5.7+/8.0+)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Mapping

from .table_rows import Field, Series, folded_rows, label_text, number, series_from_rows

# replication_group_members: one info series per member; a column this server lacks is an empty label.
MEMBER_LABELS = ("channel_name", "member_id", "member_host", "member_port", "member_state", "member_role",
                 "member_version", "member_communication_stack")

# replication_group_member_stats, this member's row: column -> scalar catalog name.
MEMBER_STATS = {
    "count_transactions_in_queue": "group_replication_transactions_in_queue",
    "count_transactions_checked": "group_replication_transactions_checked",
    "count_conflicts_detected": "group_replication_conflicts_detected",
    "count_transactions_rows_validating": "group_replication_transactions_rows_validating",
    "count_transactions_remote_in_applier_queue": "group_replication_transactions_remote_in_applier_queue",
    "count_transactions_remote_applied": "group_replication_transactions_remote_applied",
    "count_transactions_local_proposed": "group_replication_transactions_local_proposed",
    "count_transactions_local_rollback": "group_replication_transactions_local_rollback",
}

# replication_applier_status_by_worker: timestamp column -> catalog name (seconds since the epoch).
WORKER_TIMESTAMPS = tuple(
    (column, f"applier_worker_{column}_seconds") for column in (
        "last_applied_transaction_original_commit_timestamp",
        "last_applied_transaction_immediate_commit_timestamp",
        "last_applied_transaction_start_apply_timestamp",
        "last_applied_transaction_end_apply_timestamp",
        "applying_transaction_original_commit_timestamp",
        "applying_transaction_immediate_commit_timestamp",
        "applying_transaction_start_apply_timestamp",
    )
)


def group_members_series(rows: Iterable[Mapping]) -> Series:
    rows = folded_rows(rows)
    for row in rows:
        row["member"] = 1
    return series_from_rows(rows, {label: label for label in MEMBER_LABELS},
                            (Field("group_replication_member_info", "member"),))


def group_member_stats_values(rows: Iterable[Mapping]) -> dict[str, float]:
    values: dict[str, float] = {}
    for row in folded_rows(rows):
        for column, name in MEMBER_STATS.items():
            value = number(row.get(column))
            if value is not None:
                values[name] = value
    return values


def timestamp_seconds(value: object) -> float:
    """A TIMESTAMP(6) column as Unix seconds; the zero date (nothing applied yet) and NULL are 0.

    The server prints these in UTC whatever the session time zone (they are stored as such
    and mysqld_exporter reads them as UTC).
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    text = label_text(value).strip()
    if not text or text.startswith("0000-00-00"):
        return 0.0
    try:
        return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return 0.0


def applier_workers_series(rows: Iterable[Mapping]) -> Series:
    rows = folded_rows(rows)
    for row in rows:
        for column, name in WORKER_TIMESTAMPS:
            row[name] = timestamp_seconds(row.get(column))
    fields = tuple(Field(name, name) for _, name in WORKER_TIMESTAMPS)
    return series_from_rows(rows, {"channel_name": "channel_name", "member_id": "worker_id"}, fields)
