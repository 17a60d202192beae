"""Inside agents/ and inside parsers/, modules name their neighbours relatively, so an import names the
file it reaches in the tree (an editor, a static import graph and a reader find it without the installed
package); agents/ reaches parsers/ by its installed name, and parsers/ never reaches agents/."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def absolute_imports(top: str, root: Path = ROOT) -> list[tuple[str, int, str]]:
    found = []
    for path in sorted((root / top).rglob("*.py")):
        where = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(), where)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((where, node.lineno, node.module))
            elif isinstance(node, ast.Import):
                found.extend((where, node.lineno, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("top", ["agents", "parsers"])
def test_a_package_imports_itself_relatively(top):
    own = f"mysql_snmp.{top}"
    offenders = [f"{path}:{line}: {module}" for path, line, module in absolute_imports(top)
                 if module == own or module.startswith(own + ".")]
    assert offenders == []


def test_parsers_never_import_agents():
    offenders = [f"{path}:{line}: {module}" for path, line, module in absolute_imports("parsers")
                 if module.startswith("mysql_snmp.agents")]
    relative = []
    for path in sorted((ROOT / "parsers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 1:
                relative.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [] and relative == []


def test_the_rule_sees_an_absolute_self_import(tmp_path):
    """The check itself: a planted absolute self-import is reported, a relative one is not."""
    package = tmp_path / "agents" / "inner"
    package.mkdir(parents=True)
    (package / "mod.py").write_text("from mysql_snmp.agents.catalog import Catalog\nfrom .x import y\n")
    assert absolute_imports("agents", tmp_path) == [("agents/inner/mod.py", 1, "mysql_snmp.agents.catalog")]
