"""information_schema.REPLICA_HOST_STATUS (Amazon Aurora): each instance of the cluster."""

from __future__ import annotations

from typing import Iterable, Mapping

from .table_rows import Field, Series, series_from_rows

FIELDS = (
    Field("replica_host_cpu_percent", "cpu"),
    Field("replica_host_replica_latency_seconds", "master_slave_latency_in_microseconds", 1e-6),
    Field("replica_host_lag_seconds", "replica_lag_in_milliseconds", 1e-3),
    Field("replica_host_log_stream_speed", "log_stream_speed_in_kib_per_second"),
    Field("replica_host_replay_latency_seconds", "current_replay_latency_in_microseconds", 1e-6),
)


def replica_host_series(rows: Iterable[Mapping]) -> Series:
    """Rows with SERVER_ID, ROLE (writer/reader, computed by the statement) and the measures."""
    return series_from_rows(rows, {"server_id": "server_id", "role": "role"}, FIELDS)
