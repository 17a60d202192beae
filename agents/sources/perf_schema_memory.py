"""performance_schema.memory_summary_global_by_event_name: memory per instrument."""

from . import Scraper, SourceResult
from mysql_snmp.parsers.perf_schema_memory import memory_series

# Instruments that never allocated are left out: MySQL 8 lists ~500 of them, mostly idle.
STATEMENT = (
    "SELECT EVENT_NAME, COUNT_ALLOC, COUNT_FREE, SUM_NUMBER_OF_BYTES_ALLOC, SUM_NUMBER_OF_BYTES_FREE,"
    " CURRENT_COUNT_USED, CURRENT_NUMBER_OF_BYTES_USED, HIGH_NUMBER_OF_BYTES_USED"
    " FROM performance_schema.memory_summary_global_by_event_name WHERE COUNT_ALLOC > 0"
)


class PerfSchemaMemory(Scraper):
    name = "perf_schema_memory"
    catalog_kind = "perf_schema_memory"
    description = "memory per instrument (performance_schema.memory_summary_global_by_event_name)"
    pipelined = True

    def unsupported_reason(self, server):
        if server.flavour == "mariadb" and server.version < (10, 5, 2):
            return "performance_schema memory tables need MariaDB 10.5.2+"
        if server.flavour != "mariadb" and server.version < (5, 7, 0):
            return "performance_schema memory tables need MySQL 5.7+"
        return None

    def statements(self, server):
        return (STATEMENT,)

    def privilege_hint(self, server, statement):
        return "SELECT ON performance_schema.*"

    def collect(self, conn, server, context=None):
        rows = conn.query(STATEMENT).dicts(lowercase=True)
        return SourceResult(series=memory_series(rows))


SCRAPER = PerfSchemaMemory
