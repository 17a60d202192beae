"""SHOW ENGINE INNODB STATUS: the InnoDB monitor text, parsed by parsers/innodb.py."""

from ..snapshot import labels_of
from . import Scraper, SourceResult
from mysql_snmp.parsers.innodb import parse_innodb_status

STATEMENT = "SHOW ENGINE INNODB STATUS"


def innodb_result(text: str) -> SourceResult:
    """The monitor text as a SourceResult: scalars, and per-buffer-pool series labelled ``pool``."""
    parsed = parse_innodb_status(text)
    result = SourceResult(values=dict(parsed.values), raw={"innodb_status_text": text})
    for pool_id, pool_values in parsed.buffer_pools.items():
        labels = labels_of(pool=str(pool_id))
        for key, value in pool_values.items():
            result.series.setdefault(key, {})[labels] = value
    return result


class InnodbStatus(Scraper):
    name = "innodb_status"
    catalog_kind = "innodb"
    description = "InnoDB monitor text (SHOW ENGINE INNODB STATUS)"
    pipelined = True

    def statements(self, server):
        return (STATEMENT,)

    def collect(self, conn, server, context=None):
        rows = conn.query(STATEMENT).rows
        # One row (Type, Name, Status); a server without InnoDB returns none.
        return innodb_result((rows[0][2] if rows else "") or "")


SCRAPER = InnodbStatus
