"""The exporter against real throwaway MariaDB servers: values, labels, auth modules, replica, outages."""

from __future__ import annotations

import math
import shutil
import subprocess
import threading
import time

import psutil
import pytest
from exporter_harness import PROMETHEUS_ACCEPT, Scrape, running_exporter

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB

pytestmark = pytest.mark.live

DEFAULT_COLLECTORS = ("collect.global_status", "collect.global_variables", "collect.slave_status",
                      "collect.engine_innodb_status", "collect.host")


def sql_one(server, statement: str):
    return server.execute(statement)[0]


def sql_status(server, name: str) -> str:
    return sql_one(server, f"SHOW GLOBAL STATUS LIKE '{name}'")[1]


def caught_up_replica_status(replica, timeout: float = 20.0) -> dict:
    """SHOW SLAVE STATUS once both threads run and the applier has applied all it read."""
    deadline = time.monotonic() + timeout
    while True:
        conn = replica.connect()
        try:
            with conn.cursor() as cursor:
                cursor.execute("SHOW SLAVE STATUS")
                status = dict(zip([d[0] for d in cursor.description], cursor.fetchone() or ()))
        finally:
            conn.close()
        if (status.get("Slave_IO_Running") == "Yes" and status.get("Slave_SQL_Running") == "Yes"
                and status.get("Read_Master_Log_Pos") == status.get("Exec_Master_Log_Pos")):
            return status
        assert time.monotonic() < deadline, f"replica did not catch up: {status}"
        time.sleep(0.1)


def test_metrics_agree_with_sql(mariadb, monitoring_user):
    mariadb.execute("CREATE DATABASE IF NOT EXISTS exporter_live",
                    "CREATE TABLE IF NOT EXISTS exporter_live.t (id INT PRIMARY KEY AUTO_INCREMENT, v INT)",
                    "INSERT INTO exporter_live.t (v) VALUES (1), (2), (3)")
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}") as exporter:
        scrape = exporter.scrape()
        # The exporter runs none of these statements: the counters cannot move in between.
        for command, variable in (("insert", "Com_insert"), ("create_table", "Com_create_table"),
                                  ("create_db", "Com_create_db")):
            assert scrape.value("mysql_global_status_commands_total", command=command) == \
                float(sql_status(mariadb, variable))
        assert scrape.value("mysql_up") == 1.0
        for collector in DEFAULT_COLLECTORS:
            assert scrape.value("mysql_exporter_collector_success", collector=collector) == 1.0, collector
        version, comment, max_connections = sql_one(mariadb, "SELECT @@version, @@version_comment, @@max_connections")
        assert scrape.value("mysql_global_variables_max_connections") == float(max_connections)
        assert scrape.value("mysql_version_info", innodb_version="", version=version, version_comment=comment) == 1.0
        assert scrape.value("mysql_transaction_isolation",
                            level=sql_one(mariadb, "SELECT @@global.tx_isolation")[0]) == 1.0
        assert scrape.types["mysql_global_status_commands"] == "counter"
        assert "# TYPE mysql_global_status_uptime untyped" in scrape.text
        # InnoDB status, parsed, against the same number from SHOW STATUS.
        assert scrape.value("mysql_innodb_bp_size_pages") == float(sql_status(mariadb, "Innodb_buffer_pool_pages_total"))
        assert scrape.types["mysql_innodb_bp_pages_read"] == "counter"
        # Master load: the server runs here, so the exporter reads its process.
        rss = psutil.Process(mariadb.pid).memory_info().rss
        assert scrape.value("mysql_process_resident_memory_bytes") == pytest.approx(rss, rel=0.2)
        assert scrape.value("mysql_host_cpus") == float(psutil.cpu_count())
        # The leak detector watches mysqld's memory from the first collection on.
        states = scrape.samples.get("mysql_leak_state", {})
        assert (("series", "process_resident_memory_bytes"),) in states, list(states)


def test_promtool_accepts_every_collector(mariadb, monitoring_user):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    flags = [f"--config.my-cnf={monitoring_user.my_cnf}", "--collect.info_schema.innodb_metrics",
             "--collect.perf_schema.memory_events", "--collect.info_schema.processlist", "--collect.binlog_size"]
    idle = mariadb.connect()  # a thread for the processlist besides the exporter's own
    try:
        with running_exporter(*flags) as exporter:
            scrape = exporter.scrape()
            openmetrics_status, openmetrics, headers = exporter.get(headers={"Accept": PROMETHEUS_ACCEPT})
    finally:
        idle.close()
    result = subprocess.run([promtool, "check", "metrics"], input=scrape.text.encode(), capture_output=True)
    assert result.returncode in (0, 3), result.stderr.decode()[-2000:]  # 1 would be a parse error
    # Exit 3 is promtool's naming lint.  Names mysqld_exporter publishes (max_error_count
    # "should not have _count") must stay as they are.  Names of our own are never flagged.
    inherited = ("mysql_global_variables_", "mysql_global_status_", "mysql_info_schema_", "mysql_perf_schema_")
    flagged = {line.split()[0] for line in result.stderr.decode().splitlines() if line}
    assert {name for name in flagged if not name.startswith(inherited)} == set()
    assert openmetrics_status == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
    assert openmetrics.endswith("# EOF\n")
    assert scrape.value("mysql_binlog_files") == float(len(mariadb.execute("SHOW BINARY LOGS")))
    for name in ("mysql_info_schema_processlist_threads", "mysql_perf_schema_memory_events_used_bytes",
                 "mysql_info_schema_innodb_metrics_buffer_pool_pages"):
        assert scrape.has(name), name


def test_probe_with_two_auth_modules(mariadb, make_monitoring_user, tmp_path):
    full = make_monitoring_user(mariadb)
    # No SLAVE MONITOR: SHOW ALL SLAVES STATUS is denied (ERROR 1227) for this one.
    limited = make_monitoring_user(mariadb, grants=("GRANT PROCESS ON *.* TO {user}",))
    my_cnf = tmp_path / "exporter.cnf"
    my_cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {mariadb.port}\nuser = {full.name}\npassword = {full.password}\n\n"
                      f"[client.limited]\nuser = {limited.name}\npassword = {limited.password}\n")
    my_cnf.chmod(0o600)
    target = f"127.0.0.1:{mariadb.port}"
    with running_exporter(f"--config.my-cnf={my_cnf}", "--no-collect.host") as exporter:
        as_full = exporter.scrape(f"/probe?target={target}")
        assert as_full.value("mysql_exporter_collector_success", collector="collect.slave_status") == 1.0
        as_limited = exporter.scrape(f"/probe?target={target}&auth_module=client.limited")
        assert as_limited.value("mysql_up") == 1.0
        assert as_limited.value("mysql_exporter_collector_success", collector="collect.slave_status") == 0.0
        assert as_limited.value("mysql_exporter_collector_success", collector="collect.global_status") == 1.0
        assert as_limited.value("mysql_exporter_scrape_errors_total", collector="collect.slave_status",
                                reason="privilege") == 1.0
        assert as_limited.has("mysql_global_status_uptime")
        # collect[] narrows the collectors of one probe.
        narrowed = exporter.scrape(f"/probe?target={target}&collect[]=global_variables")
        assert narrowed.has("mysql_global_variables_max_connections")
        assert not narrowed.has("mysql_global_status_uptime")
        assert set(narrowed.samples["mysql_exporter_collector_success"]) == {
            (("collector", "collect.global_variables"),)}
        status, body, _ = exporter.get(f"/probe?target={target}&auth_module=client.nope")
        assert status == 400 and "client.nope" in body
        assert exporter.get("/probe")[0] == 400


def test_replica_status_through_probe(mariadb, mariadb_replica, make_monitoring_user):
    user = make_monitoring_user(mariadb_replica)
    mariadb.execute("CREATE DATABASE IF NOT EXISTS exporter_repl", "CREATE TABLE IF NOT EXISTS exporter_repl.t (i INT)",
                    "INSERT INTO exporter_repl.t VALUES (1)")
    status = caught_up_replica_status(mariadb_replica)
    with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
        scrape = exporter.scrape(f"/probe?target=127.0.0.1:{mariadb_replica.port}")
    labels = {"master_host": "127.0.0.1", "master_uuid": "", "channel_name": "", "connection_name": ""}
    assert scrape.value("mysql_slave_status_slave_io_running", **labels) == 1.0
    assert scrape.value("mysql_slave_status_slave_sql_running", **labels) == 1.0
    assert scrape.value("mysql_slave_status_seconds_behind_master", **labels) == float(status["Seconds_Behind_Master"])
    assert scrape.value("mysql_slave_status_exec_master_log_pos", **labels) == float(status["Exec_Master_Log_Pos"])
    assert scrape.value("mysql_slave_status_master_server_id", **labels) == 1.0
    assert scrape.value("mysql_replica_io_running", channel="") == 1.0


def test_stopped_sql_thread_drops_the_upstream_lag_and_says_unknown_on_ours(mariadb, mariadb_replica, make_monitoring_user):
    user = make_monitoring_user(mariadb_replica)
    caught_up_replica_status(mariadb_replica)
    mariadb_replica.execute("STOP SLAVE SQL_THREAD")
    try:
        with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
            scrape = exporter.scrape(f"/probe?target=127.0.0.1:{mariadb_replica.port}")
    finally:
        mariadb_replica.execute("START SLAVE SQL_THREAD")
    labels = {"master_host": "127.0.0.1", "master_uuid": "", "channel_name": "", "connection_name": ""}
    assert scrape.value("mysql_slave_status_slave_sql_running", **labels) == 0.0
    # NULL lag: no sample under the upstream name, as mysqld_exporter (the mixin's
    # predict_linear() over it must still see the samples before the stop); our own series
    # says "unknown" explicitly.
    assert tuple(sorted(labels.items())) not in scrape.samples.get("mysql_slave_status_seconds_behind_master", {})
    assert math.isnan(scrape.value("mysql_replica_seconds_behind_source", channel=""))


def test_tls_and_basic_auth(mariadb, monitoring_user, tmp_path):
    bcrypt = pytest.importorskip("bcrypt")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    hashed = bcrypt.hashpw(b"scrape-me", bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {cert.name}\n  key_file: {key.name}\n"
                   f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                          web_config=web) as exporter:
        assert exporter.url.startswith("https://")
        scrape = exporter.scrape(user="prometheus", password="scrape-me")
        assert scrape.value("mysql_up") == 1.0
        assert exporter.get(user="prometheus", password="wrong")[0] == 401
        status, _, headers = exporter.get()
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
        assert exporter.get("/", user="prometheus", password="scrape-me")[0] == 200
        plain = exporter.url.replace("https://", "http://")
        with pytest.raises(OSError):  # the TLS port does not speak plain HTTP
            import urllib.request
            urllib.request.urlopen(plain + "/metrics", timeout=5).read()


def test_client_certificates_when_the_web_config_requires_them(mariadb, monitoring_user, tmp_path):
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=tmp_path)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test CA",
            "-keyout", "ca.key", "-out", "ca.crt")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "server.key", "-out", "server.crt")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=prometheus", "-keyout", "client.key",
            "-out", "client.csr")
    openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "1", "-out", "client.crt")
    web = tmp_path / "web.yml"
    web.write_text("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                   "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n")
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                          web_config=web) as exporter:
        with pytest.raises(OSError):  # no client certificate: the handshake fails
            exporter.get()
        exporter.ssl_context.load_cert_chain(str(tmp_path / "client.crt"), str(tmp_path / "client.key"))
        assert exporter.scrape().value("mysql_up") == 1.0


def test_mysql_restart_without_restarting_the_exporter(tmp_path, make_monitoring_user):
    with ThrowawayMariaDB(base_dir=tmp_path / "db") as server:
        user = make_monitoring_user(server)
        with running_exporter(f"--config.my-cnf={user.my_cnf}", "--no-collect.host") as exporter:
            before = exporter.scrape()
            assert before.value("mysql_up") == 1.0
            server.stop()
            down = exporter.scrape()
            assert down.value("mysql_up") == 0.0
            assert not down.names("mysql_global_status_") and not down.names("mysql_innodb_")
            assert down.value("mysql_exporter_collector_success", collector="collect.global_status") == 0.0
            server.start()
            deadline = time.monotonic() + 60
            while True:
                after = exporter.scrape()
                if after.value("mysql_up") == 1.0 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert after.value("mysql_up") == 1.0
            # Fresh numbers from the restarted server, not the old ones.
            assert after.value("mysql_global_status_uptime") < before.value("mysql_global_status_uptime") + 5
            assert after.value("mysql_global_status_uptime") == pytest.approx(
                float(sql_status(server, "Uptime")), abs=2)
            assert after.value("mysql_exporter_scrape_errors_total", collector="collect.global_status",
                               reason="connection") >= 1.0


def write_heartbeat(server, user) -> None:
    """A pt-heartbeat table with one fresh row, readable by ``user``: a source whose lock we can hold."""
    server.execute("CREATE DATABASE IF NOT EXISTS heartbeat",
                   "CREATE TABLE IF NOT EXISTS heartbeat.heartbeat (ts VARCHAR(26) NOT NULL,"
                   " server_id INT UNSIGNED NOT NULL PRIMARY KEY)",
                   "REPLACE INTO heartbeat.heartbeat VALUES (DATE_FORMAT(NOW(6), '%Y-%m-%dT%H:%i:%s.%f'), 1)",
                   f"GRANT SELECT ON heartbeat.* TO '{user.name}'@'127.0.0.1'")


def test_hung_collector_gives_partial_results(mariadb, monitoring_user):
    write_heartbeat(mariadb, monitoring_user)
    locker = mariadb.connect(autocommit=True)
    try:
        with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                              "--collect.heartbeat", "--exporter.lock_wait_timeout=60",
                              "--exporter.collector-timeout=60") as exporter:
            healthy = exporter.scrape()
            assert healthy.value("mysql_exporter_collector_success", collector="collect.heartbeat") == 1.0
            stored = float(sql_one(mariadb, "SELECT UNIX_TIMESTAMP(ts) FROM heartbeat.heartbeat")[0])
            assert healthy.value("mysql_heartbeat_stored_timestamp_seconds", server_id="1") == \
                pytest.approx(stored, abs=0.001)
            assert healthy.value("mysql_heartbeat_now_timestamp_seconds", server_id="1") >= stored
            with locker.cursor() as cursor:
                cursor.execute("LOCK TABLES heartbeat.heartbeat WRITE")
            # The heartbeat read now waits on the lock for up to 60 s; the scrape allows 2 s.
            scrape = exporter.scrape(headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})
            assert scrape.value("mysql_exporter_collector_success", collector="collect.heartbeat") == 0.0
            assert scrape.value("mysql_exporter_collector_success", collector="collect.global_status") == 1.0
            assert scrape.has("mysql_global_status_uptime") and scrape.has("mysql_innodb_bp_size_pages")
            assert not scrape.has("mysql_heartbeat_stored_timestamp_seconds")
            with locker.cursor() as cursor:
                cursor.execute("UNLOCK TABLES")
            recovered = exporter.scrape()
            assert recovered.value("mysql_exporter_collector_success", collector="collect.heartbeat") == 1.0
    finally:
        locker.close()


def test_concurrent_scrapes_share_one_collection(mariadb, monitoring_user):
    write_heartbeat(mariadb, monitoring_user)
    locker = mariadb.connect(autocommit=True)
    try:
        with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                              "--collect.heartbeat") as exporter:
            exporter.scrape()
            target = exporter.app.default_target()
            collections = target.counters.collections
            # Hold the collection on the heartbeat table so every scrape arrives while it runs.
            with locker.cursor() as cursor:
                cursor.execute("LOCK TABLES heartbeat.heartbeat WRITE")
            results: list[Scrape] = []
            threads = [threading.Thread(target=lambda: results.append(exporter.scrape())) for _ in range(6)]
            for thread in threads:
                thread.start()
            time.sleep(1.0)
            with locker.cursor() as cursor:
                cursor.execute("UNLOCK TABLES")
            for thread in threads:
                thread.join()
            assert len(results) == 6
            assert target.counters.collections == collections + 1
            uptimes = {r.value("mysql_global_status_uptime") for r in results}
            assert len(uptimes) == 1
    finally:
        locker.close()


def test_min_interval_serves_the_last_collection(mariadb, monitoring_user):
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host",
                          "--exporter.min-interval=300") as exporter:
        first = exporter.scrape()
        conn = mariadb.connect()
        try:
            with conn.cursor() as cursor:
                cursor.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
                questions = int(cursor.fetchone()[1])
                again = [exporter.scrape() for _ in range(3)]
                cursor.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
                # Only this second SHOW STATUS reached the server in between.
                assert int(cursor.fetchone()[1]) == questions + 1
        finally:
            conn.close()
        assert {s.value("mysql_global_status_questions") for s in again} == {first.value("mysql_global_status_questions")}
        assert again[-1].value("mysql_exporter_scrapes_total") == 4.0


def test_compatible_with_mysqld_exporter(mariadb, monitoring_user, tmp_path):
    """Every family Debian's mysqld_exporter publishes for these collectors, with its type and labels."""
    go = shutil.which("prometheus-mysqld-exporter")
    if go is None:
        pytest.skip("prometheus-mysqld-exporter not installed")
    from exporter_harness import scrape_go_exporter

    collectors = ("global_status", "global_variables", "slave_status", "info_schema.innodb_metrics",
                  "perf_schema.memory_events", "binlog_size", "info_schema.processlist", "engine_innodb_status")
    flags = [f"--collect.{c}" for c in collectors]
    theirs = scrape_go_exporter(go, monitoring_user.my_cnf, [
        *flags, "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem",
        "--no-collect.info_schema.query_response_time"])
    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host", *flags) as exporter:
        ours = exporter.scrape()
    own = ("go_", "process_", "promhttp_", "mysql_exporter_")
    # Galera is off on this server: MariaDB still prints wsrep_ready OFF & co., which we leave
    # out (README, compatibility notes) and the Go exporter serves.
    galera_off = ("mysql_global_status_wsrep",)
    compared = [name for name in theirs.types if name.startswith("mysql_") and not name.startswith(own + galera_off)]
    assert len(compared) > 500
    missing = [name for name in compared if name not in ours.types]
    # Label sets that depend on the moment (processlist states) are compared by name only.
    assert missing == []
    # No status or variable served a second time under its raw name (Com_select is
    # commands_total{command="select"} only), nor any other name upstream does not use.
    extra = sorted(name for name in ours.types if name.startswith(("mysql_global_status_", "mysql_global_variables_"))
                   and name not in theirs.types)
    assert extra == []
    for name in compared:
        assert ours.types[name] == theirs.types[name], name
        if not name.startswith("mysql_info_schema_processlist"):
            assert ours.labels.get(name, set()) == theirs.labels.get(name, set()), name


def test_prometheus_scrapes_and_queries(mariadb, monitoring_user, tmp_path):
    """A real Prometheus server scrapes the exporter every second; PromQL sees the workload."""
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus not installed (Debian package prometheus)")
    import json
    import urllib.parse
    import urllib.request

    from mysql_snmp.agents.demo.throwaway import free_loopback_port

    with running_exporter(f"--config.my-cnf={monitoring_user.my_cnf}", "--no-collect.host") as exporter:
        port = free_loopback_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: mysql\n"
            f"    static_configs:\n      - targets: ['{exporter.url.removeprefix('http://')}']\n")
        process = subprocess.Popen(
            [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def query(promql: str) -> list:
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    return json.load(response)["data"]["result"]
            except OSError:
                return []

        try:
            deadline = time.monotonic() + 90
            result: list = []
            conn = mariadb.connect(autocommit=True)
            try:
                while not result and time.monotonic() < deadline:
                    with conn.cursor() as cursor:
                        for _ in range(50):
                            cursor.execute("SELECT 1")
                    time.sleep(0.5)
                    result = query('rate(mysql_global_status_commands_total{command="select"}[1m]) > 0')
            finally:
                conn.close()
            assert result, "Prometheus never saw SELECTs through the exporter"
            assert result[0]["metric"]["job"] == "mysql"
            assert query('mysql_up{job="mysql"} == 1')
            assert query('up{job="mysql"} == 1')
            assert query('mysql_exporter_collector_success{collector="collect.global_status"} == 1')
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_probe_over_the_unix_socket(mariadb, tmp_path):
    # Socket connections authenticate as user@localhost.
    mariadb.execute("CREATE USER IF NOT EXISTS 'exporter_sock'@'localhost' IDENTIFIED BY 'sock-pw'",
                    "GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO 'exporter_sock'@'localhost'")
    my_cnf = tmp_path / "socket.cnf"
    my_cnf.write_text("[client]\nuser = exporter_sock\npassword = sock-pw\n")
    my_cnf.chmod(0o600)
    with running_exporter(f"--config.my-cnf={my_cnf}", "--no-collect.host",
                          f"--mysqld.address=unix://{mariadb.socket_path}",
                          f"--exporter.probe-allowed-targets=unix://{mariadb.socket_path}") as exporter:
        via_metrics = exporter.scrape()
        via_probe = exporter.scrape(f"/probe?target=unix://{mariadb.socket_path}")
    for scrape in (via_metrics, via_probe):
        assert scrape.value("mysql_up") == 1.0
        assert scrape.value("mysql_global_variables_port") == float(mariadb.port)
