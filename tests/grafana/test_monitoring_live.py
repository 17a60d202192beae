"""The boards and rules against a real Prometheus scraping our exporter on a primary and a GTID replica.

Debian's prometheus runs on loopback (temp data dir, free port, 1 s scrape and rule
evaluation) with the committed rule files.  Debian's pt-heartbeat writes heartbeat rows on
the primary and a small write workload runs; then every dashboard query, with its
variables substituted, must return a series, every rule must evaluate and name only
metrics Prometheus has, and stopping the replica's SQL thread must make the alert pending.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import yaml

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.generate import served_names
from mysql_snmp.agents.generate.served_names import replica_column
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.exporter_harness import running_exporter

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
RULE_FILES = sorted((REPO / "grafana" / "rules").glob("*.rules.yml"))
BOARDS = sorted((REPO / "grafana" / "dashboards").glob("*.json"))
EXPORTER_FLAGS = ("--collect.heartbeat", "--collect.binlog_size", "--collect.perf_schema.memory_events",
                  "--collect.info_schema.processlist", "--collect.info_schema.innodb_metrics")
RATE_INTERVAL = "10s"  # what Grafana's $__rate_interval is at a 1 s scrape interval and a short range

# Names a rule may use that this MariaDB 10.11 pair cannot have, and why.  Each sits beside
# an alternative in an 'or' (the other flavour's spelling) or only exists in a state a test
# of a few seconds cannot reach.
ABSENT_HERE = {
    replica_column("Replica_IO_Running"): "MySQL 8.0.22+ column name",
    replica_column("Replica_SQL_Running"): "MySQL 8.0.22+ column name",
    replica_column("Seconds_Behind_Source"): "MySQL 8.0.22+ column name",
    served_names.served(CATALOG, "innodb_log_max_checkpoint_age_bytes").name: "Percona Server's InnoDB status only",
    served_names.served(CATALOG, "leak_time_to_limit_seconds").name: "only once the leak detector sees growth",
    served_names.served(CATALOG, "status_innodb_rows_read").name: "MariaDB 10.11 prints no Innodb_rows_*",
}


def api(base: str, path: str, **params: str) -> dict:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}" if params else base + path
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"{path} {params}: HTTP {exc.code}: {exc.read().decode()[:500]}") from None
    assert body["status"] == "success", body
    return body["data"]


@contextmanager
def prometheus(targets: list[str]):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("prometheus is not installed (Debian package prometheus)")
    port = free_loopback_port()
    with tempfile.TemporaryDirectory(prefix="prometheus-") as directory:
        config = Path(directory) / "prometheus.yml"
        config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
            "rule_files": [str(path) for path in RULE_FILES],
            "scrape_configs": [{"job_name": "mysql", "static_configs": [{"targets": targets}]}],
        }))
        log = Path(directory) / "prometheus.log"
        with log.open("w") as log_file:
            process = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={directory}/data",
                 f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"],
                stdout=subprocess.DEVNULL, stderr=log_file)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(base + "/-/ready", timeout=1)
                    break
                except OSError:
                    assert process.poll() is None, log.read_text()[-2000:]
                    assert time.monotonic() < deadline, "prometheus not ready in 30 s"
                    time.sleep(0.2)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


@contextmanager
def pt_heartbeat(server):
    """Debian's pt-heartbeat updating heartbeat.heartbeat on ``server`` every 0.5 s."""
    binary = shutil.which("pt-heartbeat")
    if binary is None:
        pytest.fail("pt-heartbeat is not installed (Debian package percona-toolkit)")
    server.execute("CREATE DATABASE IF NOT EXISTS heartbeat")
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [binary, "--update", "--create-table", "--database=heartbeat", "--host=127.0.0.1",
             f"--port={server.port}", "--user=root", "--interval=0.5"],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            still_running = process.poll() is None
            process.terminate()
            process.wait(timeout=30)
            log.seek(0)
            assert still_running, f"pt-heartbeat exited: {log.read()[-2000:]}"


@contextmanager
def write_workload(server, seconds: float = 120.0):
    """Inserts, updates and reads on ``server`` until the block ends (at most ``seconds``)."""
    server.execute("CREATE DATABASE IF NOT EXISTS load_test",
                   "CREATE TABLE IF NOT EXISTS load_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB")
    stop = threading.Event()

    def run():
        conn = server.connect()
        try:
            deadline = time.monotonic() + seconds
            with conn.cursor() as cur:
                while not stop.is_set() and time.monotonic() < deadline:
                    cur.execute("INSERT INTO load_test.t (v) VALUES (1), (2), (3)")
                    cur.execute("UPDATE load_test.t SET v = v + 1 ORDER BY id DESC LIMIT 3")
                    cur.execute("SELECT COUNT(*), SUM(v) FROM load_test.t")
                    cur.fetchall()
                    conn.commit()
                    stop.wait(0.05)
        finally:
            conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def grant_heartbeat(server, user) -> None:
    server.execute(f"GRANT SELECT ON heartbeat.* TO '{user.name}'@'127.0.0.1'")


def substituted(expr: str, instances: str) -> str:
    return (expr.replace("$__rate_interval", RATE_INTERVAL).replace("$job", "mysql")
            .replace("$instance", instances))


_NOT_METRICS = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"|(?:on|ignoring|by|without|group_left|group_right)\s*\([^)]*\)")
_KEYWORDS = {"and", "or", "unless", "on", "ignoring", "by", "without", "group_left", "group_right", "offset", "bool"}


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression: identifiers that are neither functions, keywords nor labels."""
    text = _NOT_METRICS.sub(" ", expr)
    names = set()
    for match in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        word = match.group()
        rest = text[match.end():].lstrip()
        if word in _KEYWORDS or rest.startswith("(") or re.fullmatch(r"\d+[smhdwy]", word):
            continue
        if text[max(0, match.start() - 1)].isdigit():  # 1e6, 7d
            continue
        names.add(word)
    return names


def stopped_sql_alerts(base: str) -> list[dict]:
    return [a for a in api(base, "/api/v1/alerts")["alerts"]
            if a["labels"]["alertname"] == "MySQLReplicationSQLThreadStopped"]


def test_metric_names_reads_promql():
    assert metric_names('rate(a_total{x="y"}[5m]) / on (instance, job) group_left() b or up{job=~"m.*"} == 0') \
        == {"a_total", "b", "up"}


def test_boards_and_rules_on_a_real_prometheus(mariadb, mariadb_replica, make_monitoring_user):
    with ExitStack() as stack:
        stack.enter_context(pt_heartbeat(mariadb))
        stack.enter_context(write_workload(mariadb))
        targets = []
        for server in (mariadb, mariadb_replica):
            user = make_monitoring_user(server)
            grant_heartbeat(server, user)
            exporter = stack.enter_context(running_exporter(f"--config.my-cnf={user.my_cnf}", *EXPORTER_FLAGS))
            targets.append(exporter.url.removeprefix("http://"))
        base = stack.enter_context(prometheus(targets))

        # Until every target has been scraped long enough for a 10 s rate, and the rules ran.
        deadline = time.monotonic() + 60
        while True:
            ups = api(base, "/api/v1/query", query=f"count_over_time({served_names.UP}[15s]) >= 10")
            if len(ups["result"]) == 2:
                break
            assert time.monotonic() < deadline, f"targets not scraped: {api(base, '/api/v1/targets')}"
            time.sleep(1)

        # Grafana's "All" of a multi-value variable: the values joined by |.
        instances = "|".join(api(base, "/api/v1/label/instance/values"))
        assert sorted(api(base, "/api/v1/label/instance/values")) == sorted(targets)
        empty = []
        for board in BOARDS:
            document = json.loads(board.read_text())
            for panel in document["panels"]:
                for target in panel["targets"]:
                    expr = substituted(target["expr"], instances)
                    if not api(base, "/api/v1/query", query=expr)["result"]:
                        empty.append(f"{board.name}: {panel['title']}: {expr}")
            for annotation in document.get("annotations", {}).get("list", []):
                api(base, "/api/v1/query", query=substituted(annotation["expr"], instances))  # evaluates
        assert empty == [], "panels without a series:\n" + "\n".join(empty)

        names = set(api(base, "/api/v1/label/__name__/values"))
        groups = api(base, "/api/v1/rules")["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        documents = [yaml.safe_load(path.read_text()) for path in RULE_FILES]
        assert len(rules) == sum(len(group["rules"]) for document in documents for group in document["groups"])
        missing = []
        for rule in rules:
            assert rule["health"] == "ok", rule
            api(base, "/api/v1/query", query=rule["query"])
            for name in metric_names(rule["query"]):
                if name not in names and name not in ABSENT_HERE:
                    missing.append(f"{rule['name']}: {name}")
        assert missing == [], "rules naming metrics Prometheus does not have:\n" + "\n".join(missing)

        # Real values, not just series: the replica applies pt-heartbeat's rows within seconds,
        # and nothing is stopped yet.
        lag = api(base, "/api/v1/query", query=f'{served_names.served(CATALOG, "heartbeat_lag_seconds").name}'
                                                f'{{instance="{targets[1]}"}}')["result"]
        assert len(lag) == 1 and 0 <= float(lag[0]["value"][1]) < 10, lag
        assert stopped_sql_alerts(base) == []
        # query_response_time is on by default and these servers lack its plugin: success 0 at every
        # scrape, yet no failing collector (else the alert would fire on every plain MariaDB).
        lacking = api(base, "/api/v1/query", query=f'{served_names.COLLECTOR_SUCCESS}'
                                                   f'{{collector="collect.info_schema.query_response_time"}} == 0')
        assert len(lacking["result"]) == 2, lacking
        (failing_rule,) = [rule for rule in rules if rule["name"] == "MySQLCollectorFailing"]
        assert api(base, "/api/v1/query", query=failing_rule["query"])["result"] == []

        mariadb_replica.execute("STOP SLAVE SQL_THREAD")
        try:
            deadline = time.monotonic() + 20
            state = None
            while state != "pending":
                assert time.monotonic() < deadline, f"alert not pending: {api(base, '/api/v1/alerts')}"
                time.sleep(0.5)
                alerts = stopped_sql_alerts(base)
                assert len(alerts) <= 1
                state = alerts[0]["state"] if alerts else None
            assert alerts[0]["labels"]["instance"] == targets[1]
        finally:
            mariadb_replica.execute("START SLAVE SQL_THREAD")
