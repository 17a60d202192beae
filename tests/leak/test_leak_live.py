"""End to end on a real MariaDB: tables created (and opened) while the detector samples.

The clock is compressed: each collection gets a synthetic timestamp 15 s after the
previous one, so half an hour of monitoring runs in seconds.  With
table_definition_cache=10000 MariaDB 10.11 grows "Dictionary memory allocated" by about
2,248 bytes per table and keeps every opened definition, so the dictionary follows
Open_table_definitions: a leak with reason ``tables``, which clears when they are dropped.
"""

import pytest

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.config.settings import ConnectionSettings
from mysql_snmp.agents.leak.detector import LeakDetector
from mysql_snmp.agents.leak.series_detector import LEAKING, OK
from mysql_snmp.agents.snapshot import labels_of
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB

pytestmark = pytest.mark.live

SERIES = "innodb_mem_dictionary_bytes"
STEP_SECONDS = 15.0
TABLES_PER_STEP = 8


@pytest.fixture(scope="module")
def server():
    with ThrowawayMariaDB(extra_args=("--table-definition-cache=10000",)) as server:
        server.execute("CREATE DATABASE leak_probe")
        yield server


class CompressedClock:
    """Collects a snapshot and stamps it STEP_SECONDS after the previous one."""

    def __init__(self, collector, detector):
        self.collector = collector
        self.detector = detector
        self.now = 1_700_000_000.0
        self.events = []

    def sample(self):
        snapshot = self.collector.collect(sources={"global_status", "innodb_status"})
        assert snapshot.up, snapshot.error
        self.now += STEP_SECONDS
        snapshot.timestamp = self.now
        self.detector.observe(snapshot)
        self.events.extend(self.detector.changes)
        return snapshot


def test_tables_created_and_opened_are_a_leak_for_reason_tables_that_clears_on_drop(server, tmp_path):
    # the compressed clock's 37.5 idle minutes stand for the day of history leaking needs
    detector = LeakDetector({"series": [{"name": SERIES, "explained_by": "status_open_table_definitions"}],
                             "mature_baseline_seconds": 1800},
                            state_path=tmp_path / "leak-state.json")
    settings = ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")
    with Collector(settings, host_metrics="off") as collector:
        clock = CompressedClock(collector, detector)
        first = clock.sample()
        baseline_bytes = first.values[SERIES]
        baseline_tables = first.values["status_open_table_definitions"]
        for _ in range(150):  # 37.5 compressed minutes of an idle server: the baseline
            clock.sample()
        assert detector.detectors[SERIES].state == OK

        conn = server.connect(autocommit=True)
        created = 0
        try:
            with conn.cursor() as cur:
                for _ in range(90):  # 22.5 compressed minutes of steady table growth
                    for _ in range(TABLES_PER_STEP):
                        created += 1
                        cur.execute(f"CREATE TABLE leak_probe.t{created} "
                                    "(id INT PRIMARY KEY, name VARCHAR(64), grp INT, KEY(grp), KEY(name))")
                        cur.execute(f"SELECT COUNT(*) FROM leak_probe.t{created}")  # open its definition
                    snapshot = clock.sample()
                    if detector.detectors[SERIES].state == LEAKING:
                        break
        finally:
            conn.close()

        labels = labels_of(series=SERIES)
        assert detector.detectors[SERIES].state == LEAKING, clock.events
        leaking = clock.events[-1]
        assert (leaking.old_name, leaking.new_name, leaking.reason) == ("suspect", "leaking", "tables")
        assert snapshot.series["leak_state"][labels] == LEAKING
        assert snapshot.series["leak_reason"][labels_of(series=SERIES, reason="tables")] == 1
        # what the server grew by is what the detector measured: ~2,248 bytes per table
        grown = snapshot.values[SERIES] - baseline_bytes
        tables = snapshot.values["status_open_table_definitions"] - baseline_tables
        assert tables >= created * 0.9
        assert 1500 < grown / created < 4000
        rate = snapshot.series["leak_growth_bytes_per_hour"][labels]
        expected_rate = grown / created * TABLES_PER_STEP * 3600 / STEP_SECONDS
        assert 0.6 * expected_rate < rate < 1.4 * expected_rate

        server.execute(*(f"DROP TABLE leak_probe.t{i}" for i in range(1, created + 1)))
        for _ in range(20):
            snapshot = clock.sample()
            if detector.detectors[SERIES].state == OK:
                break
        assert detector.detectors[SERIES].state == OK
        cleared = clock.events[-1]
        assert (cleared.old_name, cleared.new_name) == ("leaking", "ok")
        assert snapshot.series["leak_state"][labels] == OK
        assert snapshot.values[SERIES] < baseline_bytes + 64 * 1024
    detector.close()
    assert (tmp_path / "leak-state.json").exists()
