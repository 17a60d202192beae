"""Threads by command and state from information_schema.PROCESSLIST, counted by the server."""

from . import Scraper, SourceResult
from .options import SourceOptions
from mysql_snmp.parsers.processlist import processlist_values


def grouped_statement(min_time: int) -> str:
    """Threads grouped by user, client host (without its port), command and state, the monitor's own
    connection left out: a row per group, not per thread (2,000 connections are a handful of
    groups).  information_schema rather than SHOW PROCESSLIST: named columns and no Info text
    (queries can be large and may hold data we have no business copying).  Without PROCESS the
    server lists only the user's own threads, which on a quiet server looks like "no thread besides
    mine": the condition reads INNODB_TRX, which needs PROCESS (granted directly or through a role),
    so a missing grant fails as ERROR 1227 instead.  ``min_time``: mysqld_exporter's
    --collect.info_schema.processlist.min_time, counted apart for its families."""
    seconds = "COALESCE(TIME, 0)"  # NULL for some system threads on MySQL 8: counted, adding no time
    return ("SELECT USER, SUBSTRING_INDEX(HOST, ':', 1) AS HOST, COMMAND, STATE, COUNT(*) AS THREADS,"
            f" SUM({seconds}) AS TIME, MAX({seconds}) AS MAX_TIME,"
            f" SUM({seconds} >= {int(min_time)}) AS THREADS_FROM_MIN_TIME,"
            f" SUM(IF({seconds} >= {int(min_time)}, {seconds}, 0)) AS TIME_FROM_MIN_TIME"
            " FROM information_schema.PROCESSLIST"
            " WHERE ID <> CONNECTION_ID() AND (SELECT COUNT(*) FROM information_schema.INNODB_TRX) >= 0"
            " GROUP BY USER, SUBSTRING_INDEX(HOST, ':', 1), COMMAND, STATE")


class Processlist(Scraper):
    name = "processlist"
    catalog_kind = "processlist"
    description = "threads per command and state (information_schema.PROCESSLIST)"
    pipelined = True
    takes_options = True

    def __init__(self, options: SourceOptions | None = None):
        self.statement = grouped_statement((options or SourceOptions()).processlist_min_time)

    def statements(self, server):
        return (self.statement,)

    def privilege_hint(self, server, statement):
        return "PROCESS (without it only the monitoring user's own threads are listed)"

    def collect(self, conn, server, context=None):
        rows = conn.query(self.statement).dicts(lowercase=True)
        reading = processlist_values(rows)
        return SourceResult(values=reading.values, series=reading.series, raw={"processlist": rows})


SCRAPER = Processlist
