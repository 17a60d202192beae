"""information_schema.INNODB_METRICS: the enabled InnoDB counters (MySQL 5.6+, MariaDB 10.0+)."""

from ..snapshot import labels_of
from . import Scraper, SourceResult


def metrics_statement(server) -> str:
    # MySQL flags enabled counters in STATUS ('enabled'); MariaDB in ENABLED (1).
    condition = "ENABLED = 1" if server.flavour == "mariadb" else "STATUS = 'enabled'"
    return f"SELECT NAME, SUBSYSTEM, TYPE, COMMENT, COUNT FROM information_schema.INNODB_METRICS WHERE {condition}"


class InnodbMetrics(Scraper):
    name = "innodb_metrics"
    catalog_kind = "innodb_metrics"
    description = "enabled InnoDB counters (information_schema.INNODB_METRICS)"
    pipelined = True

    def unsupported_reason(self, server):
        if server.flavour != "mariadb" and server.version < (5, 6, 0):
            return "information_schema.INNODB_METRICS needs MySQL 5.6+"
        return None

    def statements(self, server):
        return (metrics_statement(server),)

    def collect(self, conn, server, context=None):
        rows = conn.query(metrics_statement(server)).dicts(lowercase=True)
        result = SourceResult(raw={"innodb_metrics": rows})
        counts = result.series.setdefault("count", {})
        for row in rows:
            counts[labels_of(name=row["name"], subsystem=row["subsystem"])] = row["count"]
        return result


SCRAPER = InnodbMetrics
