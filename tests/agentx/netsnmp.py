"""The tests' view of agents/demo/netsnmp_sandbox.py (private snmpd, Net-SNMP clients, the subagent
process): the same objects, plus a skip when Net-SNMP is missing and a wait that fails the test."""

from __future__ import annotations

from mysql_snmp.agents.demo import netsnmp_sandbox
from mysql_snmp.agents.demo.netsnmp_sandbox import (  # noqa: F401  (re-exported for the test modules)
    COMMUNITY,
    EXCEPTIONS,
    INSTALL_HINT,
    REPO_ROOT,
    Snmpd,
    SnmpVar,
    agent_command,
    missing_net_snmp_tools,
    parse_output,
    start_agent,
    stop_process,
)


def need_net_snmp() -> None:
    import pytest

    missing = missing_net_snmp_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed ({INSTALL_HINT})")


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05, what: str = "condition"):
    """netsnmp_sandbox.wait_until, failing the test (AssertionError) rather than erroring it."""
    try:
        return netsnmp_sandbox.wait_until(predicate, timeout, interval, what)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from None
