from datetime import datetime, timedelta, timezone

import pytest

from mysql_snmp.parsers.heartbeat import (
    HeartbeatError,
    heartbeat_lag,
    heartbeat_timestamp,
    heartbeat_values,
    legacy_slave_lag,
)

# 2024-01-02T03:04:05.123456 UTC
TS = "2024-01-02T03:04:05.123456"
TS_EPOCH = 1704164645.123456


def test_utc_text_timestamp():
    assert heartbeat_timestamp(TS, utc=True) == pytest.approx(TS_EPOCH, abs=1e-6)
    assert heartbeat_lag(TS, now=TS_EPOCH + 2.5, utc=True) == pytest.approx(2.5, abs=1e-6)


def test_local_time_uses_the_given_zone():
    paris_winter = timezone(timedelta(hours=1))
    local_text = "2024-01-02 04:04:05.123456"  # pt-heartbeat without --utc on a UTC+1 host
    assert heartbeat_lag(local_text, now=TS_EPOCH + 1.0, local_zone=paris_winter) == pytest.approx(1.0, abs=1e-6)


def test_datetime_values_from_pymysql():
    assert heartbeat_lag(datetime(2024, 1, 2, 3, 4, 5, 123456), now=TS_EPOCH + 3, utc=True) == pytest.approx(3)
    aware = datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)
    assert heartbeat_lag(aware, now=TS_EPOCH + 3) == pytest.approx(3)


def test_clock_skew_clamps_at_zero():
    # The source's clock is 5 s ahead of ours: the row looks written in the future.
    assert heartbeat_lag(TS, now=TS_EPOCH - 5, utc=True) == 0.0


def test_legacy_lag_subtracts_the_update_interval_and_truncates():
    assert legacy_slave_lag(0.0) == 0
    assert legacy_slave_lag(0.9) == 0
    assert legacy_slave_lag(2.0) == 1
    assert legacy_slave_lag(4.6) == 3


def test_heartbeat_values_single_row():
    reading = heartbeat_values([{"ts": TS, "server_id": "1"}], now=TS_EPOCH + 7, utc=True)
    assert reading.values["heartbeat_lag_seconds"] == pytest.approx(7)
    assert reading.values["heartbeat_stored_timestamp_seconds"] == pytest.approx(TS_EPOCH)
    assert reading.values["heartbeat_source_server_id"] == 1


def test_heartbeat_values_chain_needs_the_source_server_id():
    rows = [{"ts": TS, "server_id": 1}, {"ts": "2024-01-02T03:04:09.123456", "server_id": 2}]
    with pytest.raises(HeartbeatError, match="server_id 1, 2"):
        heartbeat_values(rows, now=TS_EPOCH + 10, utc=True)
    reading = heartbeat_values(rows, now=TS_EPOCH + 10, utc=True, server_id=2)
    assert reading.values["heartbeat_lag_seconds"] == pytest.approx(6)
    with pytest.raises(HeartbeatError, match="no pt-heartbeat row for server_id 3"):
        heartbeat_values(rows, now=TS_EPOCH, utc=True, server_id=3)


def test_empty_table_gives_nothing():
    assert heartbeat_values([], now=TS_EPOCH).values == {}


def test_bad_timestamps_are_clear_errors():
    with pytest.raises(HeartbeatError, match="not a timestamp"):
        heartbeat_lag("yesterday", now=TS_EPOCH)
    with pytest.raises(HeartbeatError, match="empty"):
        heartbeat_lag("", now=TS_EPOCH)
    with pytest.raises(HeartbeatError, match="no ts column"):
        heartbeat_values([{"server_id": 1}], now=TS_EPOCH)


def test_every_row_per_server_id():
    from mysql_snmp.parsers.heartbeat import heartbeat_row_series

    rows = [{"ts": "2023-11-14T22:13:20.250000", "server_id": 1}, {"ts": "2023-11-14T22:13:19", "server_id": "7"},
            {"ts": "2023-11-14T22:13:19", "server_id": None}]
    series = heartbeat_row_series(rows, now=1700000003.5, utc=True)
    assert series["heartbeat_row_stored_timestamp_seconds"] == {(("server_id", "1"),): 1700000000.25,
                                                               (("server_id", "7"),): 1699999999.0}
    assert set(series["heartbeat_row_now_timestamp_seconds"].values()) == {1700000003.5}
    assert heartbeat_row_series([], now=1.0) == {}
