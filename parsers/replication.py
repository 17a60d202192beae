"""Replica status rows to one normalised shape, whatever the server calls its columns.

Three spellings of the same result set:

- ``SHOW SLAVE STATUS`` (MySQL before 8.0.22, Percona, MariaDB): ``Master_*`` /
  ``Slave_*`` columns, one row (MySQL 5.7+ adds ``Channel_Name``, one row per channel);
- ``SHOW REPLICA STATUS`` (MySQL 8.0.22+, the only form on 8.4): ``Source_*`` /
  ``Replica_*`` columns (8.0.30 still prints ``Master_UUID`` among them, so
  both spellings are tried for every field);
- MariaDB ``SHOW ALL SLAVES STATUS``: old names plus ``Connection_name``,
  ``Slave_SQL_State``, ``Using_Gtid``, ``Gtid_IO_Pos``, ``Gtid_Slave_Pos``,
  ``Retried_transactions``, ``Slave_received_heartbeats`` ...

Thread states are encoded 0 = No, 1 = Yes, 2 = Connecting: ``Connecting`` means
the I/O thread is started but has no connection to the source (source down,
network, credentials), which is neither running nor deliberately stopped.
``Seconds_Behind_Source`` is NULL when the SQL thread is stopped, or when it
has applied everything and the I/O thread is not connected; that NULL is kept
as None ("no lag can be computed"), never 0.
A column the server did not print leaves the field absent (see ``present``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from .types import NamedRow, Value, labels_of
from .columns import MISSING, fold_row, pick, pick_named
from .gtid import normalise_gtid_set
from .status import sample_number
from .values import CatalogValues, text_of, typed, typed_int

THREAD_STOPPED = 0
THREAD_RUNNING = 1
THREAD_CONNECTING = 2
_THREAD_STATES = {"yes": THREAD_RUNNING, "no": THREAD_STOPPED, "connecting": THREAD_CONNECTING}


class _Unreadable(ValueError):
    pass


def _as_int(value: object) -> int | None:
    if value is None:
        return None  # SQL NULL, kept
    number = typed_int(value)
    if number is None:
        raise _Unreadable(value)
    return number


def _as_thread_state(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and value in (0, 1, 2):
        return value
    state = _THREAD_STATES.get((text_of(value) or "").strip().lower())
    if state is None:
        raise _Unreadable(value)
    return state


def _as_gtid_set(value: object) -> str | None:
    return normalise_gtid_set(text_of(value))


def _as_using_gtid(value: object) -> int | None:
    """MySQL Auto_Position is 0/1; MariaDB Using_Gtid is No, Slave_Pos or Current_Pos."""
    if value is None:
        return None
    text = (text_of(value) or "").strip().lower()
    if text in ("slave_pos", "current_pos"):
        return 1
    number = typed(value)
    if number in (0, 1):
        return number
    raise _Unreadable(value)


@dataclass(frozen=True)
class _Field:
    name: str  # attribute of ReplicaChannel
    catalog: str | None  # catalog series it feeds (labels [channel]); None: kept on the channel only
    read: Callable[[object], Value]
    columns: tuple[str, ...]  # spellings, newest first


_FIELDS = (
    _Field("source_host", "replica_source_host", text_of, ("Source_Host", "Master_Host")),
    _Field("source_port", "replica_source_port", _as_int, ("Source_Port", "Master_Port")),
    _Field("source_user", None, text_of, ("Source_User", "Master_User")),
    _Field("source_uuid", "replica_source_uuid", text_of, ("Source_UUID", "Master_UUID")),
    _Field("source_server_id", "replica_source_server_id", _as_int, ("Source_Server_Id", "Master_Server_Id")),
    _Field("io_running", "replica_io_running", _as_thread_state, ("Replica_IO_Running", "Slave_IO_Running")),
    _Field("sql_running", "replica_sql_running", _as_thread_state, ("Replica_SQL_Running", "Slave_SQL_Running")),
    _Field("io_state", "replica_io_state", text_of, ("Replica_IO_State", "Slave_IO_State")),
    _Field(
        "sql_state",
        "replica_sql_state",
        text_of,
        ("Replica_SQL_Running_State", "Slave_SQL_Running_State", "Slave_SQL_State"),
    ),
    _Field(
        "seconds_behind_source",
        "replica_seconds_behind_source",
        _as_int,
        ("Seconds_Behind_Source", "Seconds_Behind_Master"),
    ),
    _Field("relay_log_space", "replica_relay_log_space_bytes", _as_int, ("Relay_Log_Space",)),
    _Field(
        "read_source_log_pos", "replica_read_source_log_pos", _as_int, ("Read_Source_Log_Pos", "Read_Master_Log_Pos")
    ),
    _Field(
        "exec_source_log_pos", "replica_exec_source_log_pos", _as_int, ("Exec_Source_Log_Pos", "Exec_Master_Log_Pos")
    ),
    _Field("source_log_file", "replica_source_log_file", text_of, ("Source_Log_File", "Master_Log_File")),
    _Field(
        "relay_source_log_file",
        "replica_relay_source_log_file",
        text_of,
        ("Relay_Source_Log_File", "Relay_Master_Log_File"),
    ),
    _Field("last_io_errno", "replica_last_io_errno", _as_int, ("Last_IO_Errno",)),
    _Field("last_io_error", "replica_last_io_error", text_of, ("Last_IO_Error",)),
    _Field("last_sql_errno", "replica_last_sql_errno", _as_int, ("Last_SQL_Errno",)),
    _Field("last_sql_error", "replica_last_sql_error", text_of, ("Last_SQL_Error",)),
    _Field("retried_transactions", "replica_retried_transactions", _as_int, ("Retried_transactions",)),
    _Field("sql_delay", "replica_sql_delay_seconds", _as_int, ("SQL_Delay",)),
    _Field("sql_remaining_delay", "replica_sql_remaining_delay_seconds", _as_int, ("SQL_Remaining_Delay",)),
    _Field("retrieved_gtid_set", "replica_retrieved_gtid_set", _as_gtid_set, ("Retrieved_Gtid_Set", "Gtid_IO_Pos")),
    _Field("executed_gtid_set", "replica_executed_gtid_set", _as_gtid_set, ("Executed_Gtid_Set", "Gtid_Slave_Pos")),
    _Field("using_gtid", "replica_using_gtid", _as_using_gtid, ("Auto_Position", "Using_Gtid")),
    _Field("received_heartbeats", "replica_received_heartbeats", _as_int, ("Slave_received_heartbeats",)),
)
_CHANNEL_COLUMNS = ("Channel_Name", "Connection_name")


@dataclass(frozen=True)
class ReplicaChannel:
    """One replication channel (MariaDB: connection), normalised.

    Fields are None both for an SQL NULL and for a column the server did not
    print; ``present`` tells them apart.  ``raw`` keeps every column as printed
    (typed) for consumers that export them all.  ``problems`` lists columns
    whose value could not be read (the field is then absent).
    """

    channel: str
    source_host: str | None = None
    source_port: int | None = None
    source_user: str | None = None
    source_uuid: str | None = None
    source_server_id: int | None = None
    io_running: int | None = None
    sql_running: int | None = None
    io_state: str | None = None
    sql_state: str | None = None
    seconds_behind_source: int | None = None
    relay_log_space: int | None = None
    read_source_log_pos: int | None = None
    exec_source_log_pos: int | None = None
    source_log_file: str | None = None
    relay_source_log_file: str | None = None
    last_io_errno: int | None = None
    last_io_error: str | None = None
    last_sql_errno: int | None = None
    last_sql_error: str | None = None
    retried_transactions: int | None = None
    sql_delay: int | None = None
    sql_remaining_delay: int | None = None
    retrieved_gtid_set: str | None = None
    executed_gtid_set: str | None = None
    using_gtid: int | None = None
    received_heartbeats: int | None = None
    present: frozenset[str] = frozenset()
    raw: dict[str, Value] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def parse_replica_status(rows: Iterable[object]) -> list[ReplicaChannel]:
    """SHOW REPLICA STATUS / SHOW SLAVE STATUS / SHOW ALL SLAVES STATUS rows (mappings)."""
    return [_parse_row(row, index) for index, row in enumerate(rows)]


def _parse_row(row: object, index: int) -> ReplicaChannel:
    folded = fold_row(row, f"replica status row {index}")
    channel = pick(folded, _CHANNEL_COLUMNS)
    values: dict[str, Value] = {}
    problems: list[str] = []
    for spec in _FIELDS:
        column, value = pick_named(folded, spec.columns)
        if value is MISSING:
            continue
        try:
            values[spec.name] = spec.read(value)
        except _Unreadable:
            problems.append(f"{column}: unreadable value {text_of(value)!r}")
    return ReplicaChannel(
        channel=(text_of(channel) or "") if channel is not MISSING else "",
        present=frozenset(values),
        raw={str(name): typed(value) for name, value in row.items()},  # type: ignore[union-attr]
        problems=tuple(problems),
        **values,
    )


def replica_values(channels: list[ReplicaChannel]) -> CatalogValues:
    """Catalog values: per-channel series (labels [channel]) and the legacy scalars.

    A configured pt-heartbeat table replaces Seconds_Behind_Master in the legacy
    lag after all sources ran (mysql_snmp.agents.derived): the heartbeat is read after this.
    """
    reading = CatalogValues(values={"replica_channels": len(channels)})
    for channel in channels:
        labels = labels_of(channel=channel.channel)
        for spec in _FIELDS:
            if spec.catalog and spec.name in channel.present:
                reading.add_series(spec.catalog, labels, getattr(channel, spec.name))
    reading.values.update(legacy_replica_values(channels))
    return reading


def legacy_replica_values(channels: list[ReplicaChannel]) -> dict[str, Value]:
    """The original mysql-snmp's slave_running, slave_stopped, slave_lag, relay_log_space.

    The original read one SHOW SLAVE STATUS row and computed:
    slave_running = Slave_SQL_Running eq 'Yes' (the I/O thread was not looked
    at), slave_stopped = its negation, slave_lag = Seconds_Behind_Master (or the
    heartbeat, see mysql_snmp.agents.derived), relay_log_space = Relay_Log_Space.  With several channels the
    last row won; here every channel counts: running only when all SQL threads
    run, the largest lag, the summed relay log space.

    Differences, deliberate: on a server that is not a replica the original
    printed slave_lag 0 and relay_log_space 0 (initial values).  The lag is absent
    here (there is nothing to lag behind); running, stopped and the relay log space
    stay 0, which is true (a server with no channel keeps no relay log), so a
    primary's binary/relay log graph keeps its relay line.  A NULL lag on any channel
    makes slave_lag None: the original left the value undefined too, so its
    agent answered nothing for mySlaveLag; a Gauge32 cannot carry NULL, so the
    SNMP view should answer noSuchInstance.
    """
    if not channels:
        return {"replica_slave_running": 0, "replica_slave_stopped": 0, "replica_slave_relay_log_space_bytes": 0}
    all_running = all(channel.sql_running == THREAD_RUNNING for channel in channels)
    legacy: dict[str, Value] = {
        "replica_slave_running": int(all_running),
        "replica_slave_stopped": int(not all_running),
    }
    lags = [c.seconds_behind_source for c in channels if "seconds_behind_source" in c.present]
    if lags:
        legacy["replica_slave_lag_seconds"] = None if None in lags else max(lags)  # type: ignore[type-var]
    spaces = [c.relay_log_space for c in channels if c.relay_log_space is not None]
    if spaces:
        legacy["replica_slave_relay_log_space_bytes"] = sum(spaces)
    return legacy


# --------------------------------------------------------------------------- mysqld_exporter's view

_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9_]")
UPSTREAM_CHANNEL_LABELS = ("master_host", "master_uuid", "channel_name", "connection_name")


def legacy_replication_name(column: str) -> str:
    """A MySQL 8.0.22+ / 8.4 column name in the words SHOW SLAVE STATUS used, lower case.

    8.4 dropped SHOW SLAVE STATUS; its SHOW REPLICA STATUS says Source/Replica where
    alerts written for mysqld_exporter expect master/slave (Seconds_Behind_Source ->
    seconds_behind_master, Replica_SQL_Running -> slave_sql_running).
    """
    words = _NAME_UNSAFE.sub("_", column).lower().split("_")
    return "_".join({"source": "master", "replica": "slave"}.get(w, w) for w in words)


def upstream_channel_rows(rows: Iterable[Mapping[str, object]]) -> list[NamedRow]:
    """Every numeric column of every channel, keyed by its lower-cased, Prometheus-safe name, with
    mysqld_exporter's channel labels (UPSTREAM_CHANNEL_LABELS).

    A NULL or text column gives none (a NULL lag while the SQL thread is stopped, as upstream).
    Servers printing Source/Replica names also get the Master/Slave ones, where no column of
    that name was printed.
    """
    named = []
    for row in rows:
        folded = fold_row(row)
        labels = tuple(zip(UPSTREAM_CHANNEL_LABELS, (text_of(_or_empty(pick(folded, columns))) or "" for columns in (
            ("Master_Host", "Source_Host"), ("Master_UUID", "Source_UUID"), ("Channel_Name",),
            ("Connection_name",)))))
        numbers = {}
        for column, raw in row.items():
            value = sample_number(typed(raw))
            if value is not None:
                numbers[_NAME_UNSAFE.sub("_", column).lower()] = value
        for column, raw in row.items():
            legacy = legacy_replication_name(column)
            if legacy not in numbers:
                value = sample_number(typed(raw))
                if value is not None:
                    numbers[legacy] = value
        named.extend(NamedRow(key, value, labels) for key, value in numbers.items())
    return named


def _or_empty(value: object) -> object:
    return None if value is MISSING else value
