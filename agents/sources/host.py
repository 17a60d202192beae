"""The host's load, CPU, memory and swap (psutil), when the monitored mysqld runs here."""

import psutil

from . import LocalScraper, SourceResult, SourceUnavailable
from mysql_snmp.parsers.host import host_values


class Host(LocalScraper):
    name = "host"
    catalog_kind = "host"
    description = "host load, CPU, memory and swap (psutil; only when mysqld is local)"

    def collect(self, conn, server, context=None):
        reason = self.local.host_metrics_wanted()
        if reason:
            raise SourceUnavailable(reason)
        reading = host_values(
            loadavg=psutil.getloadavg(),
            cpu_times=psutil.cpu_times(),
            virtual_memory=psutil.virtual_memory(),
            swap_memory=psutil.swap_memory(),
            boot_time=psutil.boot_time(),
            cpu_count=psutil.cpu_count(),
        )
        return SourceResult(values=reading.values, series=reading.series)


SCRAPER = Host
