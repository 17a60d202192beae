"""Both agents against one MariaDB, and what each says about it: the exporter (a process, scraped)
and ``mysql-snmp agentx`` under a private snmpd (read with snmpget).  Plain helpers, no fixtures."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.agentx.agent_process import RunningAgent
from tests.agentx.netsnmp import Snmpd
from tests.faults.exporter_process import ExporterProcess

CATALOG = load_catalog()


def scalar_oid(name: str) -> str:
    return format_oid(CATALOG.by_name(name).snmp.oid) + ".0"


UPTIME_OID = scalar_oid("status_uptime")
UP_OID = scalar_oid("agent_mysql_up")
HEARTBEAT_LAG_OID = scalar_oid("heartbeat_lag_seconds")


@dataclass(frozen=True)
class Reading:
    """What an agent serves at one moment: up, and the server's Uptime (None when absent)."""

    up: bool
    uptime: float | None
    values: int  # how many MySQL values are served besides the agent's own


def exporter_reading(exporter: ExporterProcess) -> Reading:
    result = exporter.scrape(timeout=20)
    assert result.status == 200, result.body[:300]
    scrape = result.parsed()
    up = scrape.value("mysql_up") == 1.0
    uptime = scrape.samples.get("mysql_global_status_uptime", {}).get(())
    values = len(scrape.names("mysql_global_status_")) + len(scrape.names("mysql_global_variables_"))
    return Reading(up, uptime, values)


def agentx_reading(snmpd: Snmpd) -> Reading:
    found = {var.oid: var for var in snmpd.get(UP_OID, UPTIME_OID)}
    up, uptime = found.get(UP_OID), found.get(UPTIME_OID)
    up_value = up is not None and up.type == "Gauge32" and up.number == 1
    # An absent value is an exception (noSuchInstance ...), not a number.
    uptime_value = float(uptime.number) if uptime is not None and uptime.type in NUMBER_TYPES else None
    return Reading(up_value, uptime_value, 1 if uptime_value is not None else 0)


NUMBER_TYPES = ("Counter32", "Counter64", "Gauge32", "INTEGER", "Timeticks")


def wait_for(read: Callable[[], Reading], accept: Callable[[Reading], bool], timeout: float,
             since: float | None = None, interval: float = 0.1) -> tuple[float | None, Reading]:
    """Seconds from ``since`` (default: now) until ``accept(read())``, None if not within
    ``timeout``; and the last reading."""
    started = time.monotonic() if since is None else since
    reading = read()
    while not accept(reading):
        if time.monotonic() - started > timeout:
            return None, reading
        time.sleep(interval)
        reading = read()
    return time.monotonic() - started, reading


def wait_for_both(both: "BothAgents", accept: Callable[[Reading], bool], timeout: float,
                  since: float | None = None) -> tuple[tuple[float | None, Reading], tuple[float | None, Reading]]:
    """wait_for on the exporter and the AgentX agent at the same time: (exporter's, agentx's)."""
    from concurrent.futures import ThreadPoolExecutor

    since = time.monotonic() if since is None else since
    with ThreadPoolExecutor(2) as pool:
        exporter = pool.submit(wait_for, lambda: exporter_reading(both.exporter), accept, timeout, since)
        agentx = pool.submit(wait_for, lambda: agentx_reading(both.snmpd), accept, timeout, since)
        return exporter.result(), agentx.result()


def fresh_after_restart(restarted_for: Callable[[], float]) -> Callable[[Reading], bool]:
    """Up, with an Uptime no larger than the time since the restart: a value of the new server."""
    return lambda r: r.up and r.uptime is not None and r.uptime <= restarted_for() + 1


def down_without_values(reading: Reading) -> bool:
    return not reading.up and reading.uptime is None


@dataclass
class BothAgents:
    server: ThrowawayMariaDB
    exporter: ExporterProcess
    agent: RunningAgent
    snmpd: Snmpd
    refresh: float
    directory: Path
    users: tuple[str, ...]  # the MySQL users of the two agents

    def alive(self) -> bool:
        return self.exporter.process.poll() is None and self.agent.process.poll() is None

    def resources(self) -> dict[str, tuple[int, int]]:
        """(threads, descriptors) of each agent process."""
        import psutil

        agent = psutil.Process(self.agent.process.pid)
        return {"exporter": (self.exporter.threads(), self.exporter.fds()),
                "agentx": (agent.num_threads(), agent.num_fds())}
