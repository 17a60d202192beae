"""``mysql-snmp agentx`` wiring: the leak detector's flags, hook and history (no snmpd needed;
the real process against MariaDB and snmpd: tests/leak/test_leak_agentx_e2e.py)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mysql_snmp.agents.agentx.tableindex import encode_index
from mysql_snmp.agents.agentx.view import build_view
from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.commands import agentx
from mysql_snmp.agents.config.settings import ConfigError
from mysql_snmp.agents.snapshot import Snapshot, labels_of

REPO_ROOT = Path(__file__).resolve().parents[2]
SERIES = "innodb_mem_dictionary_bytes"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    agentx.register(parser.add_subparsers())
    # Port 1 on loopback: building the agent never connects, so no server is needed.
    return parser.parse_args(["agentx", "--host", "127.0.0.1", "--port", "1", *argv])


def test_help_documents_the_leak_flags():
    result = subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "agentx", "--help"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for flag in ("--leak-config FILE", "--leak-state FILE", "--no-leak", "leakDetected"):
        assert flag in result.stdout


def test_leak_hook_fills_the_served_leak_table_and_close_saves_history(tmp_path):
    agent = agentx.build_agent(parse("--leak-state", str(tmp_path / "state.json")))
    try:
        assert agent.leak_detector.state_path == tmp_path / "state.json"
        assert [s.name for s in agent.leak_detector.config.series][0] == SERIES
        (hook,) = agent.refresher.hooks
        hook(Snapshot("127.0.0.1:1", 1_700_000_000.0, True, values={SERIES: 2_500_000}))  # saved at once
        snapshot = Snapshot("127.0.0.1:1", 1_700_000_015.0, True, values={SERIES: 2_500_000})
        hook(snapshot)  # within save_every_seconds: only close() saves it
        view = build_view(agent.refresher.layout, snapshot)
    finally:
        agent.close()
    catalog = load_catalog()
    table = catalog.tables["myLeakTable"]
    index = encode_index(table, labels_of(series=SERIES))
    state = view.get(table.oid + (1, catalog.by_name("leak_state").snmp.column) + index)
    name = view.get(table.oid + (1, catalog.by_name("leak_series_name").snmp.column) + index)
    assert (state.value, name.value) == (0, SERIES.encode())
    saved = json.loads((tmp_path / "state.json").read_text())
    assert saved["series"][SERIES]["history"]["last_time"] == 1_700_000_015.0


def test_no_leak_runs_no_detector():
    agent = agentx.build_agent(parse("--no-leak"))
    try:
        assert agent.leak_detector is None
        assert agent.refresher.hooks == []
    finally:
        agent.close()


def test_bad_leak_config_exits_2_naming_the_file(tmp_path, capsys):
    config = tmp_path / "leak.yml"
    config.write_text("leak:\n  windows_seconds: []\n")
    assert agentx.run(parse("--leak-config", str(config))) == 2
    assert f"mysql-snmp agentx: {config}: leak.windows_seconds: needs at least one window" in capsys.readouterr().err


def test_list_sources_prints_the_sources_and_exits_without_serving():
    # Before the fix the agent started serving instead (and the run hit the timeout).
    result = subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "agentx", "--list-sources",
                             "--agentx-socket", "tcp:127.0.0.1:1"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    from mysql_snmp.agents.sources import scraper_classes

    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == list(scraper_classes())


@pytest.mark.parametrize("flag, value", [
    ("--refresh", "0"), ("--refresh", "nan"), ("--refresh", "inf"),  # inf: one collection, then stale for ever
    ("--ping-interval", "0"), ("--ping-interval", "-5"),  # 0: a Ping storm on the master
    ("--timeout", "-1"), ("--timeout", "nan"),  # every source past its deadline: nothing collected
    ("--stale-grace", "0"), ("--stale-grace", "inf"),  # 0: a healthy collection flaps; inf: never withdrawn
])
def test_durations_must_be_positive_and_finite(flag, value):
    # build_agent, not run: before the check, run would start serving with the bad value.
    with pytest.raises(ConfigError) as refused:
        agentx.build_agent(parse("--no-leak", flag, value)).close()
    assert str(refused.value) == f"{flag} must be a positive number of seconds, not {value}"
