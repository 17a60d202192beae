"""Every name the non-InnoDB parsers emit is catalogued with the same labels, and
every catalogued replication/binlog/processlist/host/process/heartbeat value is emitted."""

from collections import namedtuple

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.parsers.binlog import binlog_values
from mysql_snmp.parsers.heartbeat import heartbeat_row_series, heartbeat_values
from mysql_snmp.parsers.host import PageFaults, host_values, process_values
from mysql_snmp.parsers.processlist import processlist_values
from mysql_snmp.parsers.replication import parse_replica_status, replica_values
from mysql_snmp.parsers.values import CatalogValues

SOURCES = ("replication", "binlog", "processlist", "host", "process", "heartbeat")

MARIADB_ROW = {
    "Connection_name": "m1", "Slave_IO_State": "Waiting for master to send event", "Master_Host": "h",
    "Master_User": "u", "Master_Port": 3306, "Master_Log_File": "b.000002", "Read_Master_Log_Pos": 342,
    "Relay_Master_Log_File": "b.000002", "Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes",
    "Exec_Master_Log_Pos": 342, "Relay_Log_Space": 2785, "Seconds_Behind_Master": 0, "Last_IO_Errno": 0,
    "Last_IO_Error": "", "Last_SQL_Errno": 0, "Last_SQL_Error": "", "Master_Server_Id": 765,
    "Using_Gtid": "Slave_Pos", "Gtid_IO_Pos": "0-765-9", "SQL_Delay": 0, "SQL_Remaining_Delay": None,
    "Slave_SQL_Running_State": "Slave has read all relay log", "Retried_transactions": 0,
    "Slave_received_heartbeats": 17, "Gtid_Slave_Pos": "0-765-9",
}
MYSQL_ROW = {"Channel_Name": "", "Source_UUID": "u-1", "Replica_IO_Running": "Connecting",
             "Replica_SQL_Running": "No", "Seconds_Behind_Source": None, "Relay_Log_Space": 10}


def readings():
    channels = parse_replica_status([MARIADB_ROW, MYSQL_ROW])
    yield replica_values(channels)
    yield binlog_values(
        [{"File": "b.000003", "Position": 4, "Binlog_Do_DB": "", "Binlog_Ignore_DB": "", "Executed_Gtid_Set": ""}],
        [{"Log_name": "b.000003", "File_size": 4, "Encrypted": "No"}],
    )
    yield processlist_values([{"Id": 1, "User": "a", "Command": "Query", "Time": 2, "State": "init"}])
    cpu = namedtuple("scputimes", "user system idle")(1.0, 2.0, 3.0)
    memory = namedtuple("svmem", "total available used free buffers cached")(6, 5, 4, 3, 2, 1)
    swap = namedtuple("sswap", "total used free sin sout")(5, 4, 3, 2, 1)
    yield host_values((0.1, 0.2, 0.3), cpu, memory, swap, 1.0, 2)
    yield process_values(
        namedtuple("pmem", "rss vms")(1, 2), namedtuple("pcputimes", "user system")(1.0, 2.0), 3, 4,
        namedtuple("pio", "read_bytes write_bytes")(5, 6), PageFaults(7, 8), 9.0, 10,
    )
    yield heartbeat_values([{"ts": "2024-01-02T03:04:05", "server_id": 1}], now=1704164650.0, utc=True)
    yield CatalogValues(series=heartbeat_row_series([{"ts": "2024-01-02T03:04:05", "server_id": 1}],
                                                    now=1704164650.0, utc=True))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_emitted_names_are_catalogued_with_their_labels(catalog):
    for reading in readings():
        for name in reading.values:
            metric = catalog.by_name(name)
            assert metric.source.kind in SOURCES and metric.labels == (), name
        for name, points in reading.series.items():
            metric = catalog.by_name(name)
            assert metric.source.kind in SOURCES, name
            for labels in points:
                assert tuple(label for label, _ in labels) == tuple(sorted(metric.labels)), name


def test_every_catalogued_value_of_these_sources_is_emitted(catalog):
    emitted = set()
    for reading in readings():
        emitted |= set(reading.values) | set(reading.series)
    catalogued = {metric.name for kind in SOURCES for metric in catalog.from_source(kind)}
    assert catalogued - emitted == set()
