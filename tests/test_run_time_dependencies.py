"""What agents/ and parsers/ import is what pyproject.toml installs outside the test extra.

The packages depend on the distribution's builds of the run-time dependencies only, so a module
that imports a test-only one, prometheus_client above all (the tests' reference for the exporter's
own exposition, agents/exporter/metric_types.py), works in the test venv and fails once installed.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
SOURCES = sorted(path for root in ("agents", "parsers") for path in (REPO / root).rglob("*.py"))
TEST_ONLY_REFERENCE = "prometheus_client"


def distribution_name(requirement: str) -> str:
    """PEP 503's normalized name of a requirement such as ``PyYAML>=6.0``."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def optional_import_lines(tree: ast.AST) -> set[int]:
    """Lines of ``try:`` bodies whose handler catches ImportError: the module works without them."""
    lines = set()
    for node in ast.walk(tree):
        caught = [ast.unparse(handler.type) for handler in getattr(node, "handlers", []) if handler.type is not None]
        if isinstance(node, ast.Try) and any(re.search(r"\b(ImportError|ModuleNotFoundError)\b", c) for c in caught):
            lines.update(range(node.body[0].lineno, node.body[-1].end_lineno + 1))
    return lines


def required_imports(path: Path) -> set[str]:
    """Top-level names of the modules ``path`` imports anywhere (functions too), optional ones left out."""
    tree = ast.parse(path.read_text(), str(path))
    optional = optional_import_lines(tree)
    names = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in optional:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_every_module_agents_and_parsers_import_is_installed_outside_the_test_extra():
    declared = {distribution_name(requirement) for requirement in PROJECT["dependencies"]}
    declared |= {distribution_name(requirement) for extra, requirements in PROJECT["optional-dependencies"].items()
                 if extra != "test" for requirement in requirements}
    distributions_of = importlib.metadata.packages_distributions()
    needs: dict[str, set[str]] = {}
    for path in SOURCES:
        for name in required_imports(path) - set(sys.stdlib_module_names) - {"mysql_snmp"}:
            # a module no installed distribution provides stays under its own name: undeclared
            for distribution in distributions_of.get(name, [name]):
                needs.setdefault(distribution_name(distribution), set()).add(str(path.relative_to(REPO)))
    # The scan is real: what the exporter and the catalog do import is found.
    assert {"pymysql", "pyyaml", "psutil"} <= needs.keys()
    assert {name: sorted(paths) for name, paths in needs.items() if name not in declared} == {}


def test_importing_every_module_of_agents_and_parsers_loads_no_prometheus_client():
    modules = []
    for path in SOURCES:
        parts = path.relative_to(REPO).with_suffix("").parts
        modules.append(".".join(("mysql_snmp", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    program = ("import importlib, sys\n"
               f"for name in {modules!r}: importlib.import_module(name)\n"
               f"print(len([m for m in {modules!r} if m in sys.modules]))\n"
               f"print(sorted(m for m in sys.modules if m.split('.')[0] == {TEST_ONLY_REFERENCE!r}))\n")
    imported, reference = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                         check=True, cwd=REPO, timeout=120).stdout.splitlines()
    assert int(imported) == len(modules) > 150
    assert reference == "[]"
