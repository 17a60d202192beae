"""Base of the scrapers that read one table and hand its rows to one parser.

A subclass says which statement reads the table on this server (``statement``),
why a server cannot have it (``unsupported_reason``, checked before anything is
sent), the grant it needs, and which parser turns rows into series or values
(``parse``).  A table that turns out to be missing anyway (a plugin not loaded,
ERROR 1146/1109) is reported once and the source is skipped, by the collector.
"""

from __future__ import annotations

from pymysql.converters import escape_string

from . import Scraper, SourceResult
from .options import SourceOptions


def sql_text(text: str) -> str:
    """``text`` as a quoted SQL string literal."""
    return "'" + escape_string(text) + "'"


class TableSource(Scraper):
    enabled_by_default = False
    pipelined = True  # statement(server) depends on the server and the options only
    takes_options = True
    grant = "SELECT ON performance_schema.*"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.catalog_kind = cls.name  # each table source feeds the catalog entries of its own name

    def __init__(self, options: SourceOptions | None = None):
        self.options = options or SourceOptions()

    def statement(self, server) -> str:
        raise NotImplementedError

    def statements(self, server):
        return (self.statement(server),)

    def privilege_hint(self, server, statement):
        return self.grant

    def parse(self, rows: list[dict]) -> SourceResult:
        raise NotImplementedError

    def collect(self, conn, server, context=None):
        return self.parse(conn.query(self.statement(server)).dicts(lowercase=True))


class UserstatSource(TableSource):
    """A table of the userstat patch, on MariaDB and Percona Server (filled with userstat=1)."""

    grant = "PROCESS"
    table = ""  # information_schema.NAME

    def unsupported_reason(self, server):
        if server.flavour == "mysql":
            return f"{self.table} exists on MariaDB and Percona Server only (userstat=1)"
        return None


class WholeUserstatSource(UserstatSource):
    """A per-account userstat table read whole: every numeric column is a series, and the series
    also go to the exporter as they are, so the columns no catalog entry names are served too (as
    upstream serves them)."""

    @staticmethod
    def series_of(rows):
        raise NotImplementedError

    def statement(self, server):
        return f"SELECT * FROM {self.table}"

    def parse(self, rows):
        series = self.series_of(rows)
        return SourceResult(series=series, raw={self.name: series})


def mysql_only(server, what: str) -> str | None:
    """The reason a MySQL-only table (group replication, 8.0 applier columns) is absent here."""
    if server.flavour == "mariadb":
        return f"{what} exists on MySQL and Percona Server only"
    return None
