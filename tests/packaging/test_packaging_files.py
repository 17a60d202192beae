"""The packaging sources agree with pyproject.toml and the README (no build or install needed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
PACKAGE_VERSION = VERSION.replace(".dev", "~dev")
README = (REPO / "README.md").read_text()
HARDENING = ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
             "Restart=on-failure", "User=mysql-snmp")


def test_readme_shows_the_shipped_snmpd_drop_in():
    block = re.search(r"<!-- snmpd-drop-in -->\n```\n(.*?)```\n", README, re.DOTALL).group(1)
    assert block == (REPO / "packaging/snmpd/mysql-snmp.conf").read_text()
    directives = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert not [line for line in directives if "#" in line], "snmpd reads a trailing # as part of the value"
    assert not [line for line in directives if re.match(r"(ro|rw)(community|user)|com2sec|access", line)]


def test_readme_installs_the_package_scripts_package_builds():
    assert f"sudo apt-get install ./dist/mysql-snmp_{PACKAGE_VERSION}_all.deb" in README


def test_changelog_and_spec_repeat_pyprojects_version():
    if shutil.which("dpkg-parsechangelog") is None:
        pytest.skip("dpkg-dev not installed")
    changelog = subprocess.run(["dpkg-parsechangelog", "-l", str(REPO / "packaging/debian/changelog"), "-S",
                                "Version"], capture_output=True, text=True, check=True).stdout.strip()
    spec = re.search(r"^Version:\s*(\S+)$", (REPO / "packaging/rpm/mysql-snmp.spec").read_text(), re.MULTILINE)
    assert (changelog, spec.group(1)) == (PACKAGE_VERSION, PACKAGE_VERSION)


def test_every_unit_is_hardened_and_keeps_its_own_state():
    units = sorted((REPO / "packaging/systemd").glob("*.service"))
    assert [unit.name for unit in units] == ["mysql-snmp-agentx.service", "mysql-snmp-exporter.service",
                                            "mysql-snmp-exporter@.service"]
    state_dirs = []
    for unit in units:
        lines = unit.read_text().splitlines()
        assert [setting for setting in HARDENING if setting not in lines] == [], unit.name
        state = next(line.split("=", 1)[1] for line in lines if line.startswith("StateDirectory="))
        assert f"%S/{state}/leak-state.json" in next(line for line in lines if line.startswith("ExecStart="))
        state_dirs.append(state)
    assert len(set(state_dirs)) == 3 and "%i" in state_dirs[2]
