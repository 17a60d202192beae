"""Many /probe targets on a few collection threads: the exporter's threads stay bounded whatever the
number of targets, and every probe is still answered with the server's values."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from tests.faults.exporter_process import start_exporter

TARGETS = 40
WORKERS = 4
MAX_CONNECTIONS = 8
# Main, the HTTP accept loop, the idle-target sweeper and the closer, and one spare.
OWN_THREADS = 5


def test_forty_targets_on_four_workers_keep_the_threads_bounded(mariadb, monitoring_user, tmp_path):
    my_cnf = monitoring_user.my_cnf
    my_cnf.write_text(my_cnf.read_text() + "".join(
        f"[client.t{i}]\nhost = 127.0.0.1\nport = {mariadb.port}\n" for i in range(TARGETS)))
    exporter = start_exporter(my_cnf, tmp_path, f"--exporter.collection-workers={WORKERS}",
                              f"--web.max-connections={MAX_CONNECTIONS}", "--no-collect.host",
                              # the test server has no QUERY_RESPONSE_TIME: every other default collector is served
                              "--no-collect.info_schema.query_response_time")
    most = [exporter.threads()]
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.01):
            most[0] = max(most[0], exporter.threads())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        def probe(i: int):
            scrape = exporter.scrape(f"/probe?target=127.0.0.1:{mariadb.port}&auth_module=client.t{i % TARGETS}")
            assert scrape.status == 200, scrape.body[:300]
            return scrape.parsed()

        with ThreadPoolExecutor(MAX_CONNECTIONS - 2) as clients:
            bodies = list(clients.map(probe, range(3 * TARGETS)))
        sampling.set()
        sampler.join()
        uptime = mariadb.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1]
        for parsed in bodies:
            assert parsed.value("mysql_up") == 1
            assert 1 <= parsed.value("mysql_global_status_uptime") <= float(uptime) + 60
            failed = {k: v for k, v in parsed.samples["mysql_exporter_collector_success"].items() if v != 1}
            assert not failed, failed
        assert most[0] <= MAX_CONNECTIONS + WORKERS + OWN_THREADS, most[0]
        assert exporter.threads() <= MAX_CONNECTIONS + WORKERS + OWN_THREADS
    finally:
        sampling.set()
        exporter.stop()
