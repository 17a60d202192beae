"""/probe targets: every spelling of one address is one target with one connection; at most
MAX_PROBE_TARGETS are remembered and an idle one gives its connection back; 500 fit in a budget."""

from __future__ import annotations

import os
import time
import pymysql

from mysql_snmp.agents.exporter.probe_targets import ProbeTargets, canonical_target
from tests.fake_mysql_server import rogue_server
from tests.faults.exporter_process import start_exporter
from tests.faults.faultkit import own_mariadb
from tests.faults.hostile_kit import MB, go_exporter, remembered_targets_rss
from tests.faults.report import record_fault
from tests.support import create_monitoring_user

# The remembered /probe targets' budget (docs/security.md): RSS over the exporter's own, per target
# of a MariaDB probed with the default collectors (measured: about 400 KiB).
BUDGET_PER_TARGET = 512 << 10


def spellings(port: int) -> list[str]:
    return [f"127.0.0.1:{port}", f"127.0.0.1:0{port}", f"127.0.0.1:00{port}", f"127.1:{port}",
            f"0x7f.0.0.1:{port}", f"2130706433:{port}", f"127.000.000.001:{port}"]


def test_every_spelling_of_one_address_is_one_target_and_one_connection(tmp_path):
    with rogue_server() as server:
        names = spellings(server.port)
        # Control: each spelling reaches the same server, each on a connection of its own.
        before = server.connections
        for name in names:
            host, _, port = name.rpartition(":")
            pymysql.connect(host=host, port=int(port), user="monitor", password="secret").close()
        assert server.connections == before + len(names)
        assert len({canonical_target(name) for name in names}) == 1

        exporter = start_exporter(server.my_cnf(tmp_path), tmp_path)
        try:
            before = server.connections
            for _ in range(2):
                for name in names:
                    scrape = exporter.scrape(f"/probe?target={name}")
                    assert scrape.status == 200 and "\nmysql_up 1" in scrape.body, scrape.body[:300]
            ours = server.connections - before
        finally:
            exporter.stop()
        go_text = "not run"
        if os.path.exists("/usr/bin/prometheus-mysqld-exporter"):
            with go_exporter(server.my_cnf(tmp_path), tmp_path / "go.log") as go:
                answer = go.get(f"/probe?target={names[0]}")
            # 0.14, Debian's, predates /probe: it answers its landing page.
            go_text = "has no /probe" if answer and "mysql_up" not in answer[1] else "has /probe"
    assert ours == 1
    record_fault(f"/probe: {len(names)} spellings of one address, twice", "exporter",
                 f"{ours} connection, kept", go=go_text)


class FakeTarget:
    def __init__(self, last_used: float):
        self.last_used = last_used
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_remembered_targets_are_bounded_and_idle_ones_closed():
    now = [1000.0]
    targets = ProbeTargets(limit=3, idle_seconds=300, clock=lambda: now[0])
    made = [targets.add((f"db{i}:3306", "client"), FakeTarget(now[0])) for i in range(4)]
    assert len(targets) == 3 and targets.get(("db0:3306", "client")) is None
    wait_closed(made[0])
    now[0] += 200
    assert targets.get(("db1:3306", "client")) is made[1]  # scraped again, as Target.scrape marks it
    made[1].last_used = now[0]
    now[0] += 101
    assert targets.get(("db1:3306", "client")) is made[1]  # the idle two went first
    assert len(targets) == 1
    wait_closed(made[2])
    wait_closed(made[3])
    assert not made[1].closed
    targets.take_all()


def test_idle_targets_are_closed_without_any_further_request():
    targets = ProbeTargets(idle_seconds=0.2)
    made = targets.add(("db0:3306", "client"), FakeTarget(time.monotonic()))
    wait_closed(made)  # by the sweeper: nobody asked for a target since
    assert len(targets) == 0
    targets.take_all()


def wait_closed(target: FakeTarget) -> None:
    deadline = time.monotonic() + 5
    while not target.closed:
        assert time.monotonic() < deadline, "not closed"
        time.sleep(0.01)


def test_500_remembered_targets_fit_the_budget(tmp_path):
    with own_mariadb(server_id=41, extra_args=("--max-connections=600",)) as server:
        user = create_monitoring_user(server, tmp_path)
        measured = remembered_targets_rss(user.my_cnf, server.port, 500, tmp_path)
    assert measured.per_target < BUDGET_PER_TARGET, measured
    record_fault(f"/probe: {measured.count} MariaDB targets remembered", "exporter",
                 f"+{measured.grown / MB:.0f} MB RSS ({measured.per_target / 1024:.0f} KiB each), "
                 f"{measured.threads} threads, {measured.descriptors} fds")
