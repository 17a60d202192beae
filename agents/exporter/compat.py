"""mysqld_exporter families not yet declared in the catalog, built from the rows a Snapshot carries.

What remains here: replica status, INNODB_METRICS and processlist, grouped by
parsers/ (replication, innodb_metrics, processlist); this module only names them.  Global status
and variables, engine_innodb, binlog_size, memory_events, heartbeat and slave_hosts
are catalog projections (agents/exporter/projection.py, catalog entries).
Names, types, labels and skipped rows follow mysqld_exporter's ``collector/*.go``;
value conversion is parsers/status.py's.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, UnknownMetricFamily

from mysql_snmp.parsers.innodb_metrics import group_innodb_metrics
from mysql_snmp.parsers.processlist import group_threads_as_upstream
from mysql_snmp.parsers.replication import UPSTREAM_CHANNEL_LABELS, upstream_channel_columns

NAMESPACE = "mysql"

_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def fq_name(*parts: str) -> str:
    return "_".join(p for p in (NAMESPACE, *parts) if p)


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

def innodb_metrics_families(rows: Sequence[Mapping[str, object]]) -> list[Metric]:
    """``information_schema.INNODB_METRICS`` grouped by parsers/innodb_metrics.py, under upstream's names."""
    groups = group_innodb_metrics(rows)
    page_read = CounterMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_page_read_total"),
                                    "Total number of buffer pages read total.", labels=["type"])
    page_written = CounterMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_page_written_total"),
                                       "Total number of buffer pages written total.", labels=["type"])
    pool_pages = GaugeMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_pool_pages"),
                                   "Total number of buffer pool pages by state.", labels=["state"])
    for family, values in ((page_read, groups.page_read), (page_written, groups.page_written),
                           (pool_pages, groups.pool_pages)):
        for label, value in values.items():
            family.add_metric([label], value)
    families = [f for f in (page_read, page_written, pool_pages) if f.samples]
    if groups.pool_dirty is not None:
        families.append(GaugeMetricFamily(fq_name("info_schema", "innodb_metrics_buffer_pool_dirty_pages"),
                                          "Total number of dirty pages in the buffer pool.", value=groups.pool_dirty))
    seen: set[str] = set()
    for metric in groups.others:
        # Case kept, as mysqld_exporter keeps it (buffer_LRU_batch_flush_total_pages).
        base = fq_name("info_schema", _INVALID_NAME_CHARS.sub("_", f"innodb_metrics_{metric.subsystem}_{metric.name}"))
        name = base + "_total" if metric.counter else base
        if name not in seen:
            seen.add(name)
            kind = CounterMetricFamily if metric.counter else GaugeMetricFamily
            families.append(kind(name, metric.comment, value=metric.value))
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
