"""SHOW GLOBAL STATUS: every server counter and gauge, name as printed -> typed value."""

from agents.sources import NameValueScraper


class GlobalStatus(NameValueScraper):
    name = "global_status"
    catalog_kind = "global_status"
    description = "server counters and gauges (SHOW GLOBAL STATUS)"
    statement = "SHOW GLOBAL STATUS"


SCRAPER = GlobalStatus
