"""One path from value to name: nothing served twice, no catalog Prometheus name left unused.

client_python refuses a duplicate time series in a registry; the exporter builds its
families itself, so this test is what refuses them here.  And a catalog entry whose
value was collected must be on /metrics under the name the catalog gives it: a
catalog name /metrics never uses is a second naming path somewhere.
"""

from __future__ import annotations

from collections import Counter

import pytest
from exporter_harness import running_exporter

from mysql_snmp.agents.exporter.collectors import ALWAYS_EXPORTED_KINDS, COLLECTORS
from mysql_snmp.parsers.status import sample_number

pytestmark = pytest.mark.live

EVERY_COLLECTOR = [f"--collect.{c.name}" for c in COLLECTORS]


@pytest.fixture
def heartbeat_table(mariadb, monitoring_user):
    """The table pt-heartbeat writes (heartbeat.heartbeat, the collector's default), one row; and the
    grants of the off-by-default collectors."""
    mariadb.execute("CREATE DATABASE IF NOT EXISTS heartbeat",
                    "CREATE TABLE IF NOT EXISTS heartbeat.heartbeat (ts VARCHAR(26) NOT NULL, "
                    "server_id INT UNSIGNED NOT NULL PRIMARY KEY)",
                    "REPLACE INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)",
                    f"GRANT SELECT ON heartbeat.* TO '{monitoring_user.name}'@'127.0.0.1'",
                    # slave_hosts: SHOW REPLICA HOSTS needs it on MariaDB 10.5.9+.
                    f"GRANT REPLICATION MASTER ADMIN ON *.* TO '{monitoring_user.name}'@'127.0.0.1'")


def wire_name(spec) -> str:
    """The sample name the text format writes for a catalog family (a counter's ends in _total)."""
    return spec.name if spec.type != "counter" or spec.name.endswith("_total") else spec.name + "_total"


def upstream_labels(labels) -> tuple:
    """Labels as served: event_name without the --collect.perf_schema.memory_events.remove_prefix default."""
    return tuple(sorted((k, v.removeprefix("memory/") if k == "event_name" else v) for k, v in labels))


def served_series(text: str) -> Counter:
    """How often each series (sample name and labels) appears in a text exposition."""
    series = Counter()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series[line.rsplit(" ", 1)[0]] += 1
    return series


def test_no_series_and_no_family_served_twice(mariadb, monitoring_user, heartbeat_table):
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", *EVERY_COLLECTOR) as exporter:
        _, text, _ = exporter.get()
    families = Counter(line.split()[2] for line in text.splitlines() if line.startswith("# TYPE "))
    assert len(families) > 300
    assert [name for name, n in families.items() if n > 1] == []
    series = served_series(text)
    assert [name for name, n in series.items() if n > 1] == []


def test_every_collected_catalog_value_is_served_under_its_catalog_name(mariadb, monitoring_user, heartbeat_table):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS one_path",
                    "CREATE TABLE IF NOT EXISTS one_path.t (id INT PRIMARY KEY)",
                    "REPLACE INTO one_path.t VALUES (1)", "SELECT * FROM one_path.t")
    # A min-interval, so the target keeps the collection it served (without one it keeps none).
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--exporter.min-interval=3600",
                          *EVERY_COLLECTOR) as exporter:
        scrape = exporter.scrape()
        target = exporter.app.default_target()
        (record,) = target._last.values()  # the collection this scrape was served from
        catalog = exporter.app.catalog
    snapshot = record.snapshot
    kinds = set(ALWAYS_EXPORTED_KINDS).union(*(c.catalog_kinds for c in record.collectors))
    checked, unused = 0, []
    for metric in catalog:
        spec = metric.prometheus
        if spec is None or metric.source.kind not in kinds or metric.kind == "info":
            continue
        if metric.labels:
            wanted = [upstream_labels(labels) for labels, value in (snapshot.series.get(metric.name) or {}).items()
                      if value is None or sample_number(value) is not None]
        elif metric.name in snapshot.values and (snapshot.values[metric.name] is None
                                                 or sample_number(snapshot.values[metric.name]) is not None):
            wanted = [spec.labels]
        else:
            continue  # not collected from this server: nothing to serve
        served = scrape.samples.get(wire_name(spec), {})
        for labels in wanted:
            checked += 1
            if tuple(sorted(labels)) not in served:
                unused.append((metric.name, wire_name(spec), labels))
    assert checked > 600
    assert snapshot.series.get("heartbeat_row_stored_timestamp_seconds"), "the heartbeat collector ran"
    assert unused == []


def test_every_catalog_prometheus_name_belongs_to_a_collector(catalog=None):
    from mysql_snmp.agents.catalog import load_catalog

    catalog = load_catalog()
    served_kinds = set(ALWAYS_EXPORTED_KINDS).union(*(c.catalog_kinds for c in COLLECTORS))
    orphans = sorted(m.name for m in catalog if m.prometheus is not None and m.source.kind not in served_kinds)
    assert orphans == []
