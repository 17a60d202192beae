"""Fuzzing parse_replica_status and the values built from it with rows mixing every spelling of
the replica status columns, unknown columns and values of any type: a row that is not a mapping
is a one-line error, anything else is parsed, unreadable fields are listed as problems, and every
number and text served comes from the row."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.parsers.gtid import normalise_gtid_set
from mysql_snmp.parsers.replication import _FIELDS, parse_replica_status, replica_values
from mysql_snmp.parsers.values import text_of, typed_int
from tests.fuzz.budget import fuzz_settings, no_hang

COLUMNS = sorted({column for spec in _FIELDS for column in spec.columns}
                 | {"Channel_Name", "Connection_name", "Until_Condition", "Master_SSL_Allowed"})
columns = st.sampled_from(COLUMNS).flatmap(lambda c: st.sampled_from([c, c.lower(), c.upper()])) | st.text(max_size=6)
values = st.one_of(
    st.sampled_from(["Yes", "No", "Connecting", "yes ", "Slave_Pos", "Current_Pos", "", "NULL", "0", "1", "2",
                     "3e2", "-1", "18446744073709551616", "0-1-100,1-2-3", "abc"]),
    st.integers(-(2**64), 2**64).map(str), st.integers(-(2**64), 2**64), st.floats(), st.none(),
    st.text(max_size=12), st.binary(max_size=8),
)
rows = st.dictionaries(columns, values, max_size=14) | st.one_of(st.none(), st.integers(), st.lists(values, max_size=2))


def numbers_of(row) -> set:
    """Every integer the row's values state, and the codes of thread states and GTID modes it names."""
    found = set()
    for value in row.values():
        number = typed_int(value)
        if number is not None:
            found.add(number)
        text = (text_of(value) or "").strip().lower()
        found |= {"no": {0}, "yes": {1}, "connecting": {2}, "slave_pos": {1}, "current_pos": {1}}.get(text, set())
    return found


def texts_of(row) -> set:
    texts = {text_of(value) for value in row.values()}
    return texts | {normalise_gtid_set(text) for text in texts}


@fuzz_settings()
@given(rows=st.lists(rows, max_size=3))
def test_rows_parse_into_their_own_values_or_fail_on_one_line(rows):
    try:
        with no_hang():
            channels = parse_replica_status(rows)
    except ValueError as error:
        assert str(error) and "\n" not in str(error)
        assert not all(isinstance(row, dict) for row in rows)
        return
    with no_hang():
        reading = replica_values(channels)
    assert reading.values["replica_channels"] == len(rows)
    by_channel = {}
    for row, channel in zip(rows, channels):
        by_channel.setdefault(channel.channel, []).append(row)
    for name, series in reading.series.items():
        for labels, value in series.items():
            channel = dict(labels)["channel"]
            candidates = by_channel[channel]
            if value is None:
                continue
            if isinstance(value, str):
                assert any(value in texts_of(row) for row in candidates), (name, value)
            else:
                assert any(value in numbers_of(row) for row in candidates), (name, value)
