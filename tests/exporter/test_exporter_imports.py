"""What the exporter process loads: every module costs resident memory for the process's life,
so ``mysql-snmp exporter`` started as the packaged unit starts it (the all-comments leak.yml)
and scraped must not have imported what only other commands, other collectors or a YAML file
need (docs/benchmarks.md, "Exporter: under load")."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from mysql_snmp.agents.cli import build_parser, chosen_command
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.support import create_monitoring_user

REPO = Path(__file__).resolve().parents[2]
PACKAGED_LEAK_YML = REPO / "packaging" / "etc" / "leak.yml"
# Runs the console script's main() and, once it returns (SIGTERM ends it cleanly), writes the
# names of every module the process imported.
RECORDING_MAIN = ("import atexit, sys\n"
                  "atexit.register(lambda: open(sys.argv.pop(1), 'w').write('\\n'.join(sorted(sys.modules))))\n"
                  "from mysql_snmp.agents.cli import main\n"
                  "sys.exit(main(sys.argv[2:]))\n")
# Top-level modules (with their submodules) an exporter never needs: the SNMP side, the agentx
# command's event loop, PyYAML when no YAML file says anything, the command line's typo hints,
# importlib.metadata's zip and CSV readers for a version string.
NEVER = ("pysnmp", "yaml", "asyncio", "difflib", "importlib.metadata", "zipfile", "csv",
         # prometheus_client (the tests' reference only; agents/exporter/metric_types.py)
         "prometheus_client", "urllib.request", "wsgiref",
         # the stdlib's HTTP server and its header parser (agents/exporter/http_request.py reads requests)
         "http.server", "http.client", "email")
# OpenSSL, for a target on this host with nothing said about TLS (agents/mysql/tls_on_demand.py)
OPENSSL = ("ssl", "_ssl", "cryptography")
NEVER_OURS = ("mysql_snmp.agents.agentx", "mysql_snmp.agents.generate", "mysql_snmp.agents.commands.agentx",
              "mysql_snmp.agents.commands.leak", "mysql_snmp.agents.commands.generate",
              "mysql_snmp.agents.leak.replay",
              # table collectors that are not among the exporter's defaults
              "mysql_snmp.agents.sources.info_schema_tables", "mysql_snmp.agents.sources.auto_increment",
              "mysql_snmp.agents.sources.perf_schema_events_statements", "mysql_snmp.parsers.info_schema_tables")


def modules_of_a_scraped_exporter(my_cnf: Path, tmp_path: Path, *flags: str) -> set[str]:
    record = tmp_path / "modules.txt"
    port = free_loopback_port()
    process = subprocess.Popen(
        [sys.executable, "-c", RECORDING_MAIN, str(record), "--log-level=warning", "exporter",
         f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}",
         f"--exporter.leak-state-file={tmp_path / 'leak-state.json'}", *flags],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        body = scrape_when_listening(f"http://127.0.0.1:{port}/metrics", process)
        assert "mysql_up 1" in body
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    return set(record.read_text().split())


def scrape_when_listening(url: str, process: subprocess.Popen, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the exporter exited with {process.returncode}: {process.stderr.read()}")
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in names))


def test_the_packaged_command_line_loads_no_yaml_snmp_or_other_commands(monitoring_user, tmp_path):
    modules = modules_of_a_scraped_exporter(monitoring_user.my_cnf, tmp_path,
                                            f"--exporter.leak-config={PACKAGED_LEAK_YML}")
    # The record is real: what a scrape needs is there.
    assert {"pymysql", "mysql_snmp.agents.exporter.wire_format", "mysql_snmp.agents.exporter.app",
            "mysql_snmp.agents.sources.global_status", "mysql_snmp.agents.leak.detector"} <= modules
    assert loaded(modules, NEVER) == []
    assert loaded(modules, NEVER_OURS) == []
    # Over loopback TCP, with nothing said about TLS: no TLS, no OpenSSL (nor cryptography,
    # which pymysql would import when installed, as it is in the test venv).
    assert loaded(modules, OPENSSL) == []


def test_an_exporter_on_the_unix_socket_loads_no_openssl(mariadb, tmp_path):
    on_socket = create_monitoring_user(mariadb, tmp_path, over_socket=True)
    modules = modules_of_a_scraped_exporter(on_socket.my_cnf, tmp_path, f"--exporter.leak-config={PACKAGED_LEAK_YML}")
    assert "pymysql" in modules
    assert loaded(modules, OPENSSL) == []
    assert loaded(modules, NEVER) == []


def test_a_leak_config_that_says_something_is_read_with_pyyaml(monitoring_user, tmp_path):
    config = tmp_path / "leak.yml"
    config.write_text("leak:\n  bin_seconds: 30\n")
    modules = modules_of_a_scraped_exporter(monitoring_user.my_cnf, tmp_path, f"--exporter.leak-config={config}",
                                            "--collect.info_schema.tables")
    assert "yaml" in modules
    assert {"mysql_snmp.agents.sources.info_schema_tables", "mysql_snmp.parsers.info_schema_tables"} <= modules


@pytest.mark.parametrize("argv, command", [
    (["exporter", "--web.listen-address", ":9104"], "exporter"),
    (["--log-level", "debug", "agentx", "-h", "db1"], "agentx"),
    (["--log-level=error", "leak", "replay"], "leak"),
    (["--help"], None),
    (["--version"], None),
    (["exporterr"], None),
    ([], None),
])
def test_the_command_is_found_before_any_command_module_is_imported(argv, command):
    assert chosen_command(argv) == command


def test_a_named_command_builds_only_its_own_parser():
    only = build_parser(only="exporter")
    assert only.parse_args(["exporter"]).command == "exporter"
    with pytest.raises(SystemExit):
        only.parse_args(["agentx"])


# Runs a command line through main() (or only builds its parser), then says whether the catalog
# was loaded: load_catalog() and load_exporter_catalog() cache the one they return.
CATALOG_LOADED = ("import sys\n"
                  "from mysql_snmp.agents.catalog import load_catalog, load_exporter_catalog\n"
                  "from mysql_snmp.agents.cli import build_parser, chosen_command, main\n"
                  "argv = sys.argv[2:]\n"
                  "if sys.argv[1] == 'main':\n"
                  "    try:\n"
                  "        main(argv)\n"
                  "    except SystemExit:\n"
                  "        pass\n"
                  "else:\n"
                  "    build_parser(only=chosen_command(argv), argv=argv)\n"
                  "print('catalog loaded:', load_catalog.cache_info().currsize + load_exporter_catalog.cache_info().currsize)\n")


def catalog_loaded(how: str, *argv: str) -> bool:
    answer = subprocess.run([sys.executable, "-c", CATALOG_LOADED, how, *argv], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert answer.returncode == 0, answer.stderr
    return answer.stdout.splitlines()[-1] == "catalog loaded: 1"


@pytest.mark.parametrize("argv", [["--help"], ["exporter", "--help"], ["exporter", "-h"], ["--version"],
                                  ["exporter", "--version"], ["agentx", "--help"], ["generate", "--help"]])
def test_help_and_version_do_not_load_the_catalog(argv):
    assert not catalog_loaded("main", *argv)


def test_the_exporters_own_command_line_loads_the_catalog_before_its_parser_is_built():
    # before the exporter's modules are imported: less resident memory for the process's life
    assert catalog_loaded("parser", "exporter", "--web.listen-address=127.0.0.1:9104")
    assert not catalog_loaded("parser", "exporter", "--help")
