"""What the fault tests share: a MariaDB of the fault's own (a frozen or stripped server must not
disturb the other tests), SNMP reads of the agent's liveness objects, exporter scrapes with a
scrape timeout, and timing until a condition holds."""

from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.exporter.exporter_harness import RunningExporter, Scrape

_CATALOG = load_catalog()
UPTIME_OID = format_oid(_CATALOG.by_name("status_uptime").snmp.oid) + ".0"
AGE_OID = format_oid(_CATALOG.by_name("agent_data_age_seconds").snmp.oid) + ".0"
UP_OID = format_oid(_CATALOG.by_name("agent_mysql_up").snmp.oid) + ".0"
# myThreadsConnected: an original object, always present while MySQL answers.
LEGACY_OID = format_oid(_CATALOG.legacy_root) + ".55.0"
INNODB_TIMESTAMP_OID = format_oid(_CATALOG.by_name("innodb_monitor_timestamp_seconds").snmp.oid) + ".0"


@contextmanager
def own_mariadb(server_id: int, extra_args: tuple[str, ...] = ()) -> Iterator[ThrowawayMariaDB]:
    server = ThrowawayMariaDB(server_id=server_id, extra_args=extra_args)
    server.start()
    try:
        yield server
    finally:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)  # never leave a stopped process behind
        server.stop(remove=True)


@contextmanager
def frozen(server: ThrowawayMariaDB) -> Iterator[float]:
    """mysqld stopped with SIGSTOP (it keeps its sockets: connections hang, they are not refused)."""
    os.kill(server.pid, signal.SIGSTOP)
    try:
        yield time.monotonic()
    finally:
        os.kill(server.pid, signal.SIGCONT)


def seconds_until(predicate: Callable[[], object], timeout: float, interval: float = 0.1,
                  what: str = "condition") -> float:
    """Seconds until ``predicate()`` is true (AssertionError after ``timeout``)."""
    started = time.monotonic()
    last = None
    while time.monotonic() - started < timeout:
        last = predicate()
        if last:
            return time.monotonic() - started
        time.sleep(interval)
    raise AssertionError(f"{what} not reached within {timeout}s (last: {last!r})")


class SnmpLiveness:
    """What a manager reads about liveness from the agent, through snmpd."""

    def __init__(self, snmpd):
        self.snmpd = snmpd

    def read(self, *extra: str) -> dict[str, object]:
        oids = (UP_OID, AGE_OID, LEGACY_OID, UPTIME_OID, *extra)
        found = {var.oid: var for var in self.snmpd.get(*oids)}
        values: dict[str, object] = {}
        for name, oid in zip(("up", "age", "legacy", "uptime", *extra), oids):
            var = found.get(oid)
            values[name] = var.number if var is not None and var.type not in (
                "noSuchInstance", "noSuchObject", "endOfMibView") else None
        return values

    def fresh(self, refresh: float) -> dict | None:
        """The reading when it is up with values at most one refresh old (else None)."""
        values = self.read()
        if values["up"] == 1 and values["legacy"] is not None and values["age"] is not None \
                and values["age"] <= refresh + 1:
            return values
        return None


def scrape(exporter: RunningExporter, timeout_seconds: float) -> Scrape:
    """A scrape as Prometheus sends it, with its scrape timeout header."""
    return exporter.scrape(headers={"X-Prometheus-Scrape-Timeout-Seconds": str(timeout_seconds)})


def mysql_value(result: Scrape, name: str, **labels: str) -> float | None:
    series = result.samples.get(name, {})
    return series.get(tuple(sorted(labels.items())))


def kill_connections(server: ThrowawayMariaDB, user: str) -> int:
    """KILL every connection of ``user`` (as a server restart behind a proxy or an admin would)."""
    ids = [row[0] for row in server.execute(f"SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '{user}'")]
    for thread_id in ids:
        try:
            server.execute(f"KILL CONNECTION {int(thread_id)}")
        except Exception:  # already gone
            pass
    return len(ids)
