"""A trap receiver and a trap-forwarding snmpd for the leak notification tests.

snmpd forwards its subagents' notifications to ``trap2sink``; snmptrapd listens on a
loopback port with authorization disabled and logs each trap (numeric OIDs) to a file.
"""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from mysql_snmp.agents.demo.throwaway import free_loopback_port
from mysql_snmp.agents.demo.netsnmp_sandbox import COMMUNITY, Snmpd, net_snmp_tool, stop_process
from tests.agentx.netsnmp import wait_until

SNMP_TRAP_OID = ".1.3.6.1.6.3.1.1.4.1.0 = OID: "


def binary(name: str) -> str:
    path = net_snmp_tool(name)
    if path is None:
        pytest.fail(f"{name} is not installed (Debian packages snmpd, snmptrapd)")
    return path


@contextmanager
def trap_receiver(directory: Path) -> Iterator[tuple[int, Path]]:
    """snmptrapd on a loopback port; yields (port, log path)."""
    port = free_loopback_port()
    config = directory / "snmptrapd.conf"
    config.write_text("disableAuthorization yes\n")
    log = directory / "traps.log"
    env = {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(directory / "trapd-persistent")}
    with open(log, "wb") as out:
        process = subprocess.Popen([binary("snmptrapd"), "-f", "-Lo", "-C", "-c", str(config), "-On", "-m", ":",
                                    f"udp:127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_until(lambda: "NET-SNMP version" in log.read_text(errors="replace") or process.poll() is not None,
                   what="snmptrapd started")
        assert process.poll() is None, log.read_text()
        yield port, log
    finally:
        stop_process(process)


@dataclass
class TrapForwardingSnmpd(Snmpd):
    """The tests' private snmpd (AgentX master, read community on loopback) that also sends
    its subagents' notifications to ``trap2sink`` (SNMPv2c)."""

    trap_port: int = 0

    def __post_init__(self) -> None:
        self.extra_config += f"trap2sink 127.0.0.1:{self.trap_port} {COMMUNITY}\n"


def traps(log: Path) -> list[str]:
    """The logged traps: snmptrapd -Lo prints a header line, then one line of TAB-separated varbinds."""
    return [line for line in log.read_text(errors="replace").splitlines() if SNMP_TRAP_OID in line]


def traps_of(log: Path, trap_oid: str) -> list[dict[str, str]]:
    """The varbinds (OID -> "TYPE: value") of each logged trap with this snmpTrapOID."""
    return [dict(v.split(" = ", 1) for v in line.split("\t"))
            for line in traps(log) if f"{SNMP_TRAP_OID}.{trap_oid}\t" in line]
