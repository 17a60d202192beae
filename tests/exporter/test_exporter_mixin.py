"""mysqld_exporter's mixin (../shared/reference/mysqld-mixin) on a real Prometheus scraping us.

A primary and a replica, one exporter each, scraped every second by Prometheus with the
mixin's recording and alert rules loaded as they ship.  Every rule must evaluate without
error on series that exist (Galera's excepted: this MariaDB runs without Galera, and we
serve no wsrep_* status then), as must the dashboard's queries; and with the replica's SQL
thread stopped, then catching up on an old event, the replication alerts go pending within
their `for:`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from exporter_harness import running_exporter

from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.support import create_monitoring_user, wait_for_replication

pytestmark = pytest.mark.live

MIXIN = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "mysqld-mixin"
RULE_FILES = ("rules/rules.yaml", "alerts/general.yaml", "alerts/galera.yaml")
# Series only a Galera node has (and, with wsrep off, mysqld_exporter's own wsrep_* noise).
GALERA_ONLY = re.compile(r"^mysql_(global_status_wsrep_|galera_)")
# Metric names in an expression: the exporter's, and the rules' recorded ones (level:name:ops).
NAME = re.compile(r"\b(mysql_[a-zA-Z0-9_]+|(?:instance|job):[a-zA-Z0-9_:]+)")


class Prometheus:
    def __init__(self, binary: str, directory: Path, targets: dict[str, str]):
        self.port = free_loopback_port()
        config = directory / "prometheus.yml"
        jobs = "".join(f"  - job_name: {job}\n    static_configs:\n      - targets: ['{address}']\n"
                       for job, address in targets.items())
        rule_files = "".join(f"  - {MIXIN.resolve() / name}\n" for name in RULE_FILES)
        config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                          f"rule_files:\n{rule_files}scrape_configs:\n{jobs}")
        self.process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def api(self, path: str, **params: str):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)["data"]

    def query(self, promql: str) -> list:
        return self.api("query", query=promql)["result"]

    def wait(self, what: str, check, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if check():
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f}s"
            time.sleep(0.5)

    def alert_states(self) -> dict[str, str]:
        return {a["labels"]["alertname"]: a["state"] for a in self.api("alerts")["alerts"]}

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def rule_expressions() -> list[tuple[str, str]]:
    import yaml

    rules = []
    for name in RULE_FILES:
        for group in yaml.safe_load((MIXIN / name).read_text())["groups"]:
            rules += [(rule.get("alert") or rule["record"], rule["expr"]) for rule in group["rules"]]
    return rules


def dashboard_expressions() -> list[str]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                found.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads((MIXIN / "dashboards" / "mysql-overview.json").read_text()))
    return found


def write_heartbeat(server) -> None:
    server.execute("CREATE DATABASE IF NOT EXISTS heartbeat",
                   "CREATE TABLE IF NOT EXISTS heartbeat.heartbeat (ts VARCHAR(26) NOT NULL, "
                   "server_id INT UNSIGNED NOT NULL PRIMARY KEY)",
                   "REPLACE INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)")


def test_mixin_rules_and_replication_alerts(mariadb, mariadb_replica, tmp_path):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("prometheus not installed (Debian package prometheus)")
    if not MIXIN.is_dir():
        pytest.skip("../shared absent: the mysqld-mixin reference is not available")
    write_heartbeat(mariadb)
    # Made on the primary, so replicated: the same user and grants on the replica.
    primary_user = create_monitoring_user(mariadb, tmp_path)
    mariadb.execute(f"GRANT SELECT ON heartbeat.* TO '{primary_user.name}'@'127.0.0.1'")
    wait_for_replication(mariadb_replica)
    replica_cnf = tmp_path / "replica.cnf"
    replica_cnf.write_text(primary_user.my_cnf.read_text().replace(f"port = {mariadb.port}",
                                                                  f"port = {mariadb_replica.port}"))
    replica_cnf.chmod(0o600)
    common = ("--no-collect.host", "--collect.heartbeat", "--collect.info_schema.processlist")
    with running_exporter(f"--config.my-cnf={primary_user.my_cnf}", *common) as primary, \
            running_exporter(f"--config.my-cnf={replica_cnf}", *common) as replica:
        prometheus = Prometheus(binary, tmp_path, {"primary": primary.url.removeprefix("http://"),
                                                   "replica": replica.url.removeprefix("http://")})
        locker = None
        try:
            prometheus.wait("both targets scraped", lambda: len(prometheus.query("mysql_up == 1")) == 2, 60)
            prometheus.wait("recording rules evaluated", lambda: prometheus.query("instance:mysql_slave_lag_seconds")
                            and prometheus.query("instance:mysql_heartbeat_lag_seconds"), 30)

            # Every rule evaluates without error, on series that exist.
            groups = prometheus.api("rules")["groups"]
            health = {rule["name"]: (rule["health"], rule.get("lastError", "")) for g in groups for rule in g["rules"]}
            assert len(health) == len(rule_expressions())
            assert {name: h for name, h in health.items() if h[0] != "ok"} == {}
            missing = set()
            for _, expr in rule_expressions():
                for name in NAME.findall(expr):
                    if not GALERA_ONLY.match(name) and not prometheus.query(f"count({name})"):
                        missing.add(name)
            assert missing == set()
            # The dashboard also plots variables of older servers and other engines
            # (innodb_additional_mem_pool_size, tokudb_cache_size): only this server's count.
            printed = {f"mysql_global_variables_{name.lower()}" for name, _ in mariadb.execute("SHOW GLOBAL VARIABLES")}
            dashboard_missing = {name for expr in dashboard_expressions() for name in NAME.findall(expr)
                                 if name.startswith("mysql_") and not GALERA_ONLY.match(name)
                                 and (name in printed or not name.startswith("mysql_global_variables_"))
                                 and not prometheus.query(f"count({name})")}
            assert dashboard_missing == set()
            # Galera is off: none of its series, so MySQLGaleraNotReady cannot fire on a plain MariaDB.
            assert prometheus.query('count({__name__=~"mysql_global_status_wsrep.*"})') == []
            assert "MySQLGaleraNotReady" not in prometheus.alert_states()

            # The SQL thread stops; a write on the primary waits in the relay log.
            mariadb.execute("CREATE DATABASE IF NOT EXISTS mixin", "CREATE TABLE IF NOT EXISTS mixin.t (v INT)")
            wait_for_replication(mariadb_replica)
            mariadb_replica.execute("STOP SLAVE SQL_THREAD")
            time.sleep(1)
            mariadb.execute("INSERT INTO mixin.t VALUES (1)")
            written = time.monotonic()
            prometheus.wait("MySQLReplicationNotRunning pending (for: 2m)",
                            lambda: prometheus.alert_states().get("MySQLReplicationNotRunning") in ("pending", "firing"),
                            30)
            # No lag sample while the thread is stopped (a NaN would poison predict_linear).
            assert prometheus.query("mysql_slave_status_seconds_behind_master") == []

            # 35 s later the thread restarts but the old event waits on a lock: lag 35 s and rising.
            time.sleep(max(0.0, 35 - (time.monotonic() - written)))
            locker = mariadb_replica.connect(autocommit=False)
            with locker.cursor() as cursor:
                cursor.execute("LOCK TABLES mixin.t WRITE")
            mariadb_replica.execute("START SLAVE SQL_THREAD")
            prometheus.wait("MySQLReplicationLag pending (for: 1m)",
                            lambda: prometheus.alert_states().get("MySQLReplicationLag") in ("pending", "firing"),
                            45)
            lag = prometheus.query("instance:mysql_slave_lag_seconds")
            assert lag and float(lag[0]["value"][1]) > 30
        finally:
            if locker is not None:
                locker.close()  # releases the lock; the replica catches up
            mariadb_replica.execute("START SLAVE SQL_THREAD")
            prometheus.close()
    wait_for_replication(mariadb_replica, timeout=60)
