"""SHOW ENGINE TOKUDB STATUS: the TokuDB engine's counters (mysqld_exporter's engine_tokudb_status).

No catalog entry lists them (the engine names its lines in free text); the parser hands
them over as named values and the catalog's ``prometheus_families.named`` names them.
A server without TokuDB answers ERROR 1286 (unknown storage engine): the collector skips
the source, once, with that reason.
"""

from . import Scraper, SourceResult
from mysql_snmp.parsers.engine_tokudb import tokudb_status_rows

STATEMENT = "SHOW ENGINE TOKUDB STATUS"


class EngineTokudbStatus(Scraper):
    name = "engine_tokudb_status"
    catalog_kind = "engine_tokudb_status"
    description = "TokuDB engine counters (SHOW ENGINE TOKUDB STATUS)"
    enabled_by_default = False
    pipelined = True

    def statements(self, server):
        return (STATEMENT,)

    def collect(self, conn, server, context=None):
        return SourceResult(raw={self.name: tokudb_status_rows(conn.query(STATEMENT).dicts())})


SCRAPER = EngineTokudbStatus
