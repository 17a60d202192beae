"""The version the console script and build_info report, read without importlib.metadata."""

from __future__ import annotations

import importlib.metadata
import sys

from mysql_snmp.agents.config import version


def test_the_installed_version_is_the_one_importlib_metadata_finds():
    version.installed_version.cache_clear()
    assert version.installed_version() == importlib.metadata.version("mysql-snmp")


def write_metadata(directory, name, header):
    (directory / name).mkdir()
    file = "METADATA" if name.endswith(".dist-info") else "PKG-INFO"
    (directory / name / file).write_text(f"Metadata-Version: 2.1\nName: mysql-snmp\n{header}\n\nVersion: 9.9 (body)\n")


def test_the_first_path_entry_holding_this_distribution_wins(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    write_metadata(first, "other_project-1.0.dist-info", "Version: 1.0")
    write_metadata(first, "Mysql_Snmp.egg-info", "Version: 3.1.dev2")
    write_metadata(second, "mysql_snmp-4.0.dist-info", "Version: 4.0")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(first), str(second)])
    version.installed_version.cache_clear()
    try:
        assert version.installed_version() == "3.1.dev2"
        monkeypatch.setattr(sys, "path", [str(second)])
        version.installed_version.cache_clear()
        assert version.installed_version() == "4.0"
        monkeypatch.setattr(sys, "path", [str(tmp_path / "missing")])
        version.installed_version.cache_clear()
        assert version.installed_version() == version.NOT_INSTALLED
    finally:
        version.installed_version.cache_clear()


def test_a_body_line_is_not_taken_for_the_header(tmp_path, monkeypatch):
    write_metadata(tmp_path, "mysql_snmp-5.0.dist-info", "Summary: no version header")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    version.installed_version.cache_clear()
    try:
        assert version.installed_version() == version.NOT_INSTALLED
    finally:
        version.installed_version.cache_clear()
