"""The committed MIB, OpenNMS and alert-rule files are what the catalog generates."""

import sys

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.cli import main
from mysql_snmp.agents.generate import generated_files, stale_files


def test_committed_generated_files_are_current():
    assert stale_files(load_catalog()) == [], "run 'mysql-snmp generate' and commit the result"


def test_generate_writes_every_file_into_an_empty_tree(tmp_path):
    assert main(["generate", "--root", str(tmp_path)]) == 0
    expected = generated_files(load_catalog())
    assert {"mibs/MYSQL-SERVER-MIB.txt"} <= set(expected)
    for path, content in expected.items():
        assert (tmp_path / path).read_text() == content
    assert main(["generate", "--check", "--root", str(tmp_path)]) == 0


def test_generate_says_when_there_is_nothing_to_do(tmp_path, capsys):
    main(["generate", "--root", str(tmp_path)])
    capsys.readouterr()
    assert main(["generate", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "nothing to write: every generated file is current\n"
    assert main(["generate", "--check", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "every generated file is current\n"


def test_generate_check_reports_a_stale_file(tmp_path, capsys):
    main(["generate", "--root", str(tmp_path)])
    (tmp_path / "mibs/MYSQL-SERVER-MIB.txt").write_text("stale\n")
    assert main(["generate", "--check", "--root", str(tmp_path)]) == 1
    assert "stale: mibs/MYSQL-SERVER-MIB.txt" in capsys.readouterr().err


def test_generate_into_an_unwritable_root_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "mibs"
    blocker.write_text("a file where the mibs/ directory should be\n")
    assert main(["generate", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "mysql-snmp generate:" in err and str(blocker) in err
    assert err.count("\n") == 1  # no traceback


def test_generate_without_the_dashboard_builder_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    # Every import of the SDK fails, as when it is not installed (submodules an earlier test loaded too).
    for name in [n for n in sys.modules if n.split(".")[0] == "grafana_foundation_sdk"] + ["grafana_foundation_sdk"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "mysql_snmp.agents.generate.dashboards", raising=False)
    assert main(["generate", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == "mysql-snmp generate: grafana_foundation_sdk is not installed; pip install 'mysql-snmp[generate]'\n"


def test_compiled_catalog_is_the_yaml_document():
    from mysql_snmp.agents.catalog import CATALOG_PATH, COMPILED_PATH, load_catalog_file, load_catalog_from

    from_yaml = load_catalog_file(CATALOG_PATH)
    from_compiled = load_catalog_from(CATALOG_PATH, COMPILED_PATH)
    assert from_compiled.metrics == from_yaml.metrics and from_compiled.tables == from_yaml.tables
    assert from_compiled.extra == from_yaml.extra
    assert [r.pattern.pattern for r in from_compiled.families.rows["global_status"]] == \
        [r.pattern.pattern for r in from_yaml.families.rows["global_status"]]


def test_stale_compiled_catalog_is_ignored(tmp_path):
    from mysql_snmp.agents.catalog import CATALOG_PATH, COMPILED_PATH, load_catalog_from

    yaml_copy, compiled_copy = tmp_path / "catalog.yaml", tmp_path / "catalog.json"
    compiled_copy.write_text(COMPILED_PATH.read_text())
    # The YAML edited after compiling: one help text changed.
    yaml_copy.write_text(CATALOG_PATH.read_text().replace(
        "help: Connections dropped because the client died", "help: EDITED Connections dropped because", 1))
    catalog = load_catalog_from(yaml_copy, compiled_copy)
    assert catalog.by_name("status_aborted_clients").help.startswith("EDITED")
