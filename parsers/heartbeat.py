"""Replication lag from a pt-heartbeat row.

pt-heartbeat --update writes, once a second on the source, a row
``(ts, server_id, ...)`` that replicates like any other change; on a replica,
``now - ts`` is the delay of the whole path, including time an event waits in
binary and relay logs, which Seconds_Behind_Source does not see.

``ts`` is text like ``2024-01-02T03:04:05.123456`` written in the source host's
local time, or in UTC when pt-heartbeat runs with ``--utc`` (the caller passes
the same flag).  If the clocks of the two hosts disagree, or the time zones do
(pt-heartbeat without ``--utc`` on hosts in different zones), ``now - ts`` can
be negative: the lag is then reported as 0, and ``heartbeat_stored_timestamp_seconds``
keeps the raw timestamp so the skew stays visible.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone, tzinfo
from typing import Iterable

from .columns import MISSING, fold_row, pick
from .types import Labels, labels_of
from .values import CatalogValues, text_of, typed_int


class HeartbeatError(ValueError):
    """A heartbeat row that cannot give a lag (bad timestamp, ambiguous rows)."""


def heartbeat_timestamp(ts: object, utc: bool = False, local_zone: tzinfo | None = None) -> float:
    """Seconds since the epoch of a pt-heartbeat ``ts`` (text or datetime).

    A naive timestamp is UTC when ``utc`` is set, else local time: ``local_zone``
    when given, the host's zone otherwise.
    """
    if isinstance(ts, datetime):
        moment = ts
    else:
        text = text_of(ts)
        if not text or not text.strip():
            raise HeartbeatError(f"pt-heartbeat ts is empty: {ts!r}")
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError as exc:
            raise HeartbeatError(f"pt-heartbeat ts {text!r} is not a timestamp") from exc
    if moment.tzinfo is None:
        zone = timezone.utc if utc else local_zone
        moment = moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    return moment.timestamp()


def heartbeat_lag(ts: object, now: float, utc: bool = False, local_zone: tzinfo | None = None) -> float:
    """Seconds since the source wrote ``ts``, never negative (see the module note on skew)."""
    return max(0.0, now - heartbeat_timestamp(ts, utc, local_zone))


def legacy_slave_lag(lag_seconds: float) -> int:
    """mySlaveLag as the original mysql-snmp computed it from a heartbeat table.

    It ran ``GREATEST(0, UNIX_TIMESTAMP() - UNIX_TIMESTAMP(ts) - 1)``: one second
    less than the age, since pt-heartbeat only writes once a second, and whole
    seconds (the Gauge32 object carries no fraction).
    """
    return max(0, math.floor(lag_seconds - 1))


def heartbeat_values(
    rows: Iterable[object],
    now: float,
    utc: bool = False,
    server_id: int | None = None,
    local_zone: tzinfo | None = None,
) -> CatalogValues:
    """Catalog values from the rows of ``SELECT ts, server_id FROM <heartbeat table>``.

    In a chain (A -> B -> C) the table holds one row per source running
    pt-heartbeat, so with several rows the caller must say which source to
    measure (the replica's Source_Server_Id); guessing would give a wrong lag.
    No rows: nothing (absent), the table is empty until pt-heartbeat runs.
    """
    candidates = []
    for index, row in enumerate(rows):
        folded = fold_row(row, f"heartbeat row {index}")
        ts = pick(folded, ("ts",))
        if ts is MISSING:
            raise HeartbeatError(f"heartbeat row {index}: no ts column (columns: {sorted(folded)})")
        row_server = pick(folded, ("server_id",))
        candidates.append((ts, None if row_server is MISSING else typed_int(row_server)))
    reading = CatalogValues()
    if not candidates:
        return reading
    ids = ", ".join(str(c[1]) for c in candidates)
    if server_id is not None:
        candidates = [c for c in candidates if c[1] == server_id]
        if not candidates:
            raise HeartbeatError(f"no pt-heartbeat row for server_id {server_id} (rows for server_id {ids})")
    elif len(candidates) > 1:
        raise HeartbeatError(f"{len(candidates)} pt-heartbeat rows (server_id {ids}): pass the source's server_id")
    ts, row_server = candidates[0]
    stored = heartbeat_timestamp(ts, utc, local_zone)
    reading.values["heartbeat_lag_seconds"] = max(0.0, now - stored)
    reading.values["heartbeat_stored_timestamp_seconds"] = stored
    if row_server is not None:
        reading.values["heartbeat_source_server_id"] = row_server
    return reading


def heartbeat_row_series(rows: Iterable[object], now: float, utc: bool = False,
                         local_zone: tzinfo | None = None) -> dict[str, dict[Labels, float]]:
    """Every row's stored time and the server's clock, per server_id (mysqld_exporter's heartbeat families).

    A row without a server_id cannot be labelled and is left out.
    """
    stored: dict[Labels, float] = {}
    for index, row in enumerate(rows):
        folded = fold_row(row, f"heartbeat row {index}")
        server_id, ts = pick(folded, ("server_id",)), pick(folded, ("ts",))
        if server_id is MISSING or ts is MISSING or typed_int(server_id) is None:
            continue
        stored[labels_of(server_id=typed_int(server_id))] = heartbeat_timestamp(ts, utc, local_zone)
    series: dict[str, dict[Labels, float]] = {}
    if stored:
        series["heartbeat_row_stored_timestamp_seconds"] = stored
        series["heartbeat_row_now_timestamp_seconds"] = {labels: now for labels in stored}
    return series
