from pathlib import Path

import pytest

from mysql_snmp.parsers.binlog import BinlogError, binlog_values, file_number, parse_binary_logs, parse_binlog_status
from mysql_snmp.parsers.tabular import parse_table_text

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
LIVE = "fixtures/live/mariadb-10.11/"


def shared_rows(relative: str):
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED}")
    return parse_table_text((SHARED / relative).read_text())


def test_mariadb_10_11_binary_logs_and_master_status():
    reading = binlog_values(
        status_rows=shared_rows(LIVE + "show-master-status.tsv"),
        logs_rows=shared_rows(LIVE + "show-binary-logs.tsv"),
    )
    assert reading.values == {
        "binlog_files": 2,
        "binlog_size_bytes": 351 + 328,
        "binlog_current_file_size_bytes": 328,
        "binlog_position": 328,
        "binlog_current_file": "mysql-bin.000002",
        "binlog_do_db": "",
        "binlog_ignore_db": "",
        "binlog_file_number": 2,
    }


def test_mariadb_10_11_after_workload():
    logs = parse_binary_logs(shared_rows(LIVE + "show-binary-logs-after-workload.tsv"))
    assert (logs.files, logs.size_bytes, logs.current_file_size_bytes) == (2, 351 + 1783423, 1783423)
    assert logs.encrypted_files is None  # MariaDB prints no Encrypted column
    status = parse_binlog_status(shared_rows(LIVE + "show-master-status-after-workload.tsv"))
    assert status == {"file": "mysql-bin.000002", "position": 1783423, "do_db": "", "ignore_db": ""}


def test_vertical_master_status_reads_the_same():
    assert parse_binlog_status(shared_rows(LIVE + "show-master-status.G.txt")) == parse_binlog_status(
        shared_rows(LIVE + "show-master-status.tsv")
    )


def test_mysql_8_4_binary_log_status_and_encrypted_logs():
    status_rows = [
        {
            "File": "binlog.000012",
            "Position": 157,
            "Binlog_Do_DB": "",
            "Binlog_Ignore_DB": "mysql",
            "Executed_Gtid_Set": "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,\n4e0e5c4d-0000-11ee-8000-000000000001:1-2",
        }
    ]
    logs_rows = [
        {"Log_name": "binlog.000011", "File_size": 1024, "Encrypted": "Yes"},
        {"Log_name": "binlog.000012", "File_size": 157, "Encrypted": "No"},
    ]
    values = binlog_values(status_rows, logs_rows).values
    assert values["binlog_gtid_executed"] == (
        "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,4e0e5c4d-0000-11ee-8000-000000000001:1-2"
    )
    assert values["binlog_ignore_db"] == "mysql"
    assert values["binlog_encrypted_files"] == 1
    assert values["binlog_size_bytes"] == 1181
    assert values["binlog_file_number"] == 12


def test_binary_log_off_gives_nothing_but_an_empty_status():
    assert binlog_values(status_rows=[]).values == {}
    assert binlog_values().values == {}


def test_no_file_size_column_means_no_size():
    logs = parse_binary_logs([{"Log_name": "old-bin.000001"}, {"Log_name": "old-bin.000002"}])
    assert logs.files == 2 and logs.size_bytes is None and logs.current_file_size_bytes is None
    assert "binlog_size_bytes" not in binlog_values(logs_rows=[{"Log_name": "old-bin.000001"}]).values


def test_file_number():
    assert file_number("mysql-bin.000002") == 2
    assert file_number("host-bin.123456789") == 123456789
    assert file_number("weird") is None
    assert file_number(None) is None


def test_bad_rows_are_clear_errors():
    with pytest.raises(BinlogError, match="no Log_name"):
        parse_binary_logs([{"Name": "x"}])
    with pytest.raises(BinlogError, match="Position 'abc'"):
        parse_binlog_status([{"File": "b.000001", "Position": "abc"}])
