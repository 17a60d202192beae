from pathlib import Path

import pytest

from mysql_snmp.parsers.status import parse_status_rows, without_wsrep
from mysql_snmp.parsers.tabular import parse_table_text

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def shared_rows(relative: str):
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED}")
    return parse_table_text((SHARED / relative).read_text())


def test_mariadb_10_11_global_status_batch():
    status = parse_status_rows(shared_rows("fixtures/live/mariadb-10.11/show-global-status.tsv"))
    assert len(status) == 562
    assert status["Uptime"] == 10
    assert status["Bytes_received"] == 1096
    assert status["Innodb_buffer_pool_pages_total"] == 8112
    assert status["Compression"] == 0
    assert status["Slave_running"] == 0
    assert status["Rpl_status"] == "AUTH_MASTER"
    assert status["Innodb_buffer_pool_load_status"] == "Buffer pool(s) load completed at 261129  8:11:54"


def test_mariadb_10_11_global_variables_batch():
    variables = parse_status_rows(shared_rows("fixtures/live/mariadb-10.11/show-global-variables.tsv"))
    assert variables["max_connections"] == 151
    assert variables["log_bin"] == 1
    assert variables["long_query_time"] == 10.0
    assert variables["innodb_buffer_pool_size"] == 134217728
    assert variables["version"] == "10.11.19-MariaDB-0+deb12u1-log"
    assert variables["init_connect"] == ""


def test_mysql_8_0_30_box_tables():
    status = parse_status_rows(
        shared_rows("fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-mysql-v8.0.30-global_status.txt")
    )
    assert status["Uptime"] == 152
    assert status["Innodb_buffer_pool_pages_total"] == 8192
    variables = parse_status_rows(
        shared_rows("fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-mysql-v8.0.30-global_variables.txt")
    )
    assert variables == {
        "disabled_storage_engines": "",
        "log_bin": 1,
        "max_connections": 151,
        "performance_schema": 1,
        "table_open_cache": 4000,
    }


def test_mariadb_10_8_4_box_table():
    status = parse_status_rows(
        shared_rows("fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-mariadb-v10.8.4-global_status.txt")
    )
    assert status["Uptime"] == 52310
    assert status["Com_select"] == 6
    assert status["Slave_running"] == 1
    assert status["Innodb_lsn_current"] == 52826


def test_percona_8_0_32_headerless_dump():
    status = parse_status_rows(
        shared_rows("fixtures/status/percona-toolkit/percona-toolkit-pt-mysql-summary-temp_enc008-mysql-status.tsv")
    )
    assert len(status) == 539
    assert status["Uptime"] == 108232
    assert status["Com_select"] == 6584
    assert status["Innodb_redo_log_enabled"] == 1
    assert status["Ssl_session_cache_mode"] == "SERVER"


def test_tuples_from_pymysql_and_names_kept_as_printed():
    status = parse_status_rows([("Uptime", "5"), (b"Innodb_buffer_pool_pages_data", b"12"), ("x", None)])
    assert status == {"Uptime": 5, "Innodb_buffer_pool_pages_data": 12, "x": None}


def test_rows_without_a_name_are_an_error():
    with pytest.raises(ValueError, match="status row 1"):
        parse_status_rows([("a", "1"), ("", "2")])
    with pytest.raises(ValueError, match="Variable_name"):
        parse_status_rows([{"Name_of_thing": "a"}])
    with pytest.raises(ValueError, match="expected"):
        parse_status_rows([("a", "1", "2")])


def test_error_for_a_row_of_garbage_stays_one_short_line():
    # A binary file read as a TAB table has one "column" holding a whole line of bytes.
    garbage = "\x7fELF\x02\x01" + "\x00" * 500 + "\n" + "x" * 500
    with pytest.raises(ValueError) as info:
        parse_status_rows([{garbage: "1"}])
    message = str(info.value)
    assert message.startswith("status row 0: needs Variable_name and Value columns")
    assert len(message) < 200 and "\n" not in message


def test_without_wsrep_drops_every_spelling_of_the_prefix_and_nothing_else():
    status = {"Aborted_clients": 1, "wsrep_ready": "OFF", "WSREP_cluster_status": "Disconnected",
              "Wsrep_local_state": 0, "wsrep": 1, "w": 2, "Written_rows": 3, "ws_rep": 4}
    kept = without_wsrep(status)
    assert kept == {"Aborted_clients": 1, "w": 2, "Written_rows": 3, "ws_rep": 4}
    assert "wsrep_ready" in status  # the input is left as it was


def test_rows_of_pairs_and_odd_rows_read_alike():
    pairs = [("Uptime", "100"), ("Ssl_cipher", ""), ("Innodb_have_atomic_builtins", "ON"), ("Uptime", "101"),
             ("Max_used_connections_time", "NULL"), ("Bytes_sent", b"12")]
    expected = {"Uptime": 101, "Ssl_cipher": "", "Innodb_have_atomic_builtins": 1,
                "Max_used_connections_time": None, "Bytes_sent": 12}
    assert parse_status_rows(pairs) == expected
    assert parse_status_rows(iter(pairs)) == expected
    assert parse_status_rows([list(row) for row in pairs]) == expected
    with pytest.raises(ValueError, match="row 1: expected"):
        parse_status_rows([("Uptime", "1"), ("Threads", "1", "extra")])
    with pytest.raises(ValueError, match="row 0: empty variable name"):
        parse_status_rows([("", "1"), ("Uptime", "1")])
