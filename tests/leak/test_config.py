"""The leak: config section: defaults that work untouched, overrides, clear errors."""

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.leak.config import DEFAULT_STATE_FILE, LeakConfigError, load_leak_config


def test_defaults_watch_the_memory_series_named_in_the_catalog():
    config = load_leak_config(None)
    assert config.state_file == DEFAULT_STATE_FILE
    assert config.windows_seconds == (900.0, 1800.0, 7200.0, 21600.0)
    catalog = load_catalog()
    names = [s.name for s in config.series]
    assert names[0] == "innodb_mem_dictionary_bytes"
    assert "process_resident_memory_bytes" in names and "perf_schema_memory_bytes" in names
    for series in config.series:
        assert series.name in catalog, series.name
        if series.explained_by:
            assert series.explained_by in catalog
        for limit in series.limit_series:
            assert limit in catalog, limit
        assert set(dict(series.labels)) <= set(catalog.by_name(series.name).labels)


def test_overrides_and_defaults_block():
    config = load_leak_config({
        "state_file": "",
        "windows_seconds": [7200, 1800],
        "confirm_evaluations": 5,
        "defaults": {"min_rate_bytes_per_hour": 1000},
        "series": [{"name": "innodb_mem_dictionary_bytes", "limit_bytes": 2e9},
                   {"name": "perf_schema_memory_bytes", "labels": {"event_name": "memory/innodb/*"},
                    "min_rate_bytes_per_hour": 5000}],
    })
    assert config.state_file is None
    assert config.windows_seconds == (1800.0, 7200.0)
    assert config.confirm_evaluations == 5
    dictionary, instruments = config.series
    assert dictionary.min_rate_bytes_per_hour == 1000 and dictionary.limit_bytes == 2e9
    assert instruments.min_rate_bytes_per_hour == 5000
    assert instruments.labels == (("event_name", "memory/innodb/*"),)


@pytest.mark.parametrize("section, message", [
    ({"windows": [60]}, "unknown keys ['windows']"),
    ({"series": [{"name": "x", "min_rate": 1}]}, "leak.series[0]: unknown keys ['min_rate']"),
    ({"series": [{"min_rate_bytes_per_hour": 1}]}, "a series needs a name"),
    ({"series": [{"name": "x", "min_growth_bytes": -5}]}, "min_growth_bytes: must be positive"),
    ({"series": [{"name": "x", "labels": ["a"]}]}, "labels must be a mapping"),
    ({"significance_z": "high"}, "leak.significance_z: expected a number"),
    ({"windows_seconds": []}, "needs at least one window"),
    ({"window_points": 3}, "at least 5 points"),
    ({"restart_drop_share": 1}, "leak.restart_drop_share: a share of the level, below 1"),
    ({"series": {"name": "x"}}, "leak.series: must be a list"),
])
def test_bad_config_names_the_key(section, message):
    with pytest.raises(LeakConfigError) as error:
        load_leak_config(section)
    assert message in str(error.value)


def test_a_listed_series_keeps_its_builtin_settings_unless_overridden():
    config = load_leak_config({"series": [{"name": "innodb_mem_dictionary_bytes", "min_growth_bytes": 1e6},
                                          {"name": "process_resident_memory_bytes"}]})
    dictionary, rss = config.series
    assert dictionary.explained_by == "status_open_table_definitions"
    assert dictionary.min_rate_bytes_per_hour == 256 * 1024 and dictionary.min_growth_bytes == 1e6
    assert rss.limit_series == ("process_cgroup_memory_limit_bytes", "host_memory_total_bytes")
