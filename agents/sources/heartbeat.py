"""pt-heartbeat lag: the age of the newest row the source wrote in the heartbeat table.

Off unless a table is configured (``Collector(heartbeat=HeartbeatOptions(...))``),
like the original's ``--heartbeat DB.TABLE`` and mysqld_exporter's
``--collect.heartbeat.database/table/utc``.
"""

from dataclasses import dataclass

from . import Scraper, SourceResult
from mysql_snmp.parsers.heartbeat import heartbeat_row_series, heartbeat_values


@dataclass(frozen=True)
class HeartbeatOptions:
    database: str = "heartbeat"
    table: str = "heartbeat"
    # pt-heartbeat --utc writes UTC timestamps: compare with UTC_TIMESTAMP, not NOW.
    utc: bool = False

    def statement(self) -> str:
        # The replica's own clock is "now", as in the original (UNIX_TIMESTAMP() - ts):
        # the agent's host clock may be skewed from the database host's.
        return (
            f"SELECT ts, server_id, UNIX_TIMESTAMP(NOW(6)) AS server_now"
            f" FROM {quote_identifier(self.database)}.{quote_identifier(self.table)}"
        )


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Heartbeat(Scraper):
    name = "heartbeat"
    catalog_kind = "heartbeat"
    description = "pt-heartbeat replication lag (off unless a heartbeat table is configured)"
    pipelined = True
    enabled_by_default = False

    def __init__(self, options: HeartbeatOptions | None = None):
        self.options = options or HeartbeatOptions()

    def statements(self, server):
        return (self.options.statement(),)

    def privilege_hint(self, server, statement):
        return f"SELECT ON {quote_identifier(self.options.database)}.{quote_identifier(self.options.table)}"

    def collect(self, conn, server, context=None):
        rows = conn.query(self.options.statement()).dicts()
        if not rows:  # pt-heartbeat has not written yet: no lag to report
            return SourceResult()
        now = float(rows[0]["server_now"])
        # Several rows: a chain where every source runs pt-heartbeat; measure ours.
        source_id = _source_server_id((context or {}).get("replica_status")) if len(rows) > 1 else None
        reading = heartbeat_values(rows, now, utc=self.options.utc, server_id=source_id)
        # Every row, as mysqld_exporter exports them: stored and current time per server_id.
        series = heartbeat_row_series(rows, now, utc=self.options.utc)
        return SourceResult(values=reading.values, series=series)


def _source_server_id(replica_rows) -> int | None:
    """The server_id whose heartbeat row measures this replica (one channel only)."""
    if not replica_rows or len(replica_rows) != 1:
        return None
    row = replica_rows[0]
    value = row.get("Source_Server_Id", row.get("Master_Server_Id"))
    return value if isinstance(value, int) and value > 0 else None


SCRAPER = Heartbeat
