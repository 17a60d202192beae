"""Generated alert rules and OpenNMS files: committed, valid, and their unit tests pass."""

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.generate import alert_rules, opennms

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.mark.parametrize("module", [alert_rules, opennms])
def test_committed_files_match_the_catalog(catalog, module):
    for path, content in module.outputs(catalog).items():
        assert (REPO / path).read_text() == content, f"{path} is stale: run mysql-snmp generate"


def _promtool():
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is not installed (Debian package prometheus)")
    return promtool


def test_promtool_checks_the_rules():
    result = subprocess.run([_promtool(), "check", "rules", str(REPO / alert_rules.RULES_PATH)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    document = alert_rules.rules_document(load_catalog())
    count = sum(len(group["rules"]) for group in document["groups"])
    assert f"SUCCESS: {count} rules found" in result.stdout
    alerts = {rule["alert"] for group in document["groups"] for rule in group["rules"]}
    assert {"MySQLMemoryLeakSuspected", "MySQLMemoryLeakDetected"} <= alerts


def test_promtool_unit_tests_pass_leak_steady_and_warmup():
    tests = REPO / alert_rules.TESTS_PATH
    result = subprocess.run([_promtool(), "test", "rules", str(tests)], capture_output=True, text=True,
                            timeout=300, cwd=tests.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
    names = [t["name"] for t in alert_rules.tests_document(load_catalog())["tests"]]
    for rule in alert_rules.GAUGE_RULES:
        for case in ("a leak", "a steady server", "a warm-up after a restart"):
            assert f"{rule.alert}: {case}" in names


def test_thresholds_validate_against_the_opennms_schema():
    schema = SHARED / "schemas" / "opennms" / "thresholding.xsd"
    if not schema.exists():
        pytest.skip("../shared absent: no OpenNMS thresholding.xsd to validate against")
    result = subprocess.run(["xmllint", "--noout", "--schema", str(schema), str(REPO / opennms.THRESHOLDS_PATH)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "validates" in result.stderr


def test_events_mask_on_the_trap_oids_and_clear_detected_with_cleared(catalog):
    ns = {"e": "http://xmlns.opennms.org/xsd/eventconf"}
    root = ET.parse(REPO / opennms.EVENTS_PATH).getroot()
    events = {e.findtext("e:uei", namespaces=ns): e for e in root.findall("e:event", ns)}
    notifications = {n["name"]: n for n in catalog.extra["notifications"]}
    assert set(events) == {f"uei.opennms.org/mysql-snmp/{name}" for name in notifications}
    for name, notification in notifications.items():
        event = events[f"uei.opennms.org/mysql-snmp/{name}"]
        mask = {m.findtext("e:mename", namespaces=ns): m.findtext("e:mevalue", namespaces=ns)
                for m in event.findall("e:mask/e:maskelement", ns)}
        oid = notification["oid"].split(".")
        assert oid[-2] == "0"  # SNMPv2 notifications under <prefix>.0
        assert mask == {"id": "." + ".".join(oid[:-2]), "generic": "6", "specific": oid[-1]}
    detected = events["uei.opennms.org/mysql-snmp/leakDetected"]
    cleared = events["uei.opennms.org/mysql-snmp/leakCleared"]
    assert detected.findtext("e:severity", namespaces=ns) == "Major"
    assert cleared.findtext("e:severity", namespaces=ns) == "Normal"
    assert cleared.find("e:alarm-data", ns).get("clear-key") == detected.find("e:alarm-data", ns).get("reduction-key")


def test_trap_mask_follows_rfc3584():
    assert opennms.trap_mask((1, 3, 6, 1, 4, 1, 20267, 200, 2, 0, 1)) == (".1.3.6.1.4.1.20267.200.2", 1)
    assert opennms.trap_mask((1, 3, 6, 1, 4, 1, 99, 7)) == (".1.3.6.1.4.1.99", 7)
