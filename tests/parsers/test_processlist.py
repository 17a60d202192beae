import pytest
from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.parsers.processlist import (
    LEGACY_STATES,
    legacy_bucket,
    normalise_state,
    processlist_values,
    summarise_processlist,
)
from mysql_snmp.parsers.tabular import parse_table_text


def row(id, user, command, time, state, info=None):
    """A SHOW FULL PROCESSLIST row as pymysql's DictCursor returns it."""
    return {"Id": id, "User": user, "Host": "localhost", "db": None, "Command": command, "Time": time,
            "State": state, "Info": info}


ROWS = [
    row(1, "system user", "Daemon", None, "InnoDB purge coordinator"),
    row(5, "app", "Sleep", 30, ""),
    row(6, "app", "Sleep", 2, None),
    row(7, "app", "Query", 12, "Sending data", "SELECT ..."),
    row(8, "app", "Query", 3, "Copying to tmp table", "SELECT ... GROUP BY"),
    row(9, "batch", "Query", 40, "Waiting for table metadata lock", "ALTER TABLE t ..."),
    row(10, "batch", "Query", 41, "Waiting for table metadata lock", "SELECT ..."),
    row(11, "monitor", "Query", 0, "starting", "SHOW FULL PROCESSLIST"),
]


def test_normalise_state():
    assert normalise_state("Copying to tmp table") == "copying_to_tmp_table"
    assert normalise_state("Waiting for table metadata lock") == "waiting_for_table_metadata_lock"
    assert normalise_state("Slave has read all relay log; waiting for more updates") == (
        "slave_has_read_all_relay_log_waiting_for_more_updates"
    )
    assert normalise_state("  statistics ") == "statistics"
    assert normalise_state("") == "none"
    assert normalise_state(None) == "none"
    assert normalise_state(b"Sorting result") == "sorting_result"


def test_legacy_buckets():
    assert legacy_bucket("sending_data") == "State_sending_data"
    assert legacy_bucket("none") == "State_none"
    assert legacy_bucket("executing") == "State_other"
    assert len(LEGACY_STATES) == 14


def test_counts_per_state_command_user_and_time():
    summary = summarise_processlist(ROWS)
    assert summary.rows == 8
    assert summary.by_state["none"] == 2
    assert summary.by_state["waiting_for_table_metadata_lock"] == 2
    assert summary.by_command_state[("Sleep", "none")] == 2
    assert summary.seconds_by_command_state[("Sleep", "none")] == 32
    assert summary.seconds_by_command_state[("Query", "waiting_for_table_metadata_lock")] == 81
    assert summary.seconds_by_command_state[("Daemon", "innodb_purge_coordinator")] == 0  # NULL Time
    assert summary.by_command == {"Daemon": 1, "Sleep": 2, "Query": 5}
    assert summary.by_user == {"system user": 1, "app": 4, "batch": 2, "monitor": 1}
    assert summary.longest_query_seconds == 41


def test_the_sixteen_legacy_values():
    values = processlist_values(ROWS).values
    legacy = {name: value for name, value in values.items() if name.startswith("processlist_state_")}
    assert len(legacy) == 16
    assert legacy["processlist_state_none"] == 2
    assert legacy["processlist_state_sending_data"] == 1
    assert legacy["processlist_state_copying_to_tmp_table"] == 1
    # purge coordinator, 2 metadata lock waits, "starting"
    assert legacy["processlist_state_other"] == 4
    assert legacy["processlist_state_locked"] == 0
    assert sum(legacy.values()) == len(ROWS)


def test_series_shapes():
    reading = processlist_values(ROWS)
    assert reading.series["processlist_state_threads"][labels_of(state="sending_data")] == 1
    assert reading.series["processlist_threads"][labels_of(command="Query", state="waiting_for_table_metadata_lock")] == 2
    assert reading.series["processlist_seconds"][labels_of(command="Sleep", state="none")] == 32
    assert reading.series["processlist_command_threads"][labels_of(command="Sleep")] == 2
    assert reading.series["processlist_user_threads"][labels_of(user="batch")] == 2
    assert reading.values["processlist_rows"] == 8
    assert reading.values["processlist_longest_query_seconds"] == 41


def test_monitor_connection_can_be_left_out():
    reading = processlist_values(ROWS, exclude_id=11)
    assert reading.values["processlist_rows"] == 7
    assert reading.values["processlist_state_other"] == 3


def test_information_schema_upper_case_columns():
    rows = [{"ID": 3, "USER": "app", "COMMAND": "Query", "TIME": 4, "STATE": "statistics"}]
    values = processlist_values(rows).values
    assert values["processlist_state_statistics"] == 1
    assert values["processlist_longest_query_seconds"] == 4


def test_empty_processlist_counts_zero():
    reading = processlist_values([])
    assert reading.values["processlist_rows"] == 0
    assert reading.values["processlist_state_none"] == 0
    assert reading.series["processlist_state_threads"] == {}


def test_saved_box_table():
    text = (
        "+----+------+-----------+------+---------+------+----------+------------------+\n"
        "| Id | User | Host      | db   | Command | Time | State    | Info             |\n"
        "+----+------+-----------+------+---------+------+----------+------------------+\n"
        "|  4 | root | localhost | NULL | Query   |    0 | starting | show processlist |\n"
        "|  5 | app  | localhost | test | Sleep   |    9 |          | NULL             |\n"
        "+----+------+-----------+------+---------+------+----------+------------------+\n"
    )
    summary = summarise_processlist(parse_table_text(text))
    assert summary.by_state == {"starting": 1, "none": 1}
    assert summary.seconds_by_command_state[("Sleep", "none")] == 9


def test_rows_must_be_mappings():
    with pytest.raises(ValueError, match="processlist row 0"):
        summarise_processlist([(1, "root")])



@given(st.one_of(st.none(), st.text(), st.binary()))
def test_normalised_states_are_clean_label_values(state):
    label = normalise_state(state)
    assert label == "none" or (label.strip("_") == label and set(label) <= set("abcdefghijklmnopqrstuvwxyz0123456789_"))
    assert label and "__" not in label


def grouped_as_the_server_does(threads: list[dict], min_time: int) -> list[dict]:
    """What agents/sources/processlist.py's GROUP BY answers for these per-thread rows."""
    groups: dict[tuple, dict] = {}
    for thread in threads:
        seconds = thread["Time"] or 0
        key = (thread["User"], thread["Host"].split(":", 1)[0], thread["Command"], thread["State"])
        group = groups.setdefault(key, {"USER": key[0], "HOST": key[1], "COMMAND": key[2], "STATE": key[3],
                                        "THREADS": 0, "TIME": 0, "MAX_TIME": 0, "THREADS_FROM_MIN_TIME": 0,
                                        "TIME_FROM_MIN_TIME": 0})
        group["THREADS"] += 1
        group["TIME"] += seconds
        group["MAX_TIME"] = max(group["MAX_TIME"], seconds)
        if seconds >= min_time:
            group["THREADS_FROM_MIN_TIME"] += 1
            group["TIME_FROM_MIN_TIME"] += seconds
    # The server sends numbers as text; the parser takes both.
    return [{k: str(v) if isinstance(v, int) else v for k, v in group.items()} for group in groups.values()]


THREAD = st.fixed_dictionaries({
    "Id": st.integers(1, 10**6),
    "User": st.sampled_from(["app", "batch", "system user", ""]),
    "Host": st.sampled_from(["10.0.0.1:40000", "10.0.0.1:40001", "db-2:3306", "localhost", ""]),
    "Command": st.sampled_from(["Sleep", "Query", "Execute", "Daemon", "Binlog Dump"]),
    "Time": st.one_of(st.none(), st.integers(0, 5000)),
    "State": st.sampled_from([None, "", "Sending data", "User lock", "Waiting for table metadata lock"]),
})


@given(threads=st.lists(THREAD, max_size=40), min_time=st.sampled_from([0, 1, 30]))
def test_grouped_rows_count_as_the_threads_they_group(threads, min_time):
    from mysql_snmp.parsers.processlist import upstream_processlist_rows

    grouped = grouped_as_the_server_does(threads, min_time)
    per_thread, by_group = processlist_values(threads), processlist_values(grouped)
    assert by_group.values == per_thread.values
    assert by_group.series == per_thread.series
    assert upstream_processlist_rows(grouped, None, min_time) == upstream_processlist_rows(threads, None, min_time)
