"""The SNMP side is read-only: a real snmpset, allowed by snmpd's access control (a read-write
community), reaches the subagent and is refused as notWritable; the value does not change."""

from __future__ import annotations

import subprocess

from mysql_snmp.agents.catalog import format_oid, load_catalog
from tests.agentx.agent_process import run_agent, stop_agent
from tests.agentx.netsnmp import Snmpd, need_net_snmp

_CATALOG = load_catalog()
KEY_BUFFER_SIZE = format_oid(_CATALOG.legacy_root) + ".148.0"  # myKeyBufferSize, an original object
LAST_ERROR = format_oid(_CATALOG.by_name("agent_last_error").snmp.oid) + ".0"
WRITE_COMMUNITY = "private-rw"


def snmpset(snmpd: Snmpd, *assignments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["snmpset", "-v2c", "-c", WRITE_COMMUNITY, "-On", "-t", "2", "-r", "0", snmpd.address,
                           *assignments], capture_output=True, text=True, env=snmpd.env, timeout=60)


def test_snmpset_gets_not_writable(mariadb, tmp_path):
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd", extra_config=f"rwcommunity {WRITE_COMMUNITY} 127.0.0.1\n")
    snmpd.start()
    agent = run_agent(snmpd, mariadb, tmp_path)
    try:
        (before,) = snmpd.get(KEY_BUFFER_SIZE)
        for assignment in ((KEY_BUFFER_SIZE, "u", "1"), (LAST_ERROR, "s", "written")):
            result = snmpset(snmpd, *assignment)
            assert result.returncode != 0
            assert "notWritable" in result.stderr, (result.stdout, result.stderr)
        (after,) = snmpd.get(KEY_BUFFER_SIZE)
        assert after.number == before.number != 1
        assert agent.process.poll() is None
    finally:
        stop_agent(agent)
        snmpd.stop()
    assert "Traceback" not in agent.log_text()
