"""parsers/ stands alone: importing every parser loads nothing from agents/."""

import subprocess
import sys
from pathlib import Path

PARSERS = Path(__file__).resolve().parents[2] / "parsers"


def test_no_parser_imports_agents():
    modules = sorted(f"mysql_snmp.parsers.{p.stem}" for p in PARSERS.glob("*.py") if p.stem != "__init__")
    assert len(modules) > 10
    program = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m == 'mysql_snmp.agents' or m.startswith('mysql_snmp.agents.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         cwd=PARSERS.parent).stdout.strip()
    assert out == "[]"
