"""leakDetected / leakCleared reach a trap receiver: detector -> AgentX notify -> snmpd -> snmptrapd.

snmpd forwards notifications from its subagents to ``trap2sink``; snmptrapd listens on a
loopback port with authorization disabled and logs each trap (numeric OIDs) to a file.
"""

import os
import shutil
import subprocess

import pytest

from agents.agentx.tableindex import encode_index
from agents.agentx.view import TreeLayout, build_view
from agents.catalog import format_oid, load_catalog
from agents.leak import synthetic
from agents.leak.detector import LeakDetector
from agents.leak.notifications import leak_notification_hook
from agents.snapshot import Snapshot, labels_of
from agents.throwaway import free_loopback_port
from tests.agentx.agent_process import InProcessAgent
from tests.agentx.netsnmp import wait_until

pytestmark = pytest.mark.snmp

SERIES = "innodb_mem_dictionary_bytes"


def _binary(name):
    path = shutil.which(name) or f"/usr/sbin/{name}"
    if not os.path.exists(path):
        pytest.fail(f"{name} is not installed (Debian packages snmpd, snmptrapd)")
    return path


@pytest.fixture
def trap_receiver(tmp_path):
    """snmptrapd on a loopback port; yields (port, log path)."""
    port = free_loopback_port()
    config = tmp_path / "snmptrapd.conf"
    config.write_text("disableAuthorization yes\n")
    log = tmp_path / "traps.log"
    env = {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(tmp_path / "trapd-persistent")}
    with open(log, "wb") as out:
        process = subprocess.Popen([_binary("snmptrapd"), "-f", "-Lo", "-C", "-c", str(config), "-On", "-m", ":",
                                    f"udp:127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_until(lambda: "NET-SNMP version" in log.read_text(errors="replace") or process.poll() is not None,
                   what="snmptrapd started")
        assert process.poll() is None, log.read_text()
        yield port, log
    finally:
        process.terminate()
        process.wait(timeout=10)


class TrapForwardingSnmpd:
    """snmpd as AgentX master whose notifications go to trap2sink (SNMPv2c)."""

    def __init__(self, directory, trap_port):
        directory.mkdir(parents=True, exist_ok=True)
        self.agentx_socket = directory / "agentx.sock"
        config = directory / "snmpd.conf"
        config.write_text(f"master agentx\nagentXSocket {self.agentx_socket}\n"
                          f"trap2sink 127.0.0.1:{trap_port} public\n")
        env = {**os.environ, "MIBS": ":", "SNMP_PERSISTENT_DIR": str(directory / "persistent")}
        with open(directory / "snmpd.log", "wb") as out:
            self.process = subprocess.Popen(
                [_binary("snmpd"), "-f", "-Lo", "-C", "-m", ":", "-I", "-smux", "-c", str(config),
                 f"udp:127.0.0.1:{free_loopback_port()}"], stdout=out, stderr=subprocess.STDOUT, env=env)
        wait_until(lambda: self.agentx_socket.exists(), what="snmpd AgentX socket")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


SNMP_TRAP_OID = ".1.3.6.1.6.3.1.1.4.1.0 = OID: "


def traps(log):
    """The logged traps: snmptrapd -Lo prints a header line, then one line of TAB-separated varbinds."""
    return [line for line in log.read_text(errors="replace").splitlines() if SNMP_TRAP_OID in line]


def test_leak_detected_and_cleared_reach_snmptrapd(tmp_path, trap_receiver):
    trap_port, trap_log = trap_receiver
    catalog = load_catalog()
    snmpd = TrapForwardingSnmpd(tmp_path / "snmpd", trap_port)
    layout = TreeLayout.from_catalog(catalog)
    detector = LeakDetector({"state_file": None, "series": [{"name": SERIES}]})
    current = {"view": build_view(layout, Snapshot("db1", 0.0, False))}
    try:
        with InProcessAgent(snmpd, current["view"], [catalog.new_root],
                            view_provider=lambda: current["view"]) as agent:
            hook = leak_notification_hook(detector, agent.session, catalog)
            trace = synthetic.dictionary_leak(days=0.25, onset=4 * synthetic.HOUR)
            drop_at = trace.onset + 1.5 * synthetic.HOUR
            for t, value, _ in trace.rows():
                if t >= drop_at:
                    value -= (t - trace.onset) * trace.rate_bytes_per_hour / 3600  # memory given back
                snapshot = Snapshot("db1", t, True, values={SERIES: value})
                hook(snapshot)
                current["view"] = build_view(layout, snapshot)
                if any(e.new_name == "ok" and e.old_name == "leaking" for e in detector.changes):
                    break
            detected_oid = next(n["oid"] for n in catalog.extra["notifications"] if n["name"] == "leakDetected")
            cleared_oid = next(n["oid"] for n in catalog.extra["notifications"] if n["name"] == "leakCleared")
            wait_until(lambda: any(f".{cleared_oid}" in b for b in traps(trap_log)), what="leakCleared trap")
    finally:
        snmpd.stop()

    received = traps(trap_log)
    detected = [b for b in received if f"{SNMP_TRAP_OID}.{detected_oid}\t" in b]
    cleared = [b for b in received if f"{SNMP_TRAP_OID}.{cleared_oid}\t" in b]
    assert len(detected) == 1 and len(cleared) == 1, received
    table = catalog.tables["myLeakTable"]
    state_column = format_oid(table.oid + (1, catalog.by_name("leak_state").snmp.column))
    name_column = format_oid(table.oid + (1, catalog.by_name("leak_series_name").snmp.column))
    reason_column = format_oid(table.oid + (1, catalog.by_name("leak_reason_code").snmp.column))
    rate_column = format_oid(table.oid + (1, catalog.by_name("leak_growth_bytes_per_hour").snmp.column))
    index = "." + format_oid(encode_index(table.index, labels_of(series=SERIES)))
    for trap, state in ((detected[0], 2), (cleared[0], 0)):
        varbinds = dict(v.split(" = ", 1) for v in trap.split("\t"))
        assert varbinds[f".{name_column}{index}"] == f'STRING: "{SERIES}"'
        assert varbinds[f".{state_column}{index}"] == f"INTEGER: {state}"
        assert varbinds[f".{reason_column}{index}"] == f"INTEGER: {2 if state else 0}"  # unexplained / none
    rate = int(dict(v.split(" = ", 1) for v in detected[0].split("\t"))[f".{rate_column}{index}"].split(": ")[1])
    assert 0.5 < rate / trace.rate_bytes_per_hour < 1.5
