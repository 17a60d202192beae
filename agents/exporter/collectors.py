"""The exporter's collectors: the table behind ``--[no-]collect.<name>`` and ``collect[]``.

Each collector names the collection sources it needs (agents/sources/*), the
catalog source kinds whose metrics it publishes (the catalog path: every catalog
entry of those kinds with a ``prometheus`` spec, from the snapshot's values and
series), and, where upstream's families are not plain catalog entries, the builder
of those (``compat``): the projection the catalog's ``prometheus_families`` declares
(agents/exporter/projection.py), over the every-row sources or over the named values
a parser makes of a source's rows.  Names and defaults follow mysqld_exporter so
existing command lines and ``collect[]`` parameters keep working;
``engine_innodb_status`` and ``host`` are ours (on by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..catalog import Catalog
from . import projection
from .encoding import FamilyInterner
from .metric_types import Metric
from ..snapshot import Snapshot
from mysql_snmp.parsers.innodb_metrics import innodb_metric_rows
from mysql_snmp.parsers.processlist import upstream_processlist_rows
from mysql_snmp.parsers.replication import upstream_channel_rows


@dataclass(frozen=True)
class CompatOptions:
    """Options of the compatible families (mysqld_exporter's per-collector flags)."""

    processlist_min_time: int = 0
    processlist_by_user: bool = True
    processlist_by_host: bool = True
    memory_events_remove_prefix: str = "memory/"
    # Set per collection: the connection the exporter itself used (left out of the processlist).
    exclude_thread_id: int | None = None



FamilyBuilder = Callable[[Snapshot, CompatOptions, FamilyInterner | None, Catalog], list[Metric]]


def _raw(snapshot: Snapshot, key: str, empty):
    value = snapshot.raw.get(key)
    return empty if value is None else value


def _named(source: str) -> FamilyBuilder:
    """The builder of a source that leaves named values (NamedRow) in the snapshot's raw."""
    return lambda s, o, i, c: projection.named_families(c, source, _raw(s, source, []))


def _unlisted(source: str) -> FamilyBuilder:
    """Of the series a table source leaves whole in the snapshot's raw (USER_STATISTICS: upstream serves
    every column), those no catalog entry names, where the catalog's ``named`` rules serve them."""
    return lambda s, o, i, c: projection.unlisted_series_families(c, source, _raw(s, source, {}))


@dataclass(frozen=True)
class ExporterCollector:
    name: str
    help: str
    default: bool
    sources: tuple[str, ...]  # agents/sources scraper names
    catalog_kinds: tuple[str, ...] = ()  # catalog source.from values this collector covers
    compat: FamilyBuilder | None = None
    local_only: bool = False  # reads the database host itself (psutil)
    extra: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The ``collector`` label value mysqld_exporter uses in its self metrics."""
        return f"collect.{self.name}"


COLLECTORS: tuple[ExporterCollector, ...] = (
    ExporterCollector(
        "global_status", "server status counters and gauges (SHOW GLOBAL STATUS)", True, ("global_status",),
        ("global_status",),
        lambda s, o, i, c: projection.rows_families(c, "global_status", _raw(s, "global_status", {}), i)
        + projection.status_info_families(_raw(s, "global_status", {}))),
    ExporterCollector(
        "global_variables", "server settings (SHOW GLOBAL VARIABLES)", True, ("global_variables",),
        ("global_variables",),
        lambda s, o, i, c: projection.rows_families(c, "global_variables", _raw(s, "global_variables", {}), i)
        + projection.variables_info_families(_raw(s, "global_variables", {}))),
    ExporterCollector(
        "slave_status", "replication state and lag of each channel (SHOW SLAVE / REPLICA STATUS)", True,
        ("replication",), ("replication",),
        lambda s, o, i, c: projection.named_families(
            c, "replica_status", upstream_channel_rows(_raw(s, "replica_status", [])))),
    ExporterCollector(
        "engine_innodb_status", "the InnoDB monitor text (SHOW ENGINE INNODB STATUS): mysql_innodb_* from the catalog",
        True,
        ("innodb_status",), ("innodb",),
        lambda s, o, i, c: projection.value_families(c, s.values)),
    ExporterCollector(
        "info_schema.innodb_metrics", "the enabled InnoDB counters of information_schema.INNODB_METRICS", False,
        ("innodb_metrics",), ("innodb_metrics",),
        lambda s, o, i, c: projection.named_families(
            c, "innodb_metrics", innodb_metric_rows(_raw(s, "innodb_metrics", [])))),
    ExporterCollector(
        "perf_schema.memory_events", "memory per instrument (performance_schema.memory_summary_global_by_event_name)",
        False, ("perf_schema_memory",), ("perf_schema_memory",)),
    ExporterCollector(
        "info_schema.processlist", "threads counted by command and state, and by user and client host "
        "(information_schema.PROCESSLIST)",
        False, ("processlist",), ("processlist",),
        lambda s, o, i, c: projection.named_families(c, "processlist", upstream_processlist_rows(
            _raw(s, "processlist", []), o.exclude_thread_id, o.processlist_min_time, o.processlist_by_user,
            o.processlist_by_host))),
    ExporterCollector(
        "binlog_size", "number and total size of the binary logs (SHOW BINARY LOGS)", False, ("binlog",), ("binlog",)),
    ExporterCollector(
        "heartbeat", "replication lag read from a pt-heartbeat table", False, ("heartbeat",), ("heartbeat",)),
    ExporterCollector(
        "slave_hosts", "the replicas registered with this server (SHOW SLAVE HOSTS)", False, ("slave_hosts",),
        ("slave_hosts",)),
    ExporterCollector(
        "engine_tokudb_status", "numeric lines of SHOW ENGINE TOKUDB STATUS (Percona with TokuDB)", False,
        ("engine_tokudb_status",),
        compat=_named("engine_tokudb_status")),
    *(ExporterCollector(name, help_text, default, (source,), (source,), _unlisted(source))
      for name, source, default, help_text in (
        ("info_schema.innodb_cmp", "innodb_cmp", True,
         "page compression per page size (information_schema.INNODB_CMP)"),
        ("info_schema.innodb_cmpmem", "innodb_cmpmem", True,
         "compressed page buffer pool use (information_schema.INNODB_CMPMEM)"),
        ("info_schema.query_response_time", "query_response_time", True,
         "query response time histograms (information_schema.QUERY_RESPONSE_TIME; needs query_response_time_stats)"),
        ("auto_increment.columns", "auto_increment", False,
         "each auto_increment column's next value and type maximum (information_schema.COLUMNS, TABLES)"),
        ("info_schema.tables", "info_schema_tables", False,
         "rows, sizes and versions of tables (information_schema.TABLES)"),
        ("info_schema.innodb_tablespaces", "innodb_tablespaces", False,
         "InnoDB tablespace files and sizes (information_schema.INNODB_[SYS_]TABLESPACES)"),
        ("info_schema.tablestats", "table_statistics", False,
         "rows read and changed per table (information_schema.TABLE_STATISTICS; needs userstat=1)"),
        ("info_schema.schemastats", "schema_statistics", False,
         "the per-table statistics summed per schema (TABLE_STATISTICS; needs userstat=1)"),
        ("info_schema.userstats", "user_statistics", False,
         "activity per account (information_schema.USER_STATISTICS; needs userstat=1)"),
        ("info_schema.clientstats", "client_statistics", False,
         "activity per client host (information_schema.CLIENT_STATISTICS; needs userstat=1)"),
        ("info_schema.replica_host", "replica_host", False,
         "Aurora replica lag and load (information_schema.REPLICA_HOST_STATUS)"),
        ("mysql.user", "mysql_user", False, "per-account connection and query limits (mysql.user), and privileges with "
         "--collect.mysql.user.privileges"),
        ("sys.user_summary", "sys_user_summary", False,
         "statements, latency, I/O, connections and memory per user (sys.x$user_summary)"),
        ("perf_schema.eventsstatements", "perf_schema_events_statements", False,
         "the slowest statement digests (performance_schema.events_statements_summary_by_digest)"),
        ("perf_schema.eventsstatementssum", "perf_schema_events_statements_sum", False,
         "totals over every statement digest (performance_schema.events_statements_summary_by_digest)"),
        ("perf_schema.eventswaits", "perf_schema_events_waits", False,
         "wait counts and time per wait event (performance_schema.events_waits_summary_global_by_event_name)"),
        ("perf_schema.file_events", "perf_schema_file_events", False,
         "file I/O per file event (performance_schema.file_summary_by_event_name)"),
        ("perf_schema.file_instances", "perf_schema_file_instances", False,
         "file I/O per file (performance_schema.file_summary_by_instance)"),
        ("perf_schema.tableiowaits", "perf_schema_table_io_waits", False,
         "row I/O per table (performance_schema.table_io_waits_summary_by_table)"),
        ("perf_schema.indexiowaits", "perf_schema_index_io_waits", False,
         "row I/O per index (performance_schema.table_io_waits_summary_by_index_usage)"),
        ("perf_schema.tablelocks", "perf_schema_table_lock_waits", False,
         "lock waits per table (performance_schema.table_lock_waits_summary_by_table)"),
        ("perf_schema.replication_group_members", "perf_schema_group_members", False,
         "group replication members and their state (performance_schema.replication_group_members)"),
        ("perf_schema.replication_group_member_stats", "perf_schema_group_member_stats", False,
         "group replication queues and conflicts (performance_schema.replication_group_member_stats)"),
        ("perf_schema.replication_applier_status_by_worker", "perf_schema_applier_workers", False,
         "replication applier timestamps per worker (performance_schema.replication_applier_status_by_worker)"),
        ("info_schema.rocksdb_perf_context", "rocksdb_perf_context", False,
         "MyRocks performance counters (information_schema.ROCKSDB_PERF_CONTEXT)"),
    )),
    ExporterCollector(
        "host", "load, memory and I/O of the database host and of its mysqld process (mysql_host_*, "
        "mysql_process_*); only when the exporter runs on the database host", True, ("host", "process"),
        ("host", "process"), local_only=True),
)

BY_NAME = {c.name: c for c in COLLECTORS}

# Catalog kinds that no collector owns: exported whenever the snapshot has them
# (derived values exist only when their inputs were collected; leak values come
# from the leak detector).
ALWAYS_EXPORTED_KINDS = frozenset({"derived", "leak", "agent"})


def select(enabled: dict[str, bool], requested: list[str] | None = None) -> tuple[ExporterCollector, ...]:
    """The collectors to run: the enabled ones, narrowed by ``collect[]`` when given.

    As in mysqld_exporter, ``collect[]`` filters the enabled collectors, and a
    filter that matches none of them falls back to all enabled collectors.
    """
    chosen = tuple(c for c in COLLECTORS if enabled.get(c.name, c.default))
    if requested:
        wanted = set(requested)
        filtered = tuple(c for c in chosen if c.name in wanted)
        if filtered:
            return filtered
    return chosen

