"""Catalog-driven values computed after the sources ran.

1. Legacy InnoDB overrides.  The original mysql-snmp preferred a SHOW STATUS
   variable over the number it parsed out of SHOW ENGINE INNODB STATUS when the
   server printed one.  It kept the pairs in a Perl hash of 16 entries in which
   two (Innodb_buffer_pool_reads and Innodb_pages_read) both targeted pages_read,
   so which one won depended on Perl's hash order.  Here each catalog entry names
   exactly one ``status_override`` (Innodb_pages_read for pages read), so the
   answer is deterministic.
2. Values the original computed from several variables (``source.from: derived``):
   see DERIVATIONS.
3. The pt-heartbeat lag replaces the legacy Seconds_Behind_Master lag when a
   heartbeat table is configured, as the original's ``--heartbeat`` did.
"""

from __future__ import annotations

from typing import Callable, Mapping

from .catalog import Catalog
from .snapshot import Snapshot, Value
from mysql_snmp.parsers.heartbeat import legacy_slave_lag

Inputs = Mapping[str, object]


def _number(mapping: Mapping[str, object], key: str) -> int | float | None:
    value = mapping.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def key_buffer_bytes_used(status: Inputs, variables: Inputs) -> Value:
    # The original (issue 127): key_buffer_size - Key_blocks_unused * key_cache_block_size.
    size = _number(variables, "key_buffer_size")
    unused = _number(status, "Key_blocks_unused")
    block = _number(variables, "key_cache_block_size")
    if size is None or unused is None or block is None:
        return None
    return size - unused * block


def key_buffer_bytes_unflushed(status: Inputs, variables: Inputs) -> Value:
    # The original: Key_blocks_not_flushed * key_cache_block_size.
    not_flushed = _number(status, "Key_blocks_not_flushed")
    block = _number(variables, "key_cache_block_size")
    if not_flushed is None or block is None:
        return None
    return not_flushed * block


def table_cache(status: Inputs, variables: Inputs) -> Value:
    # MySQL 5.1.3 renamed table_cache to table_open_cache; the original kept the old key.
    for key in ("table_open_cache", "table_cache"):
        value = _number(variables, key)
        if value is not None:
            return value
    return None


def ibuf_merged_operations(status: Inputs, variables: Inputs) -> Value:
    # What the status text's "merged operations: insert N, delete mark N, delete N" adds up to.
    parts = [_number(status, key) for key in
             ("Innodb_ibuf_merged_inserts", "Innodb_ibuf_merged_delete_marks", "Innodb_ibuf_merged_deletes")]
    if any(part is None for part in parts):
        return None
    return sum(parts)


# Keyed by ``source.key`` of catalog entries with ``source.from: derived``.
DERIVATIONS: dict[str, Callable[[Inputs, Inputs], Value]] = {
    "key_buffer_bytes_used": key_buffer_bytes_used,
    "key_buffer_bytes_unflushed": key_buffer_bytes_unflushed,
    "table_cache": table_cache,
    "ibuf_merged_operations": ibuf_merged_operations,
}


def apply_derivations(catalog: Catalog, snapshot: Snapshot, results: Mapping[str, object]) -> None:
    """Fill derived and overridden values into ``snapshot`` (values already mapped from sources)."""
    status = snapshot.raw.get("global_status") or {}
    variables = snapshot.raw.get("global_variables") or {}
    for metric in catalog.with_status_override():
        override = metric.source.status_override
        if override in status:
            snapshot.values[metric.name] = status[override]
    for metric in catalog.from_source("derived"):
        if metric.source.key in DERIVATIONS:
            value = DERIVATIONS[metric.source.key](status, variables)
            if value is not None:
                snapshot.values[metric.name] = value
    _heartbeat_lag_wins(catalog, snapshot, results)


def _heartbeat_lag_wins(catalog: Catalog, snapshot: Snapshot, results: Mapping[str, object]) -> None:
    heartbeat = results.get("heartbeat")
    lag = heartbeat.values.get("heartbeat_lag_seconds") if heartbeat is not None else None
    if lag is None or not snapshot.raw.get("replica_status"):
        return
    # Same rounding as the original's SQL (see mysql_snmp.parsers.heartbeat.legacy_slave_lag).
    for metric in catalog.from_source("replication"):
        if metric.source.key == "slave_lag":
            snapshot.values[metric.name] = legacy_slave_lag(lag)
