"""Names for boards and rules come from the catalog and the exporter's own family builders."""

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.generate.served_names import Served, replica_column, served


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_status_values_get_mysqld_exporter_family_and_label(catalog):
    assert served(catalog, "status_com_select") == Served("mysql_global_status_commands_total",
                                                           (("command", "select"),))
    assert served(catalog, "status_innodb_rows_read") == Served("mysql_global_status_innodb_row_ops_total",
                                                                 (("operation", "read"),))
    assert served(catalog, "status_uptime") == Served("mysql_global_status_uptime")
    assert served(catalog, "variable_max_connections") == Served("mysql_global_variables_max_connections")
    assert served(catalog, "replica_sql_running") == Served("mysql_replica_sql_running")


def test_our_own_metrics_get_the_catalog_name(catalog):
    for name in ("innodb_trx_history_list_length", "process_resident_memory_bytes", "leak_state"):
        assert served(catalog, name).name == catalog.by_name(name).prometheus.name


def test_selector_puts_family_labels_before_the_matchers():
    chosen = Served("mysql_global_status_commands_total", (("command", "select"),))
    assert chosen.selector('job=~"$job"') == 'mysql_global_status_commands_total{command="select", job=~"$job"}'
    assert Served("mysql_up").selector() == "mysql_up"


def test_replica_columns_keep_their_own_spelling():
    assert replica_column("Slave_SQL_Running") == "mysql_slave_status_slave_sql_running"
    assert replica_column("Replica_SQL_Running") == "mysql_slave_status_replica_sql_running"
    assert replica_column("Seconds_Behind_Source") == "mysql_slave_status_seconds_behind_source"


def test_a_value_not_served_to_prometheus_is_an_error(catalog):
    with pytest.raises(ValueError, match="not served to Prometheus"):
        served(catalog, "replica_last_io_error")
