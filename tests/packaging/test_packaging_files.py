"""The packaging sources agree with pyproject.toml and the README (no build or install needed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
PACKAGE_VERSION = VERSION.replace(".dev", "~dev")
README = (REPO / "README.md").read_text()
HARDENING = ("NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
             "CapabilityBoundingSet=", "SystemCallFilter=@system-service", "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
             "Restart=on-failure", "RestartPreventExitStatus=2", "User=mysql-snmp")
UNITS = ("mysql-snmp-agentx.service", "mysql-snmp-exporter.service", "mysql-snmp-exporter@.service",
         "mysql-snmp.service")


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


def unit_settings(unit: str) -> list[str]:
    return [line for line in (REPO / "packaging/systemd" / unit).read_text().splitlines()
            if line and not line.startswith("#")]


def test_every_unit_is_hardened_and_keeps_its_own_state():
    assert sorted(path.name for path in (REPO / "packaging/systemd").glob("*.service")) == sorted(UNITS)
    state_dirs = {}
    for unit in UNITS:
        lines = unit_settings(unit)
        assert [setting for setting in HARDENING if setting not in lines] == [], unit
        state = next(line.split("=", 1)[1] for line in lines if line.startswith("StateDirectory="))
        assert f"%S/{state}/leak-state.json" in next(line for line in lines if line.startswith("ExecStart="))
        state_dirs[unit] = state
    # The Perl mysql-snmp's unit is the subagent under its old name: the same history, never both.
    assert state_dirs["mysql-snmp.service"] == state_dirs["mysql-snmp-agentx.service"]
    assert "Conflicts=mysql-snmp-agentx.service" in unit_settings("mysql-snmp.service")
    assert len(set(state_dirs.values())) == 3 and "%i" in state_dirs["mysql-snmp-exporter@.service"]


def test_credentials_stay_roots_and_reach_the_units_through_systemd():
    """LoadCredential=: a root 0600 file works; the service user reads only systemd's copy (%d)."""
    for unit, source in (("mysql-snmp-agentx.service", "/etc/mysql-snmp/my.cnf"),
                         ("mysql-snmp-exporter.service", "/etc/mysql-snmp/my.cnf"),
                         ("mysql-snmp-exporter@.service", "/etc/mysql-snmp/%i.my.cnf")):
        lines = unit_settings(unit)
        assert f"LoadCredential=my.cnf:{source}" in lines, unit
        exec_start = next(line for line in lines if line.startswith("ExecStart="))
        assert " %d/my.cnf " in exec_start and "/etc/mysql-snmp/my.cnf" not in exec_start, unit
    perl = unit_settings("mysql-snmp.service")
    assert "LoadCredential=perl-config:/etc/snmp/my.cnf" in perl
    assert "Environment=MYSQL_SNMP_PERL_CONFIG=/etc/snmp/my.cnf" in perl
    # A site without /etc/snmp/my.cnf still starts: SetCredential= stands in for a missing file.
    assert any(line.startswith("SetCredential=perl-config:") for line in perl)
    assert 'install -m 0600 "$src/packaging/etc/my.cnf"' in (REPO / "packaging/install-data").read_text()
    assert "%attr(0600,root,root) %config(noreplace) %{_sysconfdir}/mysql-snmp/my.cnf" in (
        REPO / "packaging/rpm/mysql-snmp.spec").read_text()


def test_only_the_subagent_holds_the_agentx_socket_group():
    for unit in UNITS:
        groups = [line for line in unit_settings(unit) if line.startswith("SupplementaryGroups=")]
        subagent = unit in ("mysql-snmp-agentx.service", "mysql-snmp.service")
        assert groups == (["SupplementaryGroups=mysql-snmp-agentx"] if subagent else []), unit
    drop_in = (REPO / "packaging/snmpd/mysql-snmp.conf").read_text()
    assert re.search(r"^agentXPerms\s+0660 0755 \S+ mysql-snmp-agentx$", drop_in, re.MULTILINE)
    postinst = (REPO / "packaging/debian/postinst").read_text()
    assert "adduser --quiet mysql-snmp Debian-snmp" not in postinst
    assert "deluser --quiet mysql-snmp Debian-snmp" in postinst  # undone on upgrade from 2.0.0~dev0


def exposure(unit_file: Path) -> float:
    result = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(unit_file)],
                            capture_output=True, text=True, timeout=60)
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert found, result.stdout[-500:] + result.stderr
    return float(found.group(1))


def test_systemd_analyze_security_rates_every_unit_below_5(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze not installed")
    if "--offline" not in subprocess.run(["systemd-analyze", "--help"], capture_output=True, text=True).stdout:
        pytest.skip("systemd-analyze has no --offline (systemd < 250)")
    scores = {}
    for unit in UNITS:
        target = tmp_path / unit.replace("@.", "@db1.")  # a template is rated as an instance
        shutil.copy(REPO / "packaging/systemd" / unit, target)
        scores[unit] = exposure(target)
    assert all(score < 5 for score in scores.values()), scores
    # The control: the protections 2.0.0~dev0's units had rate 7.2.
    bare = tmp_path / "bare.service"
    bare.write_text("[Service]\nExecStart=/usr/bin/mysql-snmp agentx\nUser=mysql-snmp\nNoNewPrivileges=yes\n"
                    "ProtectSystem=strict\nProtectHome=yes\nPrivateTmp=yes\nPrivateDevices=yes\n"
                    "ProtectKernelTunables=yes\nProtectKernelModules=yes\nProtectControlGroups=yes\n")
    assert exposure(bare) > 7


def test_the_shipped_leak_settings_uncommented_are_the_defaults():
    from mysql_snmp.agents.leak.config import DEFAULT_SERIES, load_leak_config

    text = (REPO / "packaging/etc/leak.yml").read_text()
    uncommented = "\n".join(line[2:] for line in text.splitlines() if line.startswith(("#   ", "# leak:")))
    shipped = load_leak_config(yaml.safe_load(uncommented)["leak"])
    assert shipped == load_leak_config(None)
    assert [series.name for series in shipped.series] == [raw["name"] for raw in DEFAULT_SERIES]
    dictionary = next(series for series in shipped.series if series.name == "innodb_mem_dictionary_bytes")
    assert dictionary.min_rate_bytes_per_hour == 256 * 1024  # the README's 256 KiB/h


def test_both_packages_depend_on_the_distributions_builds_of_every_run_time_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[A-Za-z0-9_.-]+", requirement).group().lower() for requirement in project["dependencies"]}
    assert names == {"pymysql", "psutil", "pyyaml"}
    control = (REPO / "packaging/debian/control").read_text()
    spec = (REPO / "packaging/rpm/mysql-snmp.spec").read_text()
    depends = re.search(r"^Depends:(.*?)^\S", control, re.MULTILINE | re.DOTALL).group(1)
    for debian, fedora in (("python3-pymysql", "PyMySQL"), ("python3-psutil", "psutil"), ("python3-yaml", "pyyaml")):
        assert debian in depends, debian
        assert f"Requires:       python%{{python3_pkgversion}}-{fedora} >=" in spec, fedora
    # Nothing pins the interpreter: each distribution's python3 (EL 9: python3.12).
    assert "python3 (<<" not in control and "python3 < " not in spec
    assert "X-Python3-Version: >= 3.11" in control


def test_man_pages_cover_every_command_and_option(tmp_path):
    from mysql_snmp.agents.cli import build_parser, commands_of
    from mysql_snmp.agents.commands.manpages import main as write_pages

    assert write_pages([str(tmp_path)]) == 0
    top = [parser for parser in commands_of(build_parser()) if len(parser.prog.split()) == 2]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["mysql-snmp.1", *(f"mysql-snmp-{parser.prog.split()[1]}.1" for parser in top)])
    agentx = (tmp_path / "mysql-snmp-agentx.1").read_text()
    for flag in (r"\-\-my\-cnf", r"\-\-nomaster", r"\-\-agentx\-socket", r"\-\-leak\-state"):
        assert flag in agentx, flag
    if shutil.which("groff"):
        for page in tmp_path.iterdir():
            result = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True)
            assert result.returncode == 0 and result.stderr == "", (page.name, result.stderr)
