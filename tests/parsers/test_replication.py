from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.parsers.replication import (
    THREAD_CONNECTING,
    legacy_replica_values,
    parse_replica_status,
    replica_values,
)
from mysql_snmp.parsers.tabular import parse_table_text

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
NETDATA = "fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-"


def shared_rows(relative: str):
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED}")
    return parse_table_text((SHARED / relative).read_text())


def ch(name):
    return labels_of(channel=name)


def test_mysql_8_0_30_replica_status_two_channels():
    channels = parse_replica_status(shared_rows(NETDATA + "mysql-v8.0.30-replica_status_multi_source.txt"))
    assert [c.channel for c in channels] == ["master1", "master2"]
    first, second = channels
    assert first.source_host == "mysql-master1"
    assert first.source_port == 3306
    assert first.source_uuid == "61221e31-1ef3-11ed-a56a-0242ac120002"  # printed as Master_UUID on 8.0.30
    assert first.source_server_id == 1
    assert (first.io_running, first.sql_running) == (1, 1)
    assert first.seconds_behind_source == 0
    assert first.read_source_log_pos == 975 and second.read_source_log_pos == 974
    assert first.exec_source_log_pos == 975
    assert first.relay_log_space == 1599 and second.relay_log_space == 1598
    assert first.source_log_file == "mysql-bin-1.000003"
    assert first.sql_state == "Replica has read all relay log; waiting for more updates"
    assert first.sql_remaining_delay is None and "sql_remaining_delay" in first.present
    assert first.retrieved_gtid_set == "61221e31-1ef3-11ed-a56a-0242ac120002:1-3"
    assert first.executed_gtid_set == (
        "61221e31-1ef3-11ed-a56a-0242ac120002:1-3,6151d979-1ef3-11ed-a509-0242ac120003:1-3"
    )
    assert first.using_gtid == 1
    assert "retried_transactions" not in first.present  # MySQL has no such column
    assert first.raw["Replica_IO_Running"] == 1
    assert first.raw["Source_Retry_Count"] == 86400
    assert first.problems == ()

    reading = replica_values(channels)
    assert reading.values == {
        "replica_channels": 2,
        "replica_slave_running": 1,
        "replica_slave_stopped": 0,
        "replica_slave_lag_seconds": 0,
        "replica_slave_relay_log_space_bytes": 1599 + 1598,
    }
    assert reading.series["replica_relay_log_space_bytes"] == {ch("master1"): 1599, ch("master2"): 1598}
    assert reading.series["replica_sql_remaining_delay_seconds"] == {ch("master1"): None, ch("master2"): None}
    assert "replica_retried_transactions" not in reading.series
    assert "replica_received_heartbeats" not in reading.series


def test_mariadb_10_8_4_all_slaves_single_source_default_connection():
    (channel,) = parse_replica_status(shared_rows(NETDATA + "mariadb-v10.8.4-all_slaves_status_single_source.txt"))
    assert channel.channel == ""
    assert channel.source_host == "master"
    assert channel.source_server_id == 765
    assert channel.read_source_log_pos == 342
    assert channel.relay_log_space == 2785
    assert channel.retried_transactions == 0
    assert channel.received_heartbeats == 1767
    assert channel.using_gtid == 0  # Using_Gtid: No
    assert channel.retrieved_gtid_set == ""  # Gtid_IO_Pos is empty without GTID positioning
    assert channel.executed_gtid_set == "0-308-9"  # Gtid_Slave_Pos
    assert channel.sql_state == "Slave has read all relay log; waiting for more updates"
    assert channel.raw["Slave_heartbeat_period"] == 30.0
    reading = replica_values([channel])
    assert reading.series["replica_retried_transactions"] == {ch(""): 0}
    assert reading.series["replica_io_running"] == {ch(""): 1}


def test_mariadb_10_8_4_all_slaves_multi_source():
    channels = parse_replica_status(shared_rows(NETDATA + "mariadb-v10.8.4-all_slaves_status_multi_source.txt"))
    assert [c.channel for c in channels] == ["Master1", "Master2"]
    reading = replica_values(channels)
    assert reading.series["replica_exec_source_log_pos"] == {ch("Master1"): 342, ch("Master2"): 342}
    assert reading.values["replica_slave_relay_log_space_bytes"] == 2785 * 2


def slave_row(**overrides):
    """A SHOW SLAVE STATUS row (MySQL 5.7 column names), as pymysql returns it."""
    row = {
        "Slave_IO_State": "Waiting for master to send event",
        "Master_Host": "10.0.0.1",
        "Master_Port": 3306,
        "Master_Log_File": "bin.000007",
        "Read_Master_Log_Pos": 120,
        "Relay_Master_Log_File": "bin.000007",
        "Slave_IO_Running": "Yes",
        "Slave_SQL_Running": "Yes",
        "Last_Errno": 0,
        "Exec_Master_Log_Pos": 110,
        "Relay_Log_Space": 4096,
        "Seconds_Behind_Master": 12,
        "Last_IO_Errno": 0,
        "Last_IO_Error": "",
        "Last_SQL_Errno": 0,
        "Last_SQL_Error": "",
        "Master_Server_Id": 7,
        "Master_UUID": "uuid-7",
        "SQL_Delay": 0,
        "SQL_Remaining_Delay": None,
        "Slave_SQL_Running_State": "Slave has read all relay log",
        "Channel_Name": "",
    }
    row.update(overrides)
    return row


def replica_row_8_4(**overrides):
    """The same replica as SHOW REPLICA STATUS prints it on 8.4 (Source_*/Replica_* names)."""
    renamed = {}
    for name, value in slave_row().items():
        name = name.replace("Master_UUID", "Source_UUID").replace("Master", "Source").replace("Slave", "Replica")
        renamed[name] = value
    renamed["Replica_SQL_Running_State"] = renamed.pop("Replica_SQL_Running_State")
    renamed.update(overrides)
    return renamed


def test_old_and_new_column_names_give_the_same_channel():
    old = parse_replica_status([slave_row()])[0]
    new = parse_replica_status([replica_row_8_4()])[0]
    assert "Seconds_Behind_Source" in new.raw and "Seconds_Behind_Master" in old.raw
    for field in ("source_host", "source_port", "source_uuid", "source_server_id", "io_running", "sql_running",
                  "seconds_behind_source", "relay_log_space", "read_source_log_pos", "exec_source_log_pos",
                  "source_log_file", "relay_source_log_file", "sql_state", "io_state"):
        assert getattr(old, field) == getattr(new, field), field
    assert old.present == new.present
    assert new.seconds_behind_source == 12 and new.source_uuid == "uuid-7"


def test_lowercase_column_names_are_found():
    row = {name.lower(): value for name, value in slave_row().items()}
    assert parse_replica_status([row])[0].relay_log_space == 4096


def test_stopped_sql_thread_null_lag():
    channel = parse_replica_status(
        [slave_row(Slave_SQL_Running="No", Seconds_Behind_Master=None, Last_SQL_Errno=1062,
                   Last_SQL_Error="Duplicate entry '1' for key 'PRIMARY'")]
    )[0]
    assert channel.sql_running == 0
    assert channel.seconds_behind_source is None and "seconds_behind_source" in channel.present
    reading = replica_values([channel])
    assert reading.series["replica_seconds_behind_source"] == {ch(""): None}
    assert reading.series["replica_last_sql_errno"] == {ch(""): 1062}
    assert reading.series["replica_last_sql_error"] == {ch(""): "Duplicate entry '1' for key 'PRIMARY'"}
    assert reading.values["replica_slave_running"] == 0
    assert reading.values["replica_slave_stopped"] == 1
    assert reading.values["replica_slave_lag_seconds"] is None  # NULL kept, not 0


def test_connecting_io_thread_is_a_distinct_state():
    channel = parse_replica_status(
        [slave_row(Slave_IO_Running="Connecting", Seconds_Behind_Master=None, Last_IO_Errno=2003)]
    )[0]
    assert channel.io_running == THREAD_CONNECTING == 2
    assert channel.raw["Slave_IO_Running"] == "Connecting"
    # The original looked at the SQL thread only: still "running".
    assert legacy_replica_values([channel])["replica_slave_running"] == 1


def test_text_rows_from_a_saved_file_read_like_pymysql_rows():
    text_row = {name: ("NULL" if value is None else str(value)) for name, value in slave_row().items()}
    assert parse_replica_status(parse_table_text(_as_batch(text_row)))[0] == parse_replica_status([slave_row()])[0]


def _as_batch(row):
    return "\t".join(row) + "\n" + "\t".join(row.values()) + "\n"


def test_multi_channel_legacy_values():
    a = slave_row(Channel_Name="a", Seconds_Behind_Master=3, Relay_Log_Space=100)
    b = slave_row(Channel_Name="b", Seconds_Behind_Master=30, Relay_Log_Space=50)
    legacy = legacy_replica_values(parse_replica_status([a, b]))
    assert legacy == {
        "replica_slave_running": 1,
        "replica_slave_stopped": 0,
        "replica_slave_lag_seconds": 30,
        "replica_slave_relay_log_space_bytes": 150,
    }
    b_stopped = dict(b, Slave_SQL_Running="No", Seconds_Behind_Master=None)
    legacy = legacy_replica_values(parse_replica_status([a, b_stopped]))
    assert legacy["replica_slave_stopped"] == 1 and legacy["replica_slave_lag_seconds"] is None


def test_not_a_replica():
    assert parse_replica_status([]) == []
    reading = replica_values([])
    # no relay log without a channel: 0 bytes is a fact; a lag would be made up
    assert reading.values == {"replica_channels": 0, "replica_slave_running": 0, "replica_slave_stopped": 0,
                              "replica_slave_relay_log_space_bytes": 0}
    assert reading.series == {}


def test_empty_slave_status_capture_from_mariadb_10_11():
    rows = shared_rows("fixtures/live/mariadb-10.11/show-slave-status-empty.G.txt")
    assert replica_values(parse_replica_status(rows)).values["replica_channels"] == 0


def test_unreadable_value_is_reported_not_guessed():
    channel = parse_replica_status([slave_row(Relay_Log_Space="lots", Slave_IO_Running="Maybe")])[0]
    assert "relay_log_space" not in channel.present and "io_running" not in channel.present
    assert channel.problems == ("Slave_IO_Running: unreadable value 'Maybe'", "Relay_Log_Space: unreadable value 'lots'")
    reading = replica_values([channel])
    assert "replica_relay_log_space_bytes" not in reading.series
    assert "replica_slave_relay_log_space_bytes" not in reading.values


def test_rows_must_be_mappings():
    with pytest.raises(ValueError, match="replica status row 0"):
        parse_replica_status([("a", "b")])


def test_multi_line_gtid_set_is_joined():
    channel = parse_replica_status([replica_row_8_4(Executed_Gtid_Set="u1:1-3,\nu2:1-5")])[0]
    assert channel.executed_gtid_set == "u1:1-3,u2:1-5"


_COLUMNS = list(slave_row()) + list(replica_row_8_4()) + ["Connection_name", "Retried_transactions", "Using_Gtid"]


@given(st.lists(st.dictionaries(st.sampled_from(_COLUMNS),
                                st.one_of(st.none(), st.text(max_size=6), st.integers(), st.binary(max_size=4))),
                max_size=3))
def test_any_values_parse_without_raising_and_stay_typed(rows):
    for channel in parse_replica_status(rows):
        for name in ("source_port", "seconds_behind_source", "relay_log_space", "last_sql_errno"):
            value = getattr(channel, name)
            assert value is None or isinstance(value, int)
        assert channel.io_running in (None, 0, 1, 2)
        replica_values([channel])
