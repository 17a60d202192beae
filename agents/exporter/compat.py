"""mysqld_exporter-compatible metric families, built from the rows a Snapshot carries.

Operators switch from prometheus/mysqld_exporter with its mixin (dashboards, alerts,
recording rules), so every name, type, label and value conversion here follows what
that exporter publishes for the same collector.  The facts (regexes, label names,
skipped rows) come from its ``collector/*.go``; the code is ours and works on the
typed rows ``agents/collection.py`` stores in ``Snapshot.raw``, never on a cursor.

Every builder is a pure function: rows in, metric families out.  The big ones
take an optional interner (agents/exporter/encoding.py) so an unchanged value
reuses last scrape's family object and encoded bytes.
"""

from __future__ import annotations

import calendar
import functools
import math
import re
import time
from typing import Iterator, Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, UnknownMetricFamily

from agents.exporter.encoding import FamilyInterner, scalar_family

NAMESPACE = "mysql"

# --------------------------------------------------------------------------- values

_NUMBER_RE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
# mysqld_exporter maps these words (case-insensitively) before trying a number:
# Slave_IO_Running "Connecting" is a not-running state; wsrep_cluster_status
# "Primary" / "non-Primary" / "Disconnected".
_WORD_VALUES = {
    "yes": 1.0,
    "on": 1.0,
    "primary": 1.0,
    "no": 0.0,
    "off": 0.0,
    "disabled": 0.0,
    "connecting": 0.0,
    "non-primary": 0.0,
    "disconnected": 0.0,
}
# Timestamps it also accepts: Ssl_server_not_after ("Nov 29 09:00:00 2036 GMT")
# and DATETIME columns, both read as UTC.  The regex keeps strptime (slow) off
# the hundreds of other text values of every scrape.
_TIME_FORMATS = (
    (re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} [A-Z]+$"), "%b %d %H:%M:%S %Y %Z"),
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"), "%Y-%m-%d %H:%M:%S"),
)


def status_number(value: object) -> float | None:
    """A SHOW STATUS / VARIABLES / SLAVE STATUS value as mysqld_exporter reads it.

    Returns None when it skips the value (NULL, free text, file names).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    text = str(value)
    word = _WORD_VALUES.get(text.lower())
    if word is not None:
        return word
    if _NUMBER_RE.match(text):
        return float(text)
    for pattern, fmt in _TIME_FORMATS:
        if pattern.match(text):
            try:
                return float(calendar.timegm(time.strptime(text, fmt)))
            except ValueError:
                return None
    return None


_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_]")


@functools.lru_cache(maxsize=8192)
def metric_name_part(name: str) -> str:
    """Lowercase, every character Prometheus does not allow in a name replaced by '_'.

    Cached: the same few hundred variable names come back every scrape.
    """
    return _INVALID_NAME_CHARS.sub("_", name).lower()


def fq_name(*parts: str) -> str:
    return "_".join(p for p in (NAMESPACE, *parts) if p)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    return str(value)


def first_present(row: Mapping[str, object], *columns: str) -> object:
    """The first of ``columns`` the row has (old and new spellings of one column)."""
    for column in columns:
        value = row_value(row, column)
        if value is not None:
            return value
    return None


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


# --------------------------------------------------------------------------- global status

_GLOBAL_STATUS_GROUP_RE = re.compile(
    r"^(com|handler|connection_errors|innodb_buffer_pool_pages|innodb_rows|performance_schema)_(.*)$"
)
_BUFFER_POOL_PAGE_STATES = frozenset({"data", "free", "misc", "old"})
_GALERA_STATUS_TEXT = ("wsrep_local_state_uuid", "wsrep_cluster_state_uuid", "wsrep_provider_version")
_GALERA_EVS_LATENCY = (
    ("min_seconds", "PXC/Galera group communication latency. Min value."),
    ("avg_seconds", "PXC/Galera group communication latency. Avg value."),
    ("max_seconds", "PXC/Galera group communication latency. Max value."),
    ("stdev", "PXC/Galera group communication latency. Standard Deviation."),
    ("sample_size", "PXC/Galera group communication latency. Sample Size."),
)


@functools.lru_cache(maxsize=8192)
def _status_slot(raw_key: str) -> tuple[str, str]:
    """Where a status variable goes: (group, label) or ("generic", metric name part).

    Cached: the same few hundred names come back every scrape.
    """
    key = metric_name_part(raw_key)
    match = _GLOBAL_STATUS_GROUP_RE.match(key)
    if match is None:
        return "generic", key
    group, rest = match.groups()
    if group == "innodb_buffer_pool_pages":
        if rest in _BUFFER_POOL_PAGE_STATES:
            return "pages", rest
        if rest == "dirty":
            return "dirty", rest
        if rest == "total":  # the sum of the states: mysqld_exporter drops it
            return "skip", rest
        return "page_changes", rest
    return group, rest


def global_status_families(status: Mapping[str, object], interner: FamilyInterner | None = None) -> list[Metric]:
    """``SHOW GLOBAL STATUS`` as mysqld_exporter's global_status collector names it."""
    grouped = {
        "com": CounterMetricFamily(
            fq_name("global_status", "commands_total"), "Total number of executed MySQL commands.",
            labels=["command"]),
        "handler": CounterMetricFamily(
            fq_name("global_status", "handlers_total"), "Total number of executed MySQL handlers.",
            labels=["handler"]),
        "connection_errors": CounterMetricFamily(
            fq_name("global_status", "connection_errors_total"), "Total number of MySQL connection errors.",
            labels=["error"]),
        "pages": GaugeMetricFamily(
            fq_name("global_status", "buffer_pool_pages"), "Innodb buffer pool pages by state.", labels=["state"]),
        "dirty": GaugeMetricFamily(
            fq_name("global_status", "buffer_pool_dirty_pages"), "Innodb buffer pool dirty pages."),
        "page_changes": CounterMetricFamily(
            fq_name("global_status", "buffer_pool_page_changes_total"), "Innodb buffer pool page state changes.",
            labels=["operation"]),
        "innodb_rows": CounterMetricFamily(
            fq_name("global_status", "innodb_row_ops_total"), "Total number of MySQL InnoDB row operations.",
            labels=["operation"]),
        "performance_schema": CounterMetricFamily(
            fq_name("global_status", "performance_schema_lost_total"),
            "Total number of MySQL instrumentations that could not be loaded or created due to memory constraints.",
            labels=["instrumentation"]),
    }
    generic: list[Metric] = []
    text_items: dict[str, str] = {}

    for raw_key, raw_value in status.items():
        value = status_number(raw_value)
        slot, name = _status_slot(raw_key)
        if value is None:
            if slot == "generic":
                text_items[name] = _text(raw_value)
        elif slot == "generic":
            generic.append(scalar_family(interner, UnknownMetricFamily, "mysql_global_status_" + name,
                                         "Generic metric from SHOW GLOBAL STATUS.", value))
        elif slot == "dirty":
            grouped[slot].add_metric([], value)
        elif slot != "skip":
            grouped[slot].add_metric([name], value)

    families = [f for f in grouped.values() if f.samples]
    families.extend(generic)
    families.extend(_galera_status_families(text_items))
    return families


def _galera_status_families(text_items: Mapping[str, str]) -> Iterator[Metric]:
    if text_items.get("wsrep_local_state_uuid"):
        info = GaugeMetricFamily(fq_name("galera", "status_info"), "PXC/Galera status information.",
                                 labels=list(_GALERA_STATUS_TEXT))
        info.add_metric([text_items.get(k, "") for k in _GALERA_STATUS_TEXT], 1)
        yield info
    latency = text_items.get("wsrep_evs_repl_latency", "")
    parts = latency.split("/") if latency else []
    if len(parts) == len(_GALERA_EVS_LATENCY) and all(_NUMBER_RE.match(p.strip()) for p in parts):
        for (name, help_text), part in zip(_GALERA_EVS_LATENCY, parts):
            family = GaugeMetricFamily(fq_name("galera_evs_repl_latency", name), help_text)
            family.add_metric([], float(part))
            yield family


# --------------------------------------------------------------------------- global variables

_GCACHE_SIZE_RE = re.compile(r"gcache.size = (\d+)([MG]?);")
_GCACHE_UNITS = {"": 1, "M": 1024**2, "G": 1024**3}


def global_variables_families(variables: Mapping[str, object],
                              interner: FamilyInterner | None = None) -> list[Metric]:
    """``SHOW GLOBAL VARIABLES``: a gauge per numeric variable, plus the info metrics.

    Variables rarely change: with an interner, an unchanged set of variables gives
    back last scrape's families.
    """
    if interner is not None:
        return interner.reuse("global_variables", variables,
                              lambda: _global_variables_families(variables, interner))
    return _global_variables_families(variables, None)


def _global_variables_families(variables: Mapping[str, object], interner: FamilyInterner | None) -> list[Metric]:
    families: list[Metric] = []
    text_items: dict[str, str] = {}
    for raw_key, raw_value in variables.items():
        key = metric_name_part(raw_key)
        value = status_number(raw_value)
        if value is None:
            text_items[key] = _text(raw_value)
            continue
        families.append(scalar_family(interner, GaugeMetricFamily, "mysql_global_variables_" + key,
                                      "Generic gauge metric from SHOW GLOBAL VARIABLES.", value))

    version = GaugeMetricFamily(fq_name("version", "info"), "MySQL version and distribution.",
                                labels=["innodb_version", "version", "version_comment"])
    version.add_metric([text_items.get("innodb_version", ""), text_items.get("version", ""),
                        text_items.get("version_comment", "")], 1)
    families.append(version)

    level = text_items.get("transaction_isolation") or text_items.get("tx_isolation")
    if level:
        isolation = GaugeMetricFamily(fq_name("transaction", "isolation"), "MySQL transaction isolation.",
                                      labels=["level"])
        isolation.add_metric([level], 1)
        families.append(isolation)

    if text_items.get("wsrep_cluster_name"):
        cluster = GaugeMetricFamily(fq_name("galera", "variables_info"), "PXC/Galera variables information.",
                                    labels=["wsrep_cluster_name"])
        cluster.add_metric([text_items["wsrep_cluster_name"]], 1)
        families.append(cluster)
    if text_items.get("wsrep_provider_options"):
        match = _GCACHE_SIZE_RE.search(text_items["wsrep_provider_options"])
        if match:
            gcache = GaugeMetricFamily(fq_name("galera", "gcache_size_bytes"), "PXC/Galera gcache size.")
            gcache.add_metric([], float(match.group(1)) * _GCACHE_UNITS[match.group(2)])
            families.append(gcache)
    return families


# --------------------------------------------------------------------------- replication

SLAVE_STATUS_LABELS = ("master_host", "master_uuid", "channel_name", "connection_name")
_LAG_COLUMNS = frozenset({"seconds_behind_master", "seconds_behind_source"})


def legacy_replication_name(column: str) -> str:
    """MySQL 8.0.22+ / 8.4 column name in the words SHOW SLAVE STATUS used.

    8.4 dropped SHOW SLAVE STATUS; its SHOW REPLICA STATUS says Source/Replica
    where alerts written for mysqld_exporter expect master/slave
    (Seconds_Behind_Source -> seconds_behind_master, Replica_SQL_Running ->
    slave_sql_running).
    """
    words = metric_name_part(column).split("_")
    return "_".join({"source": "master", "replica": "slave"}.get(w, w) for w in words)


def slave_status_families(rows: Sequence[Mapping[str, object]]) -> list[Metric]:
    """One untyped family per numeric column of ``SHOW [ALL] SLAVE|REPLICA STATUS``.

    A NULL lag (Seconds_Behind_Master while the SQL thread is stopped) is NaN: the
    series stays (a graph shows the gap as unknown, ``absent()`` does not fire, the
    replica is visibly there), and no number is made up, so ``seconds_behind_master
    > N`` neither fires nor clears on it.  mysqld_exporter drops the sample instead.
    Other NULL columns give no sample, as there.  Replicas on 8.4 also get the
    pre-8.0.22 names.
    """
    families: dict[str, UnknownMetricFamily] = {}
    for row in rows:
        labels = [
            _text(first_present(row, "Master_Host", "Source_Host")),
            _text(first_present(row, "Master_UUID", "Source_UUID")),
            _text(row_value(row, "Channel_Name")),
            _text(row_value(row, "Connection_name")),
        ]
        numeric = [(column, math.nan if raw is None and column.lower() in _LAG_COLUMNS else status_number(raw))
                   for column, raw in row.items()]
        numeric = [(column, value) for column, value in numeric if value is not None]
        names_values = {metric_name_part(column): value for column, value in numeric}
        for column, value in numeric:  # old names only where the server printed new ones
            names_values.setdefault(legacy_replication_name(column), value)
        for name, value in names_values.items():
            family = families.get(name)
            if family is None:
                family = families[name] = UnknownMetricFamily(
                    fq_name("slave_status", name), "Generic metric from SHOW SLAVE STATUS.",
                    labels=list(SLAVE_STATUS_LABELS))
            family.add_metric(labels, value)
    return list(families.values())


def slave_hosts_families(rows: Sequence[Mapping[str, object]]) -> list[Metric]:
    """``SHOW SLAVE HOSTS``; the odd name is mysqld_exporter's (heartbeat subsystem + full name)."""
    family = GaugeMetricFamily(fq_name("heartbeat", "mysql_slave_hosts_info"), "Information about running slaves",
                               labels=["server_id", "slave_host", "port", "master_id", "slave_uuid"])
    for row in rows:
        family.add_metric([
            _text(row_value(row, "Server_id")),
            _text(row_value(row, "Host")),
            _text(row_value(row, "Port")),
            _text(first_present(row, "Master_id", "Source_Id")),
            _text(first_present(row, "Slave_UUID", "Replica_UUID")),
        ], 1)
    return [family] if family.samples else []


def heartbeat_families(heartbeat: Mapping[str, object]) -> list[Metric]:
    """pt-heartbeat: the stored timestamp and the server's clock, per server_id.

    ``heartbeat`` is ``{"rows": [{"server_id", "ts", "now"}...]}`` or one such row.
    """
    rows = heartbeat.get("rows") if "rows" in heartbeat else [heartbeat]
    now = GaugeMetricFamily(fq_name("heartbeat", "now_timestamp_seconds"), "Timestamp of the current server.",
                            labels=["server_id"])
    stored = GaugeMetricFamily(fq_name("heartbeat", "stored_timestamp_seconds"),
                               "Timestamp stored in the heartbeat table.", labels=["server_id"])
    for row in rows or ():
        server_id = row_value(row, "server_id")
        ts, current = status_number(row_value(row, "ts")), status_number(row_value(row, "now"))
        if server_id is None or ts is None or current is None:
            continue
        now.add_metric([_text(server_id)], current)
        stored.add_metric([_text(server_id)], ts)
    return [f for f in (now, stored) if f.samples]


# --------------------------------------------------------------------------- engine_innodb_status

# mysqld_exporter's engine_innodb_status collector read three numbers out of the
# ROW OPERATIONS section; our parser reads them (and ~200 more) under catalog names.
_ENGINE_INNODB = (
    ("queries_inside_innodb", "Queries inside InnoDB.", "innodb_row_queries_inside"),
    ("queries_in_queue", "Queries in queue.", "innodb_row_queries_queued"),
    ("read_views_open_inside_innodb", "Read views open inside InnoDB.", "innodb_row_read_views_open"),
)


def engine_innodb_families(values: Mapping[str, object]) -> list[Metric]:
    """The three mysql_engine_innodb_* gauges, from the parsed InnoDB status values."""
    families = []
    for name, help_text, catalog_name in _ENGINE_INNODB:
        value = status_number(values.get(catalog_name))
        if value is not None:
            family = GaugeMetricFamily(fq_name("engine_innodb", name), help_text)
            family.add_metric([], value)
            families.append(family)
    return families


# --------------------------------------------------------------------------- binlog

def binlog_families(binary_logs: Sequence[Sequence[object]]) -> list[Metric]:
    """``SHOW BINARY LOGS`` rows (name, size[, encrypted]): total size, count, last file number."""
    total, count, last_name = 0.0, 0, ""
    for entry in binary_logs:
        name, size = entry[0], entry[1]
        number = status_number(size)
        if number is None:
            continue
        total += number
        count += 1
        last_name = _text(name)
    families = []
    for name, help_text, value in (
        ("size_bytes", "Combined size of all registered binlog files.", total),
        ("files", "Number of registered binlog files.", float(count)),
    ):
        family = GaugeMetricFamily(fq_name("binlog", name), help_text)
        family.add_metric([], value)
        families.append(family)
    suffix = last_name.rsplit(".", 1)[-1] if "." in last_name else ""
    if suffix.isdigit():
        family = GaugeMetricFamily(fq_name("binlog", "file_number"), "The last binlog file number.")
        family.add_metric([], float(suffix))
        families.append(family)
    return families


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


_THREAD_STATE_CHARS = str.maketrans({";": "", ",": "", ":": "", ".": "", "(": "", ")": "", " ": "_", "-": "_"})


def sanitize_thread_state(text: str) -> str:
    """Processlist command/state as a label value: lowercase, punctuation dropped, spaces to '_'."""
    return (text or "unknown").lower().translate(_THREAD_STATE_CHARS)


def processlist_families(rows: Sequence[Mapping[str, object]], min_time: int = 0,
                         by_user: bool = True, by_host: bool = True,
                         exclude_id: int | None = None) -> list[Metric]:
    """``information_schema.PROCESSLIST`` rows, one per thread.

    ``exclude_id`` is the exporter's own connection, which mysqld_exporter leaves
    out (``ID != CONNECTION_ID()``): it is always there, running the query itself.
    """
    counts: dict[tuple[str, str], int] = {}
    seconds: dict[tuple[str, str], float] = {}
    users: dict[str, int] = {}
    hosts: dict[str, int] = {}
    for row in rows:
        if exclude_id is not None and status_number(row_value(row, "ID")) == exclude_id:
            continue
        thread_time = status_number(row_value(row, "TIME")) or 0.0
        if thread_time < min_time:
            continue
        key = (sanitize_thread_state(_text(row_value(row, "COMMAND"))),
               sanitize_thread_state(_text(row_value(row, "STATE"))))
        counts[key] = counts.get(key, 0) + 1
        seconds[key] = seconds.get(key, 0.0) + thread_time
        user = _text(row_value(row, "USER"))
        host = _text(row_value(row, "HOST")).split(":", 1)[0] or "unknown"
        users[user] = users.get(user, 0) + 1
        hosts[host] = hosts.get(host, 0) + 1
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


# --------------------------------------------------------------------------- performance_schema

def memory_events_families(rows: Sequence[Mapping[str, object]], remove_prefix: str = "memory/") -> list[Metric]:
    """``performance_schema.memory_summary_global_by_event_name`` (instruments that allocated)."""
    alloc = CounterMetricFamily(fq_name("perf_schema", "memory_events_alloc_bytes_total"),
                                "The total number of bytes allocated by events.", labels=["event_name"])
    free = CounterMetricFamily(fq_name("perf_schema", "memory_events_free_bytes_total"),
                               "The total number of bytes freed by events.", labels=["event_name"])
    used = GaugeMetricFamily(fq_name("perf_schema", "memory_events_used_bytes"),
                             "The number of bytes currently allocated by events.", labels=["event_name"])
    for row in rows:
        count_alloc = status_number(row_value(row, "COUNT_ALLOC"))
        if count_alloc is not None and count_alloc <= 0:
            continue
        event = _text(row_value(row, "EVENT_NAME"))
        if remove_prefix and event.startswith(remove_prefix):
            event = event[len(remove_prefix):]
        values = (status_number(row_value(row, "SUM_NUMBER_OF_BYTES_ALLOC")),
                  status_number(row_value(row, "SUM_NUMBER_OF_BYTES_FREE")),
                  status_number(row_value(row, "CURRENT_NUMBER_OF_BYTES_USED")))
        for family, value in zip((alloc, free, used), values):
            if value is not None:
                family.add_metric([event], value)
    return [f for f in (alloc, free, used) if f.samples]
