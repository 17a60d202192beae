"""Files generated from the catalog and committed (mibs/, opennms/, grafana/, agents/catalog.json).

Each generator module exposes ``outputs(catalog) -> dict[str, str]``: repository-relative
path -> file content.  ``mysql-snmp generate`` writes them; a test fails when a
committed file differs from what the catalog generates.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ..catalog import Catalog

GENERATOR_MODULES = (
    "mysql_snmp.agents.generate.mib",
    "mysql_snmp.agents.generate.alert_rules",
    "mysql_snmp.agents.generate.server_rules",
    "mysql_snmp.agents.generate.dashboards",
    "mysql_snmp.agents.generate.opennms",
    "mysql_snmp.agents.generate.opennms_collection",
    "mysql_snmp.agents.generate.opennms_graphs",
    "mysql_snmp.agents.generate.compiled_catalog",
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def generated_files(catalog: Catalog) -> dict[str, str]:
    files: dict[str, str] = {}
    for module_name in GENERATOR_MODULES:
        for path, content in importlib.import_module(module_name).outputs(catalog).items():
            if path in files:
                raise ValueError(f"{path} generated twice (second time by {module_name})")
            files[path] = content
    return files


def stale_files(catalog: Catalog, root: Path = REPO_ROOT) -> list[str]:
    """Paths whose committed content differs from what the catalog generates."""
    stale = []
    for path, content in generated_files(catalog).items():
        target = root / path
        if not target.exists() or target.read_text() != content:
            stale.append(path)
    return stale


def write_all(catalog: Catalog, root: Path = REPO_ROOT) -> list[str]:
    written = []
    for path, content in generated_files(catalog).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text() != content:
            target.write_text(content)
            written.append(path)
    return written
