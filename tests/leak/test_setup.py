"""One detector per target from an agent's flags: config file, state file precedence, log line."""

from pathlib import Path

import pytest
import yaml

from mysql_snmp.agents.leak.config import LeakConfigError
from mysql_snmp.agents.leak.setup import (adopt_shared_history, build_leak_detector, default_state_path,
                                          describe_watched, read_leak_section)

PACKAGED_LEAK_YML = Path(__file__).resolve().parents[2] / "packaging" / "etc" / "leak.yml"


def write(path, text):
    path.write_text(text)
    return path


def test_without_flags_each_agent_and_target_gets_its_file_under_var_lib():
    detector = build_leak_detector("db1:3306", agent="exporter")
    assert str(detector.state_path) == "/var/lib/mysql-snmp/leak-state.exporter.db1_3306.json"
    assert [s.name for s in detector.config.series][0] == "innodb_mem_dictionary_bytes"


def test_exporter_and_agentx_watching_one_server_keep_separate_default_files():
    exporter = build_leak_detector("db1:3306", agent="exporter").state_path
    agentx = build_leak_detector("db1:3306", agent="agentx").state_path
    assert str(agentx) == "/var/lib/mysql-snmp/leak-state.agentx.db1_3306.json"
    assert exporter != agentx
    with pytest.raises(ValueError, match="agent must be one of"):
        default_state_path("snmpd", "db1")


def test_both_agents_start_from_the_history_they_used_to_share(tmp_path):
    base = tmp_path / "leak-state.json"
    shared = tmp_path / "leak-state.db1_3306.json"
    shared.write_text('{"version": 1, "saved_at": 5, "series": {}}')
    for agent in ("exporter", "agentx"):
        own = default_state_path(agent, "db1:3306", base)
        adopt_shared_history(own, "db1:3306", base)
        assert own.read_text() == shared.read_text()
        own.write_text("newer")  # an agent's own file, once there, is never replaced
        adopt_shared_history(own, "db1:3306", base)
        assert own.read_text() == "newer"
    assert shared.exists()


def test_state_flag_wins_over_the_config_file(tmp_path):
    config = write(tmp_path / "leak.yml", f"leak:\n  state_file: {tmp_path / 'from-yaml.json'}\n")
    assert build_leak_detector("db1:3306", config, agent="agentx").state_path == tmp_path / "from-yaml.json"
    flagged = build_leak_detector("db1:3306", config, tmp_path / "flag.json", agent="exporter")
    assert flagged.state_path == tmp_path / "flag.json"


def test_config_file_can_turn_history_off(tmp_path):
    config = write(tmp_path / "leak.yml", "leak:\n  state_file: null\n  bin_seconds: 30\n")
    detector = build_leak_detector("db1:3306", config, agent="exporter")
    assert detector.state_path is None
    assert detector.config.bin_seconds == 30.0


def test_a_file_without_leak_section_gives_the_defaults(tmp_path):
    config = write(tmp_path / "agent.yml", "other: {}\n")
    detector = build_leak_detector("db1", config, agent="exporter")
    assert str(detector.state_path) == "/var/lib/mysql-snmp/leak-state.exporter.db1.json"
    assert detector.config.bin_seconds == 60.0


@pytest.mark.parametrize("text", [PACKAGED_LEAK_YML.read_text(), "", "\n  \n", "# only\n  # comments\n"])
def test_a_file_of_comments_reads_as_pyyaml_reads_it_without_pyyaml(tmp_path, text):
    assert yaml.safe_load(text) is None  # what the parser would say, so skipping it changes nothing
    config = write(tmp_path / "leak.yml", text)
    assert read_leak_section(config) is None
    detector = build_leak_detector("db1", config, agent="exporter")
    assert detector.config.bin_seconds == 60.0 and detector.state_path is not None


@pytest.mark.parametrize("text, message", [
    ("leak:\n  bin_seconds: -1\n", "leak.bin_seconds: must be positive"),
    ("leak:\n  colour: red\n", "unknown keys ['colour']"),
    ("leak: [1, 2]\n", "leak: must be a mapping"),
    ("- a list\n", "not a YAML mapping"),
    ("leak: {bin_seconds: [\n", "while parsing"),
])
def test_bad_config_file_is_a_clear_error_naming_the_file(tmp_path, text, message):
    config = write(tmp_path / "leak.yml", text)
    with pytest.raises(LeakConfigError) as raised:
        build_leak_detector("db1", config, agent="exporter")
    assert str(raised.value).startswith(str(config))
    assert message in str(raised.value)


def test_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(LeakConfigError, match="No such file"):
        build_leak_detector("db1", tmp_path / "absent.yml", agent="exporter")


def test_describe_watched_names_series_labels_explanation_and_history(tmp_path):
    config = write(tmp_path / "leak.yml", "leak:\n  series:\n"
                   "    - name: innodb_mem_dictionary_bytes\n"
                   "    - name: perf_schema_memory_bytes\n"
                   "      labels: {event_name: 'memory/innodb/*'}\n"
                   "      explained_by: null\n")
    detector = build_leak_detector("db1", config, tmp_path / "state.json", agent="exporter")
    assert describe_watched(detector) == (
        "innodb_mem_dictionary_bytes (explained by status_open_table_definitions), "
        f"perf_schema_memory_bytes{{event_name=memory/innodb/*}}; history: {tmp_path / 'state.json'}")


@pytest.mark.parametrize("text, message", [
    ("leak:\n  series:\n    - name: innodb_mem_dictionary_byts\n",
     "leak.series[0].name: innodb_mem_dictionary_byts is not a catalog value "
     "(did you mean innodb_mem_dictionary_bytes?) ('mysql-snmp collect' prints them)"),
    ("leak:\n  series:\n    - name: innodb_mem_dictionary_bytes\n    - name: process_resident_memory_bytes\n"
     "      explained_by: status_open_tables_definitions\n",
     "leak.series[1].explained_by: status_open_tables_definitions is not a catalog value "
     "(did you mean status_open_table_definitions?)"),
    ("leak:\n  windows: [3600]\n", "leak: unknown keys ['windows'] (did you mean windows_seconds?); known: "),
    ("leak:\n  series:\n    - {name: process_resident_memory_bytes, min_rate: 1}\n",
     "leak.series[0]: unknown keys ['min_rate'] (did you mean min_rate_bytes_per_hour?); known: "),
])
def test_a_misspelt_series_or_key_is_refused_with_the_nearest_name(tmp_path, text, message):
    config = write(tmp_path / "leak.yml", text)
    with pytest.raises(LeakConfigError) as raised:
        build_leak_detector("db1", config, agent="exporter")
    assert str(raised.value).startswith(f"{config}: {message}")
    assert "\n" not in str(raised.value)


def test_series_by_alias_or_with_labels_are_catalog_values(tmp_path):
    config = write(tmp_path / "leak.yml", "leak:\n  series:\n    - name: process_rss_bytes\n"
                   "    - name: perf_schema_memory_bytes\n      labels: {event_name: 'memory/sql/*'}\n")
    detector = build_leak_detector("db1", config, tmp_path / "state.json", agent="exporter")
    assert [s.name for s in detector.config.series] == ["process_rss_bytes", "perf_schema_memory_bytes"]


def test_series_names_are_checked_against_the_agents_own_catalog(tmp_path):
    from mysql_snmp.agents.catalog import load_catalog, parse_catalog

    full = load_catalog()
    smaller = parse_catalog({"module": full.module, "enterprise_oid": "1", "legacy_root": "1.1", "new_root": "1.2",
                             "metrics": [{"name": "process_resident_memory_bytes", "help": "RSS.", "kind": "gauge",
                                          "source": {"from": "process", "key": "rss"}}]})
    config = write(tmp_path / "leak.yml", "leak:\n  series:\n    - name: process_rss_bytes\n"
                   "    - name: innodb_mem_dictionary_bytes\n      explained_by: null\n")
    assert build_leak_detector("db1", config, agent="exporter", catalog=full).config.series
    with pytest.raises(LeakConfigError, match=r"leak.series\[1\].name: innodb_mem_dictionary_bytes is not a catalog"):
        build_leak_detector("db1", config, agent="exporter", catalog=smaller)
