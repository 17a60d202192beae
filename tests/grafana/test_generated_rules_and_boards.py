"""The generated server rules and dashboards: promtool accepts and tests the rules, boards keep their contract."""

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.cli import main
from mysql_snmp.agents.generate import dashboards, server_rules
from mysql_snmp.agents.generate.dashboard_boards import boards

REPO = Path(__file__).resolve().parents[2]
RULE_FILES = ("grafana/rules/mysql.rules.yml", "grafana/rules/mysql-leak.rules.yml")


def _promtool() -> str:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed (Debian package prometheus)")
    return promtool


@pytest.mark.parametrize("path", RULE_FILES)
def test_promtool_checks_every_rule_file(path):
    result = subprocess.run([_promtool(), "check", "rules", str(REPO / path)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_unit_tests_pass_and_cover_a_firing_and_a_quiet_case_per_alert():
    tests = REPO / server_rules.TESTS_PATH
    result = subprocess.run([_promtool(), "test", "rules", str(tests)], capture_output=True, text=True,
                            timeout=300, cwd=tests.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    document = yaml.safe_load(tests.read_text())
    alerts = [r["alert"] for g in yaml.safe_load((REPO / server_rules.RULES_PATH).read_text())["groups"]
              for r in g["rules"] if "alert" in r]
    assert len(alerts) == 13
    for alert in alerts:
        cases = [t for t in document["tests"] if t["alert_rule_test"][0]["alertname"] == alert]
        fired = [bool(t["alert_rule_test"][0]["exp_alerts"]) for t in cases]
        assert sorted(fired) == [False, True], alert


@pytest.mark.parametrize("overrides", [
    ["replication_lag_seconds=60", "heartbeat_lag_seconds=5", "connections_used_ratio=0.5",
     "aborted_connects_per_second=0.05", "history_list_length=10000", "checkpoint_age_ratio=0.5",
     "log_waits_per_second=0.01", "deadlocks_per_minute=0.5", "restarted_within_seconds=3600"],
    ["replication_lag_seconds=7200", "heartbeat_lag_seconds=3600", "connections_used_ratio=0.98",
     "aborted_connects_per_second=50", "history_list_length=50000000", "checkpoint_age_ratio=0.97",
     "log_waits_per_second=20", "deadlocks_per_minute=100", "restarted_within_seconds=300",
     "replication_thread_for=10m", "lag_for=30m", "collector_failing_for=15m", "down_for=5m"],
])
def test_other_thresholds_fire_and_stay_quiet_where_they_should(tmp_path, overrides):
    """The promtool cases follow the thresholds, so the rules are tested at more than the defaults."""
    thresholds = server_rules.parse_overrides(overrides)
    catalog = load_catalog()
    (tmp_path / "mysql.rules.yml").write_text(server_rules.render(server_rules.rules_document(catalog, thresholds)))
    tests = tmp_path / "mysql.rules.test.yml"
    tests.write_text(server_rules.render(server_rules.tests_document(catalog, thresholds)))
    result = subprocess.run([_promtool(), "test", "rules", str(tests)], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_summary_description_and_severity():
    for path in RULE_FILES:
        for group in yaml.safe_load((REPO / path).read_text())["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    assert rule["labels"]["severity"] in {"info", "warning", "critical"}, rule["alert"]
                    assert rule["annotations"]["summary"] and rule["annotations"]["description"], rule["alert"]


def test_thresholds_change_the_rules_and_bad_ones_are_one_line(capsys):
    assert main(["rules", "--set", "replication_lag_seconds=900", "--set", "connections_used_ratio=0.95"]) == 0
    rules = yaml.safe_load(capsys.readouterr().out)
    exprs = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    assert exprs["MySQLReplicationLag"].endswith("> 900")
    assert exprs["MySQLConnectionsNearLimit"].endswith("> 0.95")
    assert main(["rules", "--set", "history_list_length=lots"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "history_list_length takes a whole number" in err
    assert main(["rules", "--set", "replication_lag_secs=60"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mysql-snmp rules: 'replication_lag_secs=60': expected NAME=VALUE")
    assert err.endswith(", collector_failing_for (did you mean replication_lag_seconds?)\n")


@pytest.mark.parametrize("pair, problem", [
    ("down_for=banana", "down_for takes a Prometheus duration such as 90s, 5m or 1h30m"),
    ("lag_for=5m5m", "lag_for takes a Prometheus duration such as 90s, 5m or 1h30m"),
    ("collector_failing_for=", "collector_failing_for takes a Prometheus duration such as 90s, 5m or 1h30m"),
    ("connections_used_ratio=nan", "connections_used_ratio takes a number of 0 or more"),
    ("replication_lag_seconds=-5", "replication_lag_seconds takes a whole number of 0 or more"),
    ("exporter_jobs=mysql(", "exporter_jobs takes a regular expression (missing ), unterminated subpattern"),
    ("exporter_jobs=mysql|db\"x", 'exporter_jobs takes a regular expression without " or \\'),
])
def test_a_threshold_promtool_would_reject_is_refused_in_one_line(capsys, pair, problem):
    """Before, these printed rules promtool rejects (or a traceback for nan), with exit status 0."""
    assert main(["rules", "--set", pair]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"mysql-snmp rules: {pair!r}: {problem}")


def test_thresholds_in_every_accepted_form_pass_promtool(tmp_path, capsys):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian package prometheus)")
    assert main(["rules", "--set", "down_for=1h30m", "--set", "lag_for=90s", "--set", "replication_thread_for=1d",
                 "--set", "exporter_jobs=mysql|mariadb-.*", "--set", "history_list_length=0"]) == 0
    path = tmp_path / "mysql.rules.yml"
    path.write_text(capsys.readouterr().out)
    checked = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_readme_documents_every_threshold_with_its_default():
    readme = (REPO / "README.md").read_text()
    for field in dataclasses.fields(server_rules.Thresholds):
        assert f"| `{field.name}` | `{getattr(server_rules.Thresholds(), field.name)}` |" in readme, field.name


def test_recording_rules_cover_every_rate_the_boards_take():
    document = server_rules.rules_document(load_catalog())
    recorded = {r["expr"] for g in document["groups"] for r in g["rules"] if "record" in r}
    for board in boards(load_catalog()):
        for panel in board.panels:
            for query in panel.queries:
                for metric in re.findall(r"rate\((\w+)\{", query.expr):
                    assert f"rate({metric}[5m])" in recorded


@pytest.mark.parametrize("path", sorted(dashboards.outputs(load_catalog())))
def test_board_contract(path):
    board = json.loads((REPO / path).read_text())
    assert board["uid"].startswith("mysql-snmp-")
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert set(variables) == {"datasource", "job", "instance"}
    assert variables["datasource"]["query"] == "prometheus"
    assert [panel["id"] for panel in board["panels"]] == list(range(1, len(board["panels"]) + 1))
    for panel in board["panels"]:
        assert panel["description"], panel["title"]
        assert panel["fieldConfig"]["defaults"]["unit"], panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}"
        for target in panel["targets"]:
            expr = target["expr"]
            assert 'job=~"$job"' in expr and 'instance=~"$instance"' in expr, expr
            assert "[5m]" not in expr and all(r == "$__rate_interval" for r in re.findall(r"\[([^\]]+)\]", expr))
        if panel["type"] == "stat" and panel["fieldConfig"]["defaults"].get("mappings"):
            assert panel["fieldConfig"]["defaults"]["unit"] == "none"
