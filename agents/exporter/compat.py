"""mysqld_exporter families not yet declared in the catalog, built from the rows a Snapshot carries.

What remains here: replica status, INNODB_METRICS and processlist.  Global status
and variables, engine_innodb, binlog_size, memory_events, heartbeat and slave_hosts
are catalog projections (agents/exporter/projection.py, catalog entries).
Names, types, labels and skipped rows follow mysqld_exporter's ``collector/*.go``;
value conversion is parsers/status.py's.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, UnknownMetricFamily

from parsers.processlist import group_threads_as_upstream
from parsers.replication import UPSTREAM_CHANNEL_LABELS, upstream_channel_columns
from parsers.status import sample_number
from parsers.values import typed

NAMESPACE = "mysql"

# --------------------------------------------------------------------------- values

def status_number(value: object) -> float | None:
    """A column value as mysqld_exporter reads it; None when it skips the value (NULL, free text)."""
    return sample_number(typed(value))


_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def fq_name(*parts: str) -> str:
    return "_".join(p for p in (NAMESPACE, *parts) if p)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    return str(value)


def row_value(row: Mapping[str, object], column: str, default: object = None) -> object:
    """A column of a row whose key case depends on the server (NAME vs name)."""
    for key in (column, column.lower(), column.upper()):
        if key in row:
            return row[key]
    lowered = column.lower()
    for key, value in row.items():
        if key.lower() == lowered:
            return value
    return default


# --------------------------------------------------------------------------- replication

def slave_status_families(rows: Sequence[Mapping[str, object]]) -> list[Metric]:
    """One untyped family per numeric column of ``SHOW [ALL] SLAVE|REPLICA STATUS`` (parsers/replication.py).

    A NULL column gives no sample, as upstream: a NULL lag (Seconds_Behind_Master
    while the SQL thread is stopped) must leave ``predict_linear(...[5m])`` of the
    mixin's MySQLReplicationLag something to work on, which a NaN does not.  The
    explicit "lag unknown" is our own catalog series'
    (``mysql_replica_seconds_behind_source{channel}``, NaN).  Replicas on 8.4 also get
    the pre-8.0.22 names.
    """
    families: dict[str, UnknownMetricFamily] = {}
    for labels, numbers in upstream_channel_columns(rows):
        for name, value in numbers.items():
            family = families.get(name)
            if family is None:
                family = families[name] = UnknownMetricFamily(
                    fq_name("slave_status", name), "Generic metric from SHOW SLAVE STATUS.",
                    labels=list(UPSTREAM_CHANNEL_LABELS))
            family.add_metric(list(labels), value)
    return list(families.values())


# --------------------------------------------------------------------------- information_schema

_BUFFER_POOL_PAGES_RE = re.compile(r"^buffer_pool_pages_(.*)$")
_BUFFER_PAGE_IO_RE = re.compile(r"^buffer_page_(read|written)_(.*)$")


def _innodb_metric_enabled(row: Mapping[str, object]) -> bool:
    # MySQL has STATUS ('enabled'/'disabled'); MariaDB 10.x has ENABLED (1/0).
    status = row_value(row, "STATUS")
    if status is not None:
        return _text(status).lower() == "enabled"
    enabled = row_value(row, "ENABLED")
    return enabled is None or status_number(enabled) == 1.0


def innodb_metrics_families(rows: Sequence[Mapping[str, object]]) -> list[Metric]:
    """``information_schema.INNODB_METRICS`` the way mysqld_exporter's info_schema.innodb_metrics names it."""
    page_read = CounterMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_page_read_total"),
                                    "Total number of buffer pages read total.", labels=["type"])
    page_written = CounterMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_page_written_total"),
                                       "Total number of buffer pages written total.", labels=["type"])
    pool_pages = GaugeMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_pool_pages"),
                                   "Total number of buffer pool pages by state.", labels=["state"])
    pool_dirty = GaugeMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_pool_dirty_pages"),
                                   "Total number of dirty pages in the buffer pool.")
    generic: dict[str, Metric] = {}
    for row in rows:
        if not _innodb_metric_enabled(row):
            continue
        name = _text(row_value(row, "NAME"))
        subsystem = _text(row_value(row, "SUBSYSTEM"))
        value = status_number(row_value(row, "COUNT"))
        if not name or value is None:
            continue
        if subsystem == "buffer_page_io":
            match = _BUFFER_PAGE_IO_RE.match(name)
            if match:
                (page_read if match.group(1) == "read" else page_written).add_metric([match.group(2)], value)
            continue
        if subsystem == "buffer":
            match = _BUFFER_POOL_PAGES_RE.match(name)
            if match:
                state = match.group(1)
                if state == "dirty":
                    pool_dirty.add_metric([], value)
                elif state != "total":  # the sum of the others
                    pool_pages.add_metric([state], value)
                continue
        kind = _text(row_value(row, "TYPE"))
        comment = _text(row_value(row, "COMMENT")) or name
        # Case kept, as mysqld_exporter keeps it (buffer_LRU_batch_flush_total_pages).
        base = _INVALID_NAME_CHARS.sub("_", f"innodb_metrics_{subsystem}_{name}")
        # A counter that went negative is a server bug (bugs.mysql.com 75966): gauge it.
        if kind in ("counter", "status_counter") and value >= 0:
            family = CounterMetricFamily(fq_name("info_schema", base + "_total"), comment)
        else:
            family = GaugeMetricFamily(fq_name("info_schema", base), comment)
        if family.name not in generic:
            family.add_metric([], value)
            generic[family.name] = family
    families = [f for f in (page_read, page_written, pool_pages, pool_dirty) if f.samples]
    families.extend(generic.values())
    return families


def processlist_families(rows: Sequence[Mapping[str, object]], min_time: int = 0,
                         by_user: bool = True, by_host: bool = True,
                         exclude_id: int | None = None) -> list[Metric]:
    """``information_schema.PROCESSLIST`` grouped as upstream (parsers/processlist.py), under its names.

    ``exclude_id`` is the exporter's own connection, which mysqld_exporter leaves
    out (``ID != CONNECTION_ID()``): it is always there, running the query itself.
    """
    groups = group_threads_as_upstream(rows, exclude_id, min_time)
    counts, seconds, hosts, users = groups.threads, groups.seconds, groups.by_host, groups.by_user
    threads = GaugeMetricFamily(fq_name("info_schema", "processlist_threads"),
                                "The number of threads split by current state.", labels=["command", "state"])
    thread_seconds = GaugeMetricFamily(fq_name("info_schema", "processlist_seconds"),
                                       "The number of seconds threads have used split by current state.",
                                       labels=["command", "state"])
    for key in sorted(counts):
        threads.add_metric(list(key), counts[key])
        thread_seconds.add_metric(list(key), seconds[key])
    families = [threads, thread_seconds]
    if by_host:
        family = GaugeMetricFamily(fq_name("info_schema", "processlist_processes_by_host"),
                                   "The number of processes by host.", labels=["client_host"])
        for host in sorted(hosts):
            family.add_metric([host], hosts[host])
        families.append(family)
    if by_user:
        family = GaugeMetricFamily(fq_name("info_schema", "processlist_processes_by_user"),
                                   "The number of processes by user.", labels=["mysql_user"])
        for user in sorted(users):
            family.add_metric([user], users[user])
        families.append(family)
    return families
