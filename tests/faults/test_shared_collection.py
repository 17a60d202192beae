"""Concurrent scrapes of one target share one collection and one encoding of its values.

The exporter in-process against a MariaDB of the test's own, frozen (SIGSTOP) while the scrapes
arrive, so that every one of them is inside the exporter, waiting on the same collection, before
that collection can finish.  Counted with the exporter's own counters: collections run (the
exposed ``mysql_agent_collections_total`` and the target's count) and shared parts built."""

from __future__ import annotations

import gzip as gzip_format
import threading
import urllib.request

import pytest

from tests.exporter.exporter_harness import Scrape, running_exporter
from tests.faults.faultkit import frozen, own_mariadb, scrape, seconds_until
from tests.support import create_monitoring_user

SCRAPERS = 20
TIMEOUT = 30.0  # the scrape timeout the scrapers send: far beyond the short freeze


@pytest.fixture(scope="module")
def server():
    with own_mariadb(server_id=34) as mariadb:
        yield mariadb


@pytest.mark.parametrize("gzip", [False, True])
def test_concurrent_scrapes_share_one_collection(server, tmp_path, gzip):
    user = create_monitoring_user(server, tmp_path)
    headers = {"X-Prometheus-Scrape-Timeout-Seconds": str(TIMEOUT)}
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
        before = scrape(exporter, TIMEOUT)
        target = exporter.app.default_target()
        counters = target.counters_now()
        builds = target.bodies.builds
        results: list = [None] * SCRAPERS

        def one(index: int) -> None:
            # urllib does not decompress: ask for gzip by hand and undo it here.
            if gzip:
                request = urllib.request.Request(exporter.url + "/metrics",
                                                 headers={**headers, "Accept-Encoding": "gzip"})
                with urllib.request.urlopen(request, timeout=60) as response:
                    assert response.headers["Content-Encoding"] == "gzip"
                    results[index] = Scrape(gzip_format.decompress(response.read()).decode())
            else:
                results[index] = exporter.scrape(headers=headers)

        threads = [threading.Thread(target=one, args=(n,)) for n in range(SCRAPERS)]
        with frozen(server):
            for thread in threads:
                thread.start()
            # Every request is in Target.scrape: the first one's collection hangs on the frozen server.
            seconds_until(lambda: target.counters_now().scrapes >= counters.scrapes + SCRAPERS, timeout=20,
                          interval=0.02, what="every scrape waiting on the collection")
        for thread in threads:
            thread.join(60)
        assert all(result is not None for result in results)

        collections = {r.value("mysql_agent_collections_total") for r in results}
        assert collections == {before.value("mysql_agent_collections_total") + 1}
        assert target.counters_now().collections == counters.collections + 1
        assert target.bodies.builds == builds + 1  # the MySQL part encoded once for all of them
        # The same values, read once ...
        for name in ("mysql_global_status_questions", "mysql_global_status_uptime",
                     "mysql_agent_last_collection_timestamp_seconds"):
            assert len({r.value(name) for r in results}) == 1, name
        assert all(r.value("mysql_up") == 1 for r in results)
        # ... while every request was counted: each answer, made after all had arrived, says so.
        assert {r.value("mysql_exporter_scrapes_total") for r in results} == {counters.scrapes + SCRAPERS}


def test_a_scrape_after_the_collection_ended_gets_a_new_one(server, tmp_path):
    """Sharing never serves a collection that finished before the request arrived."""
    user = create_monitoring_user(server, tmp_path)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
        totals = [scrape(exporter, TIMEOUT).value("mysql_agent_collections_total") for _ in range(3)]
    assert totals == [totals[0], totals[0] + 1, totals[0] + 2]
