"""What the four Grafana boards show: panels as data, every metric named through the catalog.

A panel names catalog metrics; ``served_names`` turns each into the name the exporter
serves (mysqld_exporter's where it has one) and the description is the catalog's help
text of those metrics, plus a note where a flavour prints the value differently.
``dashboards.py`` turns these specs into Grafana JSON with grafana-foundation-sdk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import Catalog
from . import served_names
from .served_names import replica_column

# Every query filters on the board's variables.
MATCH = 'job=~"$job", instance=~"$instance"'
ROW_HANDLERS = 'handler=~"read_.*|write|update|delete"'
BUSY_CPU = 'mode!="idle"'
DEADLOCKS = 'name="lock_deadlocks"'
LOCAL = "Only when the exporter runs on the database host (collector host)."
BY = "instance, job"  # what an aggregation keeps so series from two targets stay apart


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class PanelSpec:
    title: str
    kind: str  # "timeseries", "stat" (a state or a level), "state" (state timeline)
    unit: str  # Grafana unit id
    queries: tuple[Query, ...]
    about: tuple[str, ...]  # catalog names whose help text describes the panel
    note: str = ""  # what a flavour does differently, said in the description
    mappings: tuple[tuple[int, str, str], ...] = ()  # value, text, colour
    width: int = 12


@dataclass(frozen=True)
class AnnotationSpec:
    name: str
    expr: str
    title: str  # legend-style template: {{series}}
    about: str  # catalog name


@dataclass(frozen=True)
class BoardSpec:
    uid: str
    file: str
    title: str
    panels: tuple[PanelSpec, ...]
    annotations: tuple[AnnotationSpec, ...] = ()


YES_NO = ((0, "No", "red"), (1, "Yes", "green"))
UP_DOWN = ((0, "Down", "red"), (1, "Up", "green"))
LEAK_STATES = ((0, "ok", "green"), (1, "suspect", "yellow"), (2, "leaking", "red"))


class Names:
    """Selectors and expressions for catalog names, filtered by the board variables."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def sel(self, name: str, extra: str = "") -> str:
        return served_names.served(self.catalog, name).selector(", ".join(p for p in (extra, MATCH) if p))

    def family(self, name: str, extra: str = "") -> str:
        """The whole labelled family ``name`` belongs to (commands by command, row ops by operation)."""
        served = served_names.served(self.catalog, name)
        return served_names.Served(served.name).selector(", ".join(p for p in (extra, MATCH) if p))

    def rate(self, name: str, extra: str = "") -> str:
        return f"rate({self.sel(name, extra)}[$__rate_interval])"

    def family_rate(self, name: str, extra: str = "") -> str:
        return f"rate({self.family(name, extra)}[$__rate_interval])"

    @staticmethod
    def replica(*columns: str) -> str:
        """The first of ``columns`` the replica prints (8.4: Replica_/Source_; before: Slave_/Master_)."""
        return " or ".join(f"{replica_column(c)}{{{MATCH}}}" for c in columns)


def _q(expr: str, legend: str = "{{instance}}") -> Query:
    return Query(expr, legend)


def lines(title: str, unit: str, of, *values: tuple[str, str], note: str = "") -> PanelSpec:
    """A time series panel with one line per catalog value: ``of`` (``Names.rate`` or ``Names.sel``)
    of each ``(name, legend)``; the values' help texts describe the panel."""
    return PanelSpec(title, "timeseries", unit,
                     tuple(_q(of(name), f"{{{{instance}}}} {legend}") for name, legend in values),
                     tuple(name for name, _ in values), note=note)


def overview(n: Names) -> BoardSpec:
    up = f"{served_names.UP}{{{MATCH}}}"
    return BoardSpec("mysql-snmp-overview", "mysql-overview.json", "MySQL overview", (
        PanelSpec("MySQL up", "stat", "none", (_q(up),), ("agent_mysql_up",), mappings=UP_DOWN, width=6),
        PanelSpec("Uptime", "stat", "s", (_q(n.sel("status_uptime")),), ("status_uptime",), width=6),
        PanelSpec("Connections in use", "stat", "percentunit", (_q(
            f"{n.sel('status_threads_connected')} / on ({BY}) {n.sel('variable_max_connections')}"),),
            ("status_threads_connected", "variable_max_connections"), width=12),
        PanelSpec("Queries per second by command", "timeseries", "ops", (
            _q(f"topk(10, sum by ({BY}, command) ({n.family_rate('status_com_select')}))",
               "{{instance}} {{command}}"),
            _q(f"sum by ({BY}) ({n.rate('status_questions')})", "{{instance}} all statements (Questions)")),
            ("status_questions",),
            note="Per command: the ten busiest Com_* counters (statements of each kind executed)."),
        lines("Connections vs max_connections", "short", n.sel, ("status_threads_connected", "connected"),
              ("status_max_used_connections", "max used"), ("variable_max_connections", "max_connections")),
        PanelSpec("Threads", "timeseries", "short", (
            _q(n.sel("status_threads_running"), "{{instance}} running"),
            _q(n.sel("status_threads_cached"), "{{instance}} cached"),
            _q(n.rate("status_threads_created"), "{{instance}} created/s")),
            ("status_threads_running", "status_threads_cached", "status_threads_created")),
        lines("Aborted connections", "ops", n.rate, ("status_aborted_clients", "clients"),
              ("status_aborted_connects", "connects")),
        lines("Network traffic", "Bps", n.rate, ("status_bytes_received", "received"), ("status_bytes_sent", "sent")),
        PanelSpec("Slow queries", "timeseries", "ops", (_q(n.rate("status_slow_queries")),),
                  ("status_slow_queries",)),
        lines("Table locks", "ops", n.rate, ("status_table_locks_immediate", "immediate"),
              ("status_table_locks_waited", "waited")),
        lines("Temporary tables", "ops", n.rate, ("status_created_tmp_tables", "tables"),
              ("status_created_tmp_disk_tables", "on disk"), ("status_created_tmp_files", "files")),
        lines("Sorts", "ops", n.rate, ("status_sort_scan", "scan"), ("status_sort_range", "range"),
              ("status_sort_merge_passes", "merge passes")),
    ))


def innodb(n: Names) -> BoardSpec:
    pool_pages = n.sel("innodb_pool_database_pages")
    single_pool = f'label_replace({n.sel("innodb_bp_database_pages")}, "pool", "all", "", "")'
    row_ops = f"sum by ({BY}, operation) ({n.family_rate('status_innodb_rows_read')})"
    handler_rows = f"sum by ({BY}, handler) ({n.family_rate('status_handler_read_rnd_next', ROW_HANDLERS)})"
    checkpoint_age = f"{n.sel('status_innodb_checkpoint_age')} or {n.sel('innodb_log_checkpoint_age_bytes')}"
    checkpoint_max = (f"{n.sel('status_innodb_checkpoint_max_age')} or "
                      f"{n.sel('innodb_log_max_checkpoint_age_bytes')}")
    return BoardSpec("mysql-snmp-innodb", "mysql-innodb.json", "MySQL InnoDB", (
        lines("Buffer pool pages", "short", n.sel, ("innodb_bp_size_pages", "size"),
              ("innodb_bp_database_pages", "data"), ("innodb_bp_free_pages", "free"),
              ("innodb_bp_modified_pages", "dirty")),
        PanelSpec("Buffer pool hit ratio", "timeseries", "percentunit", (_q(
            f"1 - {n.rate('status_innodb_buffer_pool_reads')} / "
            f"({n.rate('status_innodb_buffer_pool_read_requests')} > 0)"),),
            ("status_innodb_buffer_pool_reads", "status_innodb_buffer_pool_read_requests"),
            note="Hit ratio = 1 - disk reads / read requests over the interval; no value while nothing is read."),
        PanelSpec("Data pages per buffer pool", "timeseries", "short", (
            _q(f"{pool_pages} or on ({BY}) {single_pool}", "{{instance}} pool {{pool}}"),),
            ("innodb_pool_database_pages",),
            note="Servers with a single buffer pool (MariaDB 10.5+) print no per-instance block: "
                 "the totals are shown as pool \"all\"."),
        PanelSpec("Row operations", "timeseries", "ops", (
            _q(f"{row_ops} or on ({BY}) {handler_rows}", "{{instance}} {{operation}}{{handler}}"),),
            ("status_innodb_rows_read",),
            note="MariaDB 10.11 prints no Innodb_rows_* counters: there the panel shows the storage engine "
                 "handler calls (Handler_read_*, Handler_write, Handler_update, Handler_delete) instead."),
        lines("Data I/O", "Bps", n.rate, ("status_innodb_data_read", "read"),
              ("status_innodb_data_written", "written")),
        lines("Data I/O operations", "iops", n.rate, ("status_innodb_data_reads", "reads"),
              ("status_innodb_data_writes", "writes"), ("status_innodb_data_fsyncs", "fsyncs")),
        PanelSpec("Redo log I/O", "timeseries", "Bps", (
            _q(n.rate("status_innodb_os_log_written"), "{{instance}} written"),),
            ("status_innodb_os_log_written",)),
        lines("Redo log waits", "ops", n.rate, ("status_innodb_log_waits", "waits for log buffer space"),
              ("status_innodb_log_writes", "log writes")),
        PanelSpec("Checkpoint age against its maximum", "timeseries", "bytes", (
            _q(checkpoint_age, "{{instance}} checkpoint age"),
            _q(checkpoint_max, "{{instance}} maximum")),
            ("status_innodb_checkpoint_age", "status_innodb_checkpoint_max_age", "innodb_log_max_checkpoint_age_bytes"),
            note="MariaDB prints Innodb_checkpoint_age and Innodb_checkpoint_max_age; other servers show the "
                 "age parsed from SHOW ENGINE INNODB STATUS and the maximum only where it is printed "
                 "(Percona Server), else no data."),
        PanelSpec("History list length", "timeseries", "short", (
            _q(n.sel("innodb_trx_history_list_length")),), ("innodb_trx_history_list_length",)),
        lines("Semaphore waits", "short", n.sel, ("innodb_sem_waiting_threads", "waiting threads"),
              ("innodb_sem_wait_time_milliseconds", "seconds waited")),
        PanelSpec("Deadlocks", "timeseries", "ops", (
            _q(f"{n.rate('status_innodb_deadlocks')} or "
               f"on ({BY}) {n.rate('innodb_metrics_count', DEADLOCKS)}"),),
            ("status_innodb_deadlocks",),
            note="MariaDB and Percona print Innodb_deadlocks; on MySQL enable "
                 "--collect.info_schema.innodb_metrics (lock_deadlocks), else no data."),
        PanelSpec("Row lock waits", "timeseries", "short", (
            _q(n.rate("status_innodb_row_lock_waits"), "{{instance}} waits/s"),
            _q(n.sel("status_innodb_row_lock_current_waits"), "{{instance}} waiting now")),
            ("status_innodb_row_lock_waits", "status_innodb_row_lock_current_waits")),
    ))


def memory(n: Names) -> BoardSpec:
    ahi = f"{n.sel('innodb_mem_adaptive_hash_index_bytes')} or {n.sel('status_innodb_mem_adaptive_hash')}"
    total = f"{n.sel('innodb_mem_total_allocated_bytes')} or {n.sel('innodb_mem_total_large_allocated_bytes')}"
    limit = (f"{n.sel('process_cgroup_memory_limit_bytes')} or on ({BY}) "
             f"{n.sel('host_memory_total_bytes')}")
    leak_filter = 'series=~".+"'
    return BoardSpec("mysql-snmp-memory", "mysql-memory.json", "MySQL memory and leaks", (
        PanelSpec("InnoDB dictionary memory", "timeseries", "bytes", (
            _q(n.sel("innodb_mem_dictionary_bytes")),), ("innodb_mem_dictionary_bytes",)),
        PanelSpec("Adaptive hash index memory", "timeseries", "bytes", (_q(ahi),),
                  ("innodb_mem_adaptive_hash_index_bytes", "status_innodb_mem_adaptive_hash"),
                  note="Servers whose InnoDB status omits the AHI line (MariaDB 10.11) show Innodb_mem_adaptive_hash."),
        PanelSpec("InnoDB memory allocated", "timeseries", "bytes", (_q(total),),
                  ("innodb_mem_total_allocated_bytes", "innodb_mem_total_large_allocated_bytes"),
                  note="Servers that print only 'Total large memory allocated' (MariaDB 10.5+, MySQL 8) show that."),
        PanelSpec("performance_schema memory by instrument", "timeseries", "bytes", (
            _q(f"topk(10, {n.sel('perf_schema_memory_bytes')})", "{{instance}} {{event_name}}"),),
            ("perf_schema_memory_bytes",),
            note="Needs --collect.perf_schema.memory_events and memory instruments enabled; else no data."),
        PanelSpec("mysqld resident memory against its limit", "timeseries", "bytes", (
            _q(n.sel("process_resident_memory_bytes"), "{{instance}} RSS"),
            _q(limit, "{{instance}} limit")),
            ("process_resident_memory_bytes", "process_cgroup_memory_limit_bytes", "host_memory_total_bytes"),
            note="The limit is the cgroup memory limit, or the host's RAM when mysqld has none. " + LOCAL),
        PanelSpec("Leak detector state", "state", "none", (
            _q(n.sel("leak_state", leak_filter), "{{instance}} {{series}}"),), ("leak_state",),
            mappings=LEAK_STATES),
    ), annotations=(
        AnnotationSpec("Leak growth", f"{n.sel('leak_growth_bytes_per_hour')} > 0",
                       "{{series}} grows", "leak_growth_bytes_per_hour"),
        AnnotationSpec("Leak time to limit", n.sel("leak_time_to_limit_seconds"),
                       "{{series}} reaches its limit", "leak_time_to_limit_seconds"),
    ))


def replication(n: Names) -> BoardSpec:
    cpu_busy = (f"sum by ({BY}, mode) ({n.rate('host_cpu_seconds', BUSY_CPU)}) "
                f"/ on ({BY}) group_left() {n.sel('host_cpus')}")
    return BoardSpec("mysql-snmp-replication", "mysql-replication.json", "MySQL replication and master load", (
        PanelSpec("IO thread", "stat", "none", (
            _q(n.replica("Replica_IO_Running", "Slave_IO_Running"), "{{instance}} {{connection_name}}"),),
            ("replica_io_running",), note="No data on a server that is not a replica.", mappings=YES_NO, width=6),
        PanelSpec("SQL thread", "stat", "none", (
            _q(n.replica("Replica_SQL_Running", "Slave_SQL_Running"), "{{instance}} {{connection_name}}"),),
            ("replica_sql_running",), note="No data on a server that is not a replica.", mappings=YES_NO, width=6),
        PanelSpec("Relay log space", "timeseries", "bytes", (
            _q(n.replica("Relay_Log_Space"), "{{instance}} {{connection_name}}"),),
            ("replica_relay_log_space_bytes",), note="No data on a server that is not a replica."),
        PanelSpec("Replication lag", "timeseries", "s", (
            _q(n.replica("Seconds_Behind_Source", "Seconds_Behind_Master"), "{{instance}} {{connection_name}}"),),
            ("replica_seconds_behind_source",),
            note="A gap while the SQL thread is stopped: the server reports NULL, not a number."),
        PanelSpec("Heartbeat lag", "timeseries", "s", (_q(n.sel("heartbeat_lag_seconds")),),
                  ("heartbeat_lag_seconds",),
                  note="Needs pt-heartbeat writing on the primary and --collect.heartbeat; else no data."),
        PanelSpec("Binary log size", "timeseries", "bytes", (_q(n.sel("binlog_size_bytes")),),
                  ("binlog_size_bytes",), note="Needs --collect.binlog_size."),
        PanelSpec("Binary log files", "timeseries", "short", (_q(n.sel("binlog_files")),),
                  ("binlog_files",), note="Needs --collect.binlog_size."),
        PanelSpec("Host CPU busy by mode", "timeseries", "percentunit", (_q(cpu_busy, "{{instance}} {{mode}}"),),
                  ("host_cpu_seconds", "host_cpus"), note=LOCAL),
        lines("Host load", "short", n.sel, ("host_load1", "1m"), ("host_load5", "5m"), ("host_load15", "15m"),
              note=LOCAL),
        lines("Host memory", "bytes", n.sel, ("host_memory_total_bytes", "total"),
              ("host_memory_available_bytes", "available"), note=LOCAL),
        lines("mysqld CPU", "percentunit", n.rate, ("process_cpu_user_seconds", "user"),
              ("process_cpu_system_seconds", "system"), note="1 = one core busy. " + LOCAL),
        PanelSpec("mysqld resident memory", "timeseries", "bytes", (
            _q(n.sel("process_resident_memory_bytes")),), ("process_resident_memory_bytes",), note=LOCAL),
        PanelSpec("mysqld threads", "timeseries", "short", (_q(n.sel("process_threads")),), ("process_threads",),
                  note=LOCAL),
        PanelSpec("mysqld open files", "timeseries", "short", (_q(n.sel("process_open_files")),),
                  ("process_open_files",), note=LOCAL),
    ))


BOARDS = (overview, innodb, memory, replication)


def boards(catalog: Catalog) -> tuple[BoardSpec, ...]:
    names = Names(catalog)
    return tuple(board(names) for board in BOARDS)
