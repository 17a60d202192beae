"""The pieces ``mysql-snmp demo`` runs around its throwaway MariaDB: the Prometheus exporter and
the AgentX subagent as child processes, and the small readers that turn their answers into a
short excerpt.  Every process started here is registered on the caller's ExitStack, so it is
stopped when the demo ends, whatever way it ends."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from ..catalog import Catalog, format_oid, load_catalog
from .netsnmp_sandbox import REPO_ROOT, Snmpd, SnmpVar, start_agent, stop_process, wait_until
from .throwaway import ThrowawayMariaDB, free_loopback_port

MIB_DIR = REPO_ROOT / "mibs"
MIB_MODULE = "MYSQL-SERVER-MIB"

# What the exporter excerpt shows: liveness, a few statement counters, InnoDB's memory
# (the data dictionary and the adaptive hash index are what the leak detector watches), and
# the leak detector's verdicts.
EXCERPT = re.compile(
    r"^(mysql_up"
    r"|mysql_global_status_commands_total\{command=\"(select|insert|insert_select|update|delete)\"\}"
    r"|mysql_innodb_mem_\w+"
    r"|mysql_global_status_innodb_mem_\w+"
    r"|mysql_leak_state\{.*\})\s"
)


class DemoError(RuntimeError):
    pass


def tail(path: Path, size: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return ""


def write_root_my_cnf(directory: Path, server: ThrowawayMariaDB) -> Path:
    """The option file both agents read: root over TCP (the throwaway server's root has no password)."""
    my_cnf = directory / "my.cnf"
    my_cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {server.port}\nuser = root\n")
    my_cnf.chmod(0o600)  # the agents warn about an option file others can read
    return my_cnf


@dataclass
class ExporterProcess:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"


def start_exporter(stack: ExitStack, directory: Path, my_cnf: Path) -> ExporterProcess:
    """``mysql-snmp exporter`` on a free loopback port, its leak history in ``directory``."""
    port = free_loopback_port()
    log = directory / "exporter.log"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "mysql_snmp.agents.cli", "exporter", f"--web.listen-address=127.0.0.1:{port}",
             f"--config.my-cnf={my_cnf}", f"--exporter.leak-state-file={directory / 'exporter-leak-state.json'}"],
            cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )
    stack.callback(stop_process, process)
    exporter = ExporterProcess(process, port, log)
    try:
        wait_until(lambda: process.poll() is not None or listening(exporter.url), what="exporter listening")
    except TimeoutError as exc:
        raise DemoError(f"{exc}; its log:\n{tail(log)}") from None
    if process.poll() is not None:
        raise DemoError(f"the exporter exited with {process.returncode}; its log:\n{tail(log)}")
    return exporter


def listening(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.rsplit("/", 1)[0] + "/", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # it answered
    except OSError:
        return False


def scrape(url: str, timeout: float = 30.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode()


def metrics_excerpt(exposition: str) -> tuple[list[str], int]:
    """The excerpt's sample lines, and how many samples the whole exposition holds."""
    samples = [line for line in exposition.splitlines() if line and not line.startswith("#")]
    return [line for line in samples if EXCERPT.match(line)], len(samples)


class OidNames:
    """Catalog names for numeric OIDs: what snmpwalk would print had it the MIB and its imports."""

    def __init__(self, catalog: Catalog) -> None:
        self._names: dict[str, str] = {}
        for metric in catalog:
            snmp = metric.snmp
            if snmp is None:
                continue
            if snmp.legacy is not None:
                self._names[format_oid(snmp.legacy.oid)] = snmp.legacy.name
            if snmp.oid is not None:
                self._names[format_oid(snmp.oid)] = snmp.name
            if snmp.table is not None:
                table = catalog.tables[snmp.table]
                self._names[format_oid((*table.oid, 1, snmp.column))] = snmp.name

    def name(self, oid: str) -> str:
        """``myKeyBufferSize.0``; the numeric OID when no catalog object contains it."""
        parts = oid.strip(".").split(".")
        for cut in range(len(parts), 0, -1):
            name = self._names.get(".".join(parts[:cut]))
            if name:
                return ".".join([name, *parts[cut:]])
        return oid


def scalar_oid(catalog: Catalog, snmp_name: str) -> str:
    """The instance OID (``.0``) of a scalar, legacy or new, by its SNMP name."""
    for metric in catalog:
        snmp = metric.snmp
        if snmp is None:
            continue
        if snmp.legacy is not None and snmp.legacy.name == snmp_name:
            return format_oid(snmp.legacy.oid) + ".0"
        if snmp.name == snmp_name and snmp.oid is not None:
            return format_oid(snmp.oid) + ".0"
    raise KeyError(f"{snmp_name} is not a scalar of the catalog")


def table_rows(catalog: Catalog, table_name: str, walked: list[SnmpVar]) -> dict[str, dict[str, SnmpVar]]:
    """A walked conceptual table as {row index OID suffix: {column name: value}}."""
    table = catalog.tables[table_name]
    columns = {m.snmp.column: m.snmp.name for m in catalog.table_columns(table_name)}
    entry = format_oid((*table.oid, 1)) + "."
    rows: dict[str, dict[str, SnmpVar]] = {}
    for var in walked:
        if not var.oid.startswith(entry):
            continue
        column, _, index = var.oid[len(entry):].partition(".")
        name = columns.get(int(column))
        if name:
            rows.setdefault(index, {})[name] = var
    return rows


def mib_names_resolve(env: dict) -> bool:
    """Whether Net-SNMP can load MYSQL-SERVER-MIB here.  It imports SNMPv2-SMI/-TC/-CONF, which
    Debian does not ship (non-free snmp-mibs-downloader), so on a stock machine it cannot."""
    result = subprocess.run(["snmptranslate", "-M", f"+{MIB_DIR}", "-m", MIB_MODULE, "-IR", "-On",
                             "myKeyBufferSize"], capture_output=True, text=True, env=env, timeout=30)
    return result.returncode == 0 and not result.stderr.strip()


def start_subagent(stack: ExitStack, snmpd: Snmpd, directory: Path, my_cnf: Path) -> subprocess.Popen:
    """``mysql-snmp agentx`` attached to ``snmpd``, refreshing every second, its leak history in
    ``directory``; returns once snmpd serves its myAgentMysqlUp = 1."""
    log = directory / "agentx.log"
    process = start_agent(snmpd, log, "--my-cnf", str(my_cnf), "--refresh", "1",
                          "--leak-state", str(directory / "agentx-leak-state.json"))
    stack.callback(stop_process, process)
    up_oid = scalar_oid(load_catalog(), "myAgentMysqlUp")

    def serving() -> bool:
        values = snmpd.get(up_oid)
        return bool(values) and values[0].type == "Gauge32" and values[0].number == 1

    try:
        wait_until(lambda: process.poll() is not None or serving(), what="the subagent serving MySQL's values")
    except TimeoutError as exc:
        raise DemoError(f"{exc}; its log:\n{tail(log)}") from None
    if process.poll() is not None:
        raise DemoError(f"mysql-snmp agentx exited with {process.returncode}; its log:\n{tail(log)}")
    return process
