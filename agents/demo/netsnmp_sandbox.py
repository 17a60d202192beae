"""A private Net-SNMP snmpd (AgentX master on a Unix socket in a temp dir, UDP on loopback),
thin wrappers around the Net-SNMP command-line clients, and the subagent started against it.

Used by the demo, the tests and the benchmarks, as agents/demo/throwaway.py is for MariaDB: it never
touches the machine's snmpd (own config, socket, port and persistent dir, ``MIBS=:`` so no MIB
file of the machine is read)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .throwaway import free_loopback_port

REPO_ROOT = Path(__file__).resolve().parents[1]
COMMUNITY = "public"
# "OID = TYPE: value" as printed with -On; exceptions have no type.
_LINE = re.compile(r"^(\.[0-9.]+) = (?:([A-Za-z0-9 -]+): )?(.*)$")
EXCEPTIONS = {
    "No Such Object available on this agent at this OID": "noSuchObject",
    "No Such Instance currently exists at this OID": "noSuchInstance",
    "No more variables left in this MIB View (It is past the end of the MIB tree)": "endOfMibView",
}


INSTALL_HINT = "install Debian's snmpd and snmp packages (apt-get install snmpd snmp)"


class NetSnmpError(RuntimeError):
    pass


def net_snmp_tool(name: str) -> str | None:
    """The path of a Net-SNMP program; Debian puts snmpd in /usr/sbin, not on a user's PATH."""
    path = shutil.which(name) or f"/usr/sbin/{name}"
    return path if os.path.exists(path) else None


def missing_net_snmp_tools(*names: str) -> list[str]:
    return [name for name in names or ("snmpd", "snmpget", "snmpbulkwalk") if net_snmp_tool(name) is None]


@dataclass
class SnmpVar:
    oid: str
    type: str  # Counter32, Counter64, Gauge32, INTEGER, STRING, Timeticks ... or an exception name
    value: str

    @property
    def number(self) -> int:
        return int(self.value.split()[0].strip("()"))

    @property
    def text(self) -> str:
        return self.value[1:-1] if self.value.startswith('"') else self.value


def parse_output(text: str) -> list[SnmpVar]:
    out: list[SnmpVar] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            oid, kind, value = match.groups()
            if kind is None:  # an exception, or an empty string printed as ""
                kind = "STRING" if value == '""' else EXCEPTIONS.get(value, value)
            out.append(SnmpVar(oid.lstrip("."), kind, value))
        elif out and line:  # a string value that spans lines
            out[-1].value += "\n" + line
    return out


@dataclass
class Snmpd:
    """``snmpd -f`` with its own config, AgentX socket and persistent dir; restartable."""

    directory: Path
    port: int = 0
    process: subprocess.Popen | None = field(default=None, repr=False)
    extra_config: str = ""  # snmpd.conf lines after the AgentX master and read community ones

    @property
    def agentx_socket(self) -> Path:
        return self.directory / "agentx.sock"

    @property
    def env(self) -> dict:
        persistent = self.directory / "persistent"
        (persistent / "cert_indexes").mkdir(parents=True, exist_ok=True)
        return {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(persistent), "HOME": str(self.directory)}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_loopback_port()
        config = self.directory / "snmpd.conf"
        # agentXTimeout stays at its default (1 s): what a real installation has.
        config.write_text(
            "master agentx\n"
            f"agentXSocket {self.agentx_socket}\n"
            f"rocommunity {COMMUNITY} 127.0.0.1\n"
            + self.extra_config
        )
        self.agentx_socket.unlink(missing_ok=True)
        snmpd = net_snmp_tool("snmpd")
        if snmpd is None:
            raise NetSnmpError(f"snmpd not found; {INSTALL_HINT}")
        log = open(self.directory / "snmpd.log", "ab")
        self.process = subprocess.Popen(
            [snmpd, "-f", "-Lo", "-C", "-m", ":", "-I", "-smux", "-c", str(config), f"udp:{self.address}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env,
        )
        log.close()
        deadline = time.monotonic() + 10
        while not self.agentx_socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise NetSnmpError(f"snmpd did not start: {(self.directory / 'snmpd.log').read_text()[-2000:]}")
            time.sleep(0.01)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
        self.process = None

    # ---------------------------------------------------------------- clients

    def run(self, tool: str, *args: str, version: str = "2c", timeout: float = 2.0, retries: int = 0,
            options: tuple[str, ...] = ("-On",)) -> subprocess.CompletedProcess:
        """``tool`` against this snmpd; ``options`` go before the address (-On: numeric OIDs)."""
        cmd = [tool, f"-v{version}", "-c", COMMUNITY, *options, "-t", str(timeout), "-r", str(retries),
               self.address, *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=120)

    def get(self, *oids: str, version: str = "2c") -> list[SnmpVar]:
        result = self.run("snmpget", *oids, version=version)
        return parse_output(result.stdout)

    def getnext(self, *oids: str) -> list[SnmpVar]:
        return parse_output(self.run("snmpgetnext", *oids).stdout)

    def bulkwalk(self, oid: str, *options: str) -> list[SnmpVar]:
        result = self.run("snmpbulkwalk", *options, oid)
        if result.returncode != 0:
            raise NetSnmpError(f"snmpbulkwalk {oid} failed: {result.stderr.strip()}")
        return parse_output(result.stdout)


def agent_command(snmpd: Snmpd, *options: str) -> list[str]:
    """The real subagent, as a separate process: ``mysql-snmp agentx`` without the other commands."""
    return [sys.executable, "-m", "mysql_snmp.agents.commands.agentx", "--agentx-socket", str(snmpd.agentx_socket), *options]


def stop_process(process: subprocess.Popen, grace: float = 10.0) -> int:
    """SIGTERM (snmpd, snmptrapd and both agents exit cleanly on it), SIGKILL after ``grace``
    seconds, so a stuck child never outlives the demo or the test; the exit status."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def start_agent(snmpd: Snmpd, log_path: Path, *options: str) -> subprocess.Popen:
    log = open(log_path, "ab")
    try:
        return subprocess.Popen(agent_command(snmpd, *options), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"{what} not reached within {timeout} s (last: {last!r})")
