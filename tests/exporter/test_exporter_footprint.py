"""What the exporter process keeps for its whole life, beyond the modules it imports
(tests/exporter/test_exporter_imports.py): the catalog without its SNMP side, and hashlib's
built-in hashes instead of OpenSSL's (docs/benchmarks.md, "Exporter: under load")."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.test_exporter_imports import scrape_when_listening

REPO = Path(__file__).resolve().parents[2]
# Runs the console script's main() and, once it returns (SIGTERM ends it cleanly), writes what
# the process ended up with: which catalogs it loaded and where its hashes come from.
RECORDING_MAIN = """\
import atexit, json, sys

def record(path=sys.argv.pop(1)):
    import hashlib
    from mysql_snmp.agents.catalog import load_catalog, load_exporter_catalog
    exporter_catalog = load_exporter_catalog()
    facts = {
        "full_catalogs": load_catalog.cache_info().currsize,
        "exporter_catalogs": load_exporter_catalog.cache_info().currsize,
        "snmp_specs": sum(m.snmp is not None for m in exporter_catalog),
        "openssl_hashes": sys.modules.get("_hashlib") is not None,
        "sha1": type(hashlib.sha1()).__module__,
        "sha256": type(hashlib.sha256()).__module__,
    }
    open(path, "w").write(json.dumps(facts))

atexit.register(record)
from mysql_snmp.agents.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_scraped_exporter_holds_the_catalog_without_snmp_and_no_openssl_hashes(monitoring_user, tmp_path):
    record = tmp_path / "facts.json"
    port = free_loopback_port()
    process = subprocess.Popen(
        [sys.executable, "-c", RECORDING_MAIN, str(record), "--log-level=warning", "exporter",
         f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={monitoring_user.my_cnf}",
         f"--exporter.leak-state-file={tmp_path / 'leak-state.json'}"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # A real login: the password scramble was computed with the built-in SHA-1/SHA-256.
        assert "mysql_up 1" in scrape_when_listening(f"http://127.0.0.1:{port}/metrics", process)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    facts = json.loads(record.read_text())
    assert facts == {"full_catalogs": 0, "exporter_catalogs": 1, "snmp_specs": 0, "openssl_hashes": False,
                     "sha1": "_sha1", "sha256": "_sha256"}


def test_hashlib_already_imported_keeps_what_it_found():
    """Another command, or a test process, that imported hashlib first is left as it is."""
    code = ("import hashlib, sys\n"
            "from mysql_snmp.agents.exporter.builtin_hashes import use_builtin_hashes\n"
            "print(use_builtin_hashes(), sys.modules.get('_hashlib') is not None, type(hashlib.sha256()).__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.split() == ["False", "True", "_hashlib"]
