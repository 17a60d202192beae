"""Threads by command and state from information_schema.PROCESSLIST."""

from . import Scraper, SourceResult
from mysql_snmp.parsers.processlist import processlist_values

# information_schema rather than SHOW PROCESSLIST: the same rows, named columns, and
# no Info text (queries can be large and may hold data we have no business copying).
# Without PROCESS the server lists only the user's own threads, which on a quiet server
# looks like "no thread besides mine": the condition reads INNODB_TRX, which needs PROCESS
# (granted directly or through a role), so a missing grant fails as ERROR 1227 instead.
STATEMENT = ("SELECT ID, USER, HOST, DB, COMMAND, TIME, STATE FROM information_schema.PROCESSLIST"
             " WHERE (SELECT COUNT(*) FROM information_schema.INNODB_TRX) >= 0")


class Processlist(Scraper):
    name = "processlist"
    catalog_kind = "processlist"
    description = "threads per command and state (information_schema.PROCESSLIST)"
    pipelined = True

    def statements(self, server):
        return (STATEMENT,)

    def privilege_hint(self, server, statement):
        return "PROCESS (without it only the monitoring user's own threads are listed)"

    def collect(self, conn, server, context=None):
        rows = conn.query(STATEMENT).dicts(lowercase=True)
        # Our own thread would always count as one busy query: leave it out.
        reading = processlist_values(rows, exclude_id=conn.thread_id)
        return SourceResult(values=reading.values, series=reading.series, raw={"processlist": rows})


SCRAPER = Processlist
