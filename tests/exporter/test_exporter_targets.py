"""Target bookkeeping on hand-built snapshots: not-local host metrics, deadlines, error counting."""

from __future__ import annotations

import logging
import threading
import time

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.collectors import BY_NAME, CompatOptions
from mysql_snmp.agents.exporter.exposition import scrape_families
from mysql_snmp.agents.exporter.targets import Target
from mysql_snmp.agents.snapshot import ServerInfo, Snapshot, SourceStatus


class ScriptedCollector:
    """Answers collect() with snapshots built by the test (no MySQL involved)."""

    def __init__(self, make_snapshot, release: threading.Event | None = None):
        self.make_snapshot = make_snapshot
        self.release = release
        self.calls = 0

    def collect(self, sources=None, deadline=None):
        self.calls += 1
        if self.release is not None:
            self.release.wait(10)
        return self.make_snapshot(sources)

    def close(self):
        pass


def snapshot(sources, not_local=()):
    snap = Snapshot(target="db:3306", up=True, server=ServerInfo("mariadb", (10, 11, 9), "10.11.9-MariaDB"))
    snap.raw["global_status"] = {"Uptime": 42, "Com_select": 7}
    for name in sources:
        if name in not_local:
            snap.sources[name] = SourceStatus(name, ok=False, duration_seconds=0.0, error="mysqld runs elsewhere",
                                              reason="not_local")
        else:
            snap.sources[name] = SourceStatus(name, ok=True, duration_seconds=0.001, statements=1)
    return snap


def families_by_name(outcome, target):
    families = scrape_families(outcome, target.counters_now(), load_catalog(), CompatOptions())
    return {f.name: f for f in families}


def test_host_collector_off_when_not_local_and_logged_once(caplog):
    collectors = (BY_NAME["global_status"], BY_NAME["host"])
    target = Target("db:3306", ScriptedCollector(lambda s: snapshot(s, not_local={"host", "process"})))
    with caplog.at_level(logging.INFO, logger="mysql_snmp.agents.exporter.targets"):
        for _ in range(2):
            outcome = target.scrape(collectors, time.monotonic() + 5)
    success = families_by_name(outcome, target)["mysql_exporter_collector_success"]
    assert {s.labels["collector"]: s.value for s in success.samples} == {"collect.global_status": 1.0}
    assert len([r for r in caplog.records if "does not run on the database host" in r.message]) == 1
    assert not target.counters.errors


def test_deadline_without_collection_shows_no_values():
    release = threading.Event()
    collectors = (BY_NAME["global_status"],)
    target = Target("db:3306", ScriptedCollector(snapshot, release), interrupt_grace=0.05)
    outcome = target.scrape(collectors, time.monotonic() + 0.3)
    release.set()
    assert outcome.record is None
    names = families_by_name(outcome, target)
    assert "mysql_global_status_uptime" not in names
    # The connection may well be open: a server that does not answer in time is not up.
    assert [s.value for s in names["mysql_up"].samples] == [0.0]
    assert "mysql_agent_data_age_seconds" not in names  # nothing was ever read from it
    assert [s.value for s in names["mysql_exporter_collector_success"].samples] == [0.0]
    assert target.counters.errors[("collect.global_status", "deadline")] == 1


def test_failed_source_is_counted_once_per_collection_with_its_reason():
    def failing(sources):
        snap = snapshot(sources)
        snap.sources["replication"] = SourceStatus("replication", ok=False, duration_seconds=0.0,
                                                   error="ERROR 1227", reason="privilege")
        return snap

    collectors = (BY_NAME["global_status"], BY_NAME["slave_status"])
    target = Target("db:3306", ScriptedCollector(failing), min_interval=60)
    for _ in range(3):  # one collection, two scrapes served from it
        outcome = target.scrape(collectors, time.monotonic() + 5)
    assert target.counters.errors == {("collect.slave_status", "privilege"): 1}
    assert target.counters.scrapes == 3 and target.collector.calls == 1
    names = families_by_name(outcome, target)
    assert names["mysql_global_status_uptime"].samples[0].value == 42.0
    last = names["mysql_exporter_last_success_timestamp_seconds"]
    assert {s.labels["collector"] for s in last.samples} == {"collect.global_status"}


def test_close_lets_the_running_collection_reach_the_observers_first():
    # The leak detector is an observer: closing it saves its history, so it must not run
    # while (or before) the last collection is being observed in the worker thread.
    events = []

    class RecordingObserver:
        def observe(self, snapshot):
            events.append("observe")

        def close(self):
            events.append("close")

    release = threading.Event()
    collector = ScriptedCollector(snapshot, release)
    target = Target("db:3306", collector, observers=[RecordingObserver()])
    scrape = threading.Thread(target=target.scrape, args=((BY_NAME["global_status"],), time.monotonic() + 30))
    scrape.start()
    while collector.calls == 0:
        time.sleep(0.01)
    closing = threading.Thread(target=target.close)
    closing.start()
    closing.join(1.0)  # before the collection ends: close must still be waiting for it
    release.set()
    closing.join(10)
    scrape.join(10)
    assert events == ["observe", "close"]


def test_data_age_counts_from_the_last_collection_that_reached_the_server():
    release = threading.Event()
    release.set()
    collectors = (BY_NAME["global_status"],)
    target = Target("db:3306", ScriptedCollector(snapshot, release), interrupt_grace=0.05)
    first = target.scrape(collectors, time.monotonic() + 5)
    read_at = first.record.snapshot.timestamp
    age = families_by_name(first, target)["mysql_agent_data_age_seconds"].samples[0].value
    assert 0 <= age < 1
    release.clear()
    time.sleep(0.3)
    late = target.scrape(collectors, time.monotonic() + 0.3)
    release.set()
    names = families_by_name(late, target)
    assert [s.value for s in names["mysql_up"].samples] == [0.0]
    (sample,) = names["mysql_agent_data_age_seconds"].samples
    assert sample.value >= time.time() - read_at - 0.05 >= 0.5


def test_remembered_collections_stay_bounded_whatever_collect_sets_scrapes_ask_for():
    from mysql_snmp.agents.exporter.collectors import COLLECTORS
    from mysql_snmp.agents.exporter.targets import MAX_REMEMBERED_SOURCE_SETS

    collector = ScriptedCollector(snapshot)
    target = Target("db:3306", collector, min_interval=60)
    singles = [(c,) for c in COLLECTORS[:MAX_REMEMBERED_SOURCE_SETS + 4]]
    for collectors in singles:
        assert target.scrape(collectors, time.monotonic() + 5).record is not None
    assert collector.calls == len(singles)
    assert len(target._last) == MAX_REMEMBERED_SOURCE_SETS
    # The most recent sets are still served from memory within min_interval, the oldest collect again.
    target.scrape(singles[-1], time.monotonic() + 5)
    assert collector.calls == len(singles)
    target.scrape(singles[0], time.monotonic() + 5)
    assert collector.calls == len(singles) + 1
    target.close()


class CountingCollector:
    """Holds each collection until released, and records how many of its own ran at once."""

    def __init__(self, shared: dict, lock: threading.Lock, release: threading.Event):
        self.shared, self.lock, self.release = shared, lock, release
        self.running = self.most = self.calls = 0

    def collect(self, sources=None, deadline=None):
        with self.lock:
            self.calls += 1
            self.running += 1
            self.most = max(self.most, self.running)
            self.shared["running"] += 1
            self.shared["most"] = max(self.shared["most"], self.shared["running"])
        self.release.wait(10)
        with self.lock:
            self.running -= 1
            self.shared["running"] -= 1
        return snapshot(sources)

    def close(self):
        pass


def test_targets_share_a_bounded_pool_and_each_collects_one_at_a_time():
    from mysql_snmp.agents.exporter.collect_pool import CollectPool

    pool = CollectPool(3)
    shared, lock, release = {"running": 0, "most": 0}, threading.Lock(), threading.Event()
    collectors = [CountingCollector(shared, lock, release) for _ in range(8)]
    targets = [Target(f"db{i}:3306", c, pool=pool) for i, c in enumerate(collectors)]
    # Two collector sets per target: two collections of one target, which must not overlap.
    sets = ((BY_NAME["global_status"],), (BY_NAME["global_variables"],))
    outcomes = []
    scrapes = [threading.Thread(target=lambda t=t, s=s: outcomes.append(t.scrape(s, time.monotonic() + 20)))
               for t in targets for s in sets]
    before = threading.active_count()
    for scrape in scrapes:
        scrape.start()
    time.sleep(0.5)
    workers = threading.active_count() - before - len(scrapes)
    release.set()
    for scrape in scrapes:
        scrape.join(20)
    assert len(outcomes) == 16 and all(o.record is not None for o in outcomes)
    assert all(c.calls == 2 for c in collectors)
    assert shared["most"] == 3  # every worker busy, never more
    assert max(c.most for c in collectors) == 1
    assert workers == 3
    for target in targets:
        target.close()
    pool.shutdown()


def test_a_collection_that_waits_past_its_deadline_for_a_worker_never_starts():
    from mysql_snmp.agents.exporter.collect_pool import CollectPool

    pool = CollectPool(1)
    release = threading.Event()
    busy = Target("busy:3306", ScriptedCollector(snapshot, release), pool=pool)
    starved_collector = ScriptedCollector(snapshot)
    starved = Target("starved:3306", starved_collector, pool=pool, interrupt_grace=0.05)
    holding = threading.Thread(target=busy.scrape, args=((BY_NAME["global_status"],), time.monotonic() + 20))
    holding.start()
    while not busy.collector.calls:
        time.sleep(0.01)
    outcome = starved.scrape((BY_NAME["global_status"],), time.monotonic() + 0.4)
    assert outcome.record is None
    assert starved.counters.errors[("collect.global_status", "deadline")] == 1
    release.set()
    holding.join(10)
    # The worker, free again, skips the stale collection: the server is never asked for it.
    assert starved.scrape((BY_NAME["global_status"],), time.monotonic() + 5).record is not None
    assert starved_collector.calls == 1
    busy.close()
    starved.close()
    pool.shutdown()


def test_probe_targets_share_one_interner_and_the_metrics_target_keeps_its_own(tmp_path):
    import argparse

    from mysql_snmp.agents.catalog import load_exporter_catalog
    from mysql_snmp.agents.exporter.app import PROBE_INTERNER_FAMILIES, ExporterApp
    from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args
    from mysql_snmp.agents.exporter.web_config import WebConfig

    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nuser = u\npassword = p\nhost = 127.0.0.1\nport = 3306\n"
                      "[client.a]\nuser = a\npassword = p\n")
    my_cnf.chmod(0o600)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = config_from_args(parser.parse_args([f"--config.my-cnf={my_cnf}", "--no-exporter.leak-detector",
                                                 "--exporter.probe-allowed-targets=127.0.0.1:*"]))
    app = ExporterApp(config, load_exporter_catalog(), WebConfig(), environ={})
    try:
        first, second = app.probe_target("127.0.0.1:3306", "client"), app.probe_target("127.0.0.1:3307", "client.a")
        assert first is not second
        shared = first.scrape_interner(1)
        # From the first scrape on: what other targets built is there already.
        assert shared is not None and shared is second.scrape_interner(1) is first.scrape_interner(5)
        assert shared.generation_size == PROBE_INTERNER_FAMILIES and not shared.per_scrape
        own = app.default_target()
        assert own.scrape_interner(1) is None  # its own pays from its second scrape
        assert own.scrape_interner(2) is own.scrape_interner(3) is not shared
    finally:
        app.close()
