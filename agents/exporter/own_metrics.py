"""The exporter's own process and build metrics, as mysqld_exporter serves them on /metrics.

``process_*`` (CPU, memory, file descriptors, start time) come from prometheus_client's
ProcessCollector; ``mysqld_exporter_build_info`` keeps upstream's name so dashboards
listing exporter versions find this one too, with its own version and Python in place of Go.
"""

from __future__ import annotations

import platform

from prometheus_client import ProcessCollector
from prometheus_client.core import GaugeMetricFamily, Metric

from mysql_snmp.agents.collection import AGENT_VERSION

_PROCESS = ProcessCollector(registry=None)


def build_info() -> Metric:
    family = GaugeMetricFamily(
        "mysqld_exporter_build_info",
        "A metric with a constant '1' value labeled by version, revision, branch, goversion from which "
        "mysqld_exporter was built (here: mysql-snmp, goversion empty, pythonversion set).",
        labels=["version", "revision", "branch", "goversion", "pythonversion", "implementation"])
    family.add_metric([AGENT_VERSION, "", "", "", platform.python_version(), "mysql-snmp"], 1.0)
    return family


def process_families() -> list[Metric]:
    """The exporter process's CPU, memory and descriptors, read now."""
    return list(_PROCESS.collect())
