from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.parsers.values import CatalogValues, typed, typed_int
from mysql_snmp.agents.snapshot import Snapshot, labels_of


def test_integers_stay_exact_beyond_64_bits():
    assert typed("18446744073709551616") == 2**64
    assert typed(b"-42") == -42
    assert typed(" 7 ") == 7


def test_decimals_become_float():
    assert typed("10.000000") == 10.0
    assert typed("30.000") == 30.0
    assert typed(".5") == 0.5
    assert typed("1e3") == 1000.0


def test_boolean_spellings_fold_to_one_and_zero():
    for text in ("ON", "on", "Yes", "YES", "TRUE", "true"):
        assert typed(text) == 1, text
    for text in ("OFF", "off", "No", "NO", "FALSE", "false"):
        assert typed(text) == 0, text


def test_null_stays_none_and_text_is_kept():
    assert typed(None) is None
    assert typed("NULL") is None
    assert typed("Connecting") == "Connecting"
    assert typed("") == ""
    assert typed("10.11.19-MariaDB-0+deb12u1-log") == "10.11.19-MariaDB-0+deb12u1-log"
    assert typed("0-308-9") == "0-308-9"  # a MariaDB GTID, not a number
    assert typed("nan") == "nan"
    assert typed("1e999") == "1e999"  # overflows float: not a measurement


def test_non_ascii_digits_are_not_numbers():
    assert typed("١٢٣") == "١٢٣"


def test_bad_utf8_is_replaced_not_raised():
    assert typed(b"caf\xe9") == "caf\ufffd"


def test_values_pymysql_already_typed_pass_through():
    assert typed(5) == 5
    assert typed(True) == 1
    assert typed(2.5) == 2.5
    assert typed(Decimal("30.000")) == 30.0
    assert typed(Decimal("12")) == 12


def test_typed_int():
    assert typed_int("3306") == 3306
    assert typed_int("30.000") == 30
    assert typed_int("30.5") is None
    assert typed_int("Yes") == 1
    assert typed_int("mysql-bin.000002") is None
    assert typed_int(None) is None


def test_catalog_values_apply_to_snapshot():
    reading = CatalogValues(values={"binlog_files": 2})
    reading.add_series("replica_io_running", labels_of(channel="a"), 1)
    snapshot = Snapshot(target="t")
    reading.apply_to(snapshot)
    assert snapshot.values == {"binlog_files": 2}
    assert snapshot.series == {"replica_io_running": {(("channel", "a"),): 1}}


@given(st.one_of(st.text(), st.binary(), st.none()))
def test_typed_never_raises(value):
    result = typed(value)
    assert result is None or isinstance(result, (int, float, str))


@given(st.integers())
def test_integers_round_trip_exactly(number):
    assert typed(str(number)) == number
    assert typed(str(number).encode()) == number
