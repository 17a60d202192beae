"""One scraper per file: the file list is the feature list.

A scraper knows which statements it runs on which server (``statements``,
``unsupported_reason``, ``privilege_hint``), runs them through a
``MySQLConnection`` and hands the rows to a parser in ``parsers/``; it parses
nothing itself.  ``collect(conn, server, context) -> SourceResult``:

- ``values``: scalars keyed by catalog name (the parsers speak catalog names) or,
  for global status/variables, by the variable name the catalog's ``source.key``
  gives (``Key_read_requests``);
- ``series``: labelled values, catalog name -> {labels: value};
- ``raw``: rows for consumers that export every row (see agents/snapshot.py), under
  the keys global_status, global_variables (the every-row pass-throughs of
  prometheus_families), replica_status, processlist, innodb_metrics (turned into
  named values by parsers/ for the catalog's ``prometheus_families.named``),
  engine_tokudb_status, user_statistics, client_statistics (named values already),
  innodb_status_text, binary_logs, master_status;
- ``context`` holds the ``raw`` of the scrapers that ran before in this collection.

The collector maps results to catalog names (mysql_snmp.agents.collection.map_to_catalog); a
scraper never invents a value the server did not print.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Iterable

from ..snapshot import Labels, ServerInfo, Value
from mysql_snmp.parsers.status import parse_status_rows

# Order matters: later scrapers may read what earlier ones put in ``context``
# (host/process need the server's pid_file from global_variables), and consecutive
# pipelined scrapers share one round trip (the psutil ones come last so as not to split it).
SCRAPER_MODULES = (
    "mysql_snmp.agents.sources.global_status",
    "mysql_snmp.agents.sources.global_variables",
    "mysql_snmp.agents.sources.innodb_status",
    "mysql_snmp.agents.sources.replication",
    "mysql_snmp.agents.sources.processlist",
    "mysql_snmp.agents.sources.innodb_metrics",
    "mysql_snmp.agents.sources.perf_schema_memory",
    "mysql_snmp.agents.sources.slave_hosts",
    "mysql_snmp.agents.sources.heartbeat",
    "mysql_snmp.agents.sources.engine_tokudb_status",
    # mysqld_exporter's table collectors (agents/sources/table_source.py): not collected unless asked
    # for (the exporter's collector flags; innodb_cmp, innodb_cmpmem, query_response_time by default).
    "mysql_snmp.agents.sources.innodb_cmp",
    "mysql_snmp.agents.sources.innodb_cmpmem",
    "mysql_snmp.agents.sources.query_response_time",
    "mysql_snmp.agents.sources.auto_increment",
    "mysql_snmp.agents.sources.info_schema_tables",
    "mysql_snmp.agents.sources.innodb_tablespaces",
    "mysql_snmp.agents.sources.table_statistics",
    "mysql_snmp.agents.sources.schema_statistics",
    "mysql_snmp.agents.sources.user_statistics",
    "mysql_snmp.agents.sources.client_statistics",
    "mysql_snmp.agents.sources.replica_host",
    "mysql_snmp.agents.sources.mysql_user",
    "mysql_snmp.agents.sources.sys_user_summary",
    "mysql_snmp.agents.sources.perf_schema_events_statements",
    "mysql_snmp.agents.sources.perf_schema_events_statements_sum",
    "mysql_snmp.agents.sources.perf_schema_events_waits",
    "mysql_snmp.agents.sources.perf_schema_file_events",
    "mysql_snmp.agents.sources.perf_schema_file_instances",
    "mysql_snmp.agents.sources.perf_schema_table_io_waits",
    "mysql_snmp.agents.sources.perf_schema_index_io_waits",
    "mysql_snmp.agents.sources.perf_schema_table_lock_waits",
    "mysql_snmp.agents.sources.perf_schema_group_members",
    "mysql_snmp.agents.sources.perf_schema_group_member_stats",
    "mysql_snmp.agents.sources.perf_schema_applier_workers",
    "mysql_snmp.agents.sources.rocksdb_perf_context",
    # After every pipelined source: it decides from global_variables whether to send anything, so
    # in the middle it would split their one round trip in two.
    "mysql_snmp.agents.sources.binlog",
    "mysql_snmp.agents.sources.host",
    "mysql_snmp.agents.sources.process",
)


@dataclass
class SourceResult:
    values: dict[str, Value] = field(default_factory=dict)
    series: dict[str, dict[Labels, Value]] = field(default_factory=dict)
    raw: dict[str, object] = field(default_factory=dict)


class SourceUnavailable(Exception):
    """The source cannot run here (not local, not configured, server too old); not an error."""


class Scraper:
    """Base for scrapers.  Subclasses set the class attributes and ``collect``."""

    name: str = ""
    catalog_kind: str | None = None  # the catalog ``source.from`` this scraper feeds
    description: str = ""
    enabled_by_default: bool = True
    # collect() sends exactly statements(server), whatever the answers say: the collector
    # may send them ahead, in one round trip with the other sources' (MySQLConnection.pipeline).
    pipelined: bool = False
    # Reads a row per table, statement digest, file or index: its time grows with the server (seconds
    # on 20,000 tables).  The collector runs such sources after the others, the quickest first, each
    # alone and with its own share of the time left (agents/collection.py).
    heavy: bool = False
    # The constructor takes the SourceOptions (agents/sources/options.py) of mysqld_exporter's collector flags.
    takes_options: bool = False

    def unsupported_reason(self, server: ServerInfo) -> str | None:
        """Why this server cannot serve this scraper (None: it can)."""
        return None

    def statements(self, server: ServerInfo) -> tuple[str, ...]:
        """The statements ``collect`` sends to this server, in order (none for psutil sources)."""
        return ()

    def privilege_hint(self, server: ServerInfo, statement: str) -> str:
        """The grant that makes ``statement`` work, for the one log line on ERROR 1227/1142."""
        return "PROCESS"

    def collect(self, conn, server: ServerInfo, context: dict | None = None) -> SourceResult:
        """Run the statements on ``conn``; ``context`` holds the raw rows of scrapers that ran earlier."""
        raise NotImplementedError

    def runs_before_answers(self) -> bool:
        """Whether this source can run now, before the answers of the sources ahead of it (it sends no
        statement and reads nothing of theirs): the collector runs it while the server works on them."""
        return False


class LocalScraper(Scraper):
    """A psutil source: measures the host or the mysqld process, so only when mysqld runs here.

    Its ``SourceUnavailable`` means "not local" (status reason ``not_local``).
    """

    def __init__(self, local_mysqld):
        self.local = local_mysqld  # mysql_snmp.agents.sources.local_mysqld.LocalMysqld, shared by all of them

    def runs_before_answers(self) -> bool:
        return True


# A scraper's name is its module's: a process imports only the scrapers it runs (the exporter's
# default collectors need a third of them; the others and their parsers are ~0.5 MB of RSS).
SCRAPER_NAMES = tuple(module_name.rsplit(".", 1)[1] for module_name in SCRAPER_MODULES)


def scraper_classes(names: Iterable[str] | None = None) -> dict[str, type[Scraper]]:
    """Name -> scraper class in SCRAPER_MODULES order: every one, or those of ``names`` (known ones)."""
    wanted = None if names is None else set(names)
    classes = {}
    for name, module_name in zip(SCRAPER_NAMES, SCRAPER_MODULES):
        if wanted is None or name in wanted:
            classes[name] = importlib.import_module(module_name).SCRAPER
    return classes


def default_source_names() -> tuple[str, ...]:
    return tuple(name for name, cls in scraper_classes().items() if cls.enabled_by_default)


class NameValueScraper(Scraper):
    """A statement printing (Variable_name, Value) rows: SHOW GLOBAL STATUS / VARIABLES."""

    statement: str = ""
    pipelined = True

    def __init__(self):
        # The previous answer and its parse: SHOW GLOBAL VARIABLES prints the same ~650
        # rows scrape after scrape, and comparing rows costs a twentieth of parsing them.
        self._previous: tuple[list, dict[str, Value]] | None = None

    def statements(self, server):
        return (self.statement,)

    def privilege_hint(self, server, statement):
        return "none (any user may run it)"

    def refine(self, parsed: dict[str, Value]) -> dict[str, Value]:
        """What of the parsed rows the collection keeps (all of them, unless a subclass knows better)."""
        return parsed

    def collect(self, conn, server, context=None):
        rows = conn.query(self.statement).rows
        if self._previous is not None and self._previous[0] == rows:
            parsed = self._previous[1]
        else:
            parsed = self.refine(parse_status_rows(rows))
            self._previous = (rows, parsed)
        # The parsed dict is shared by the snapshots of unchanged answers: consumers only read it.
        return SourceResult(values=dict(parsed), raw={self.name: parsed})
