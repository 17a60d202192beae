"""Recovery rules on a real server: the first connection failure is logged once, with its reason,
and so is the recovery; a processlist read without PROCESS is a privilege failure, not 0 threads."""

from __future__ import annotations

import logging
import time

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port
from tests.support import create_monitoring_user, root_settings

GRANTS_WITHOUT_PROCESS = ("GRANT REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {user}",)


def connection_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mysql_snmp.agents.connection" and r.levelno >= logging.WARNING]


def test_a_server_down_at_start_is_logged_once_and_so_is_its_recovery(caplog, tmp_path):
    server = ThrowawayMariaDB(server_id=21, port=free_loopback_port())
    settings = root_settings(server)
    try:
        with Collector(settings, sources={"global_status"}, host_metrics="off") as collector:
            collector.connection.backoff_max = 0.0
            with caplog.at_level(logging.DEBUG):
                for _ in range(3):
                    assert not collector.collect().up
                (first,) = connection_warnings(caplog)
                assert first.startswith(f"cannot connect to {settings.target}") and "Can't connect" in first
                server.start()
                assert collector.collect().up
            warnings = connection_warnings(caplog)
            assert len(warnings) == 2 and warnings[1].startswith(f"connected to {settings.target} after 3 failed")
    finally:
        server.stop(remove=True)


def test_a_wrong_password_at_start_is_logged_with_its_reason(mariadb, tmp_path, caplog):
    user = create_monitoring_user(mariadb, tmp_path)
    mariadb.execute(f"SET PASSWORD FOR '{user.name}'@'127.0.0.1' = PASSWORD('changed-{time.time()}')")
    with Collector(user.settings, sources={"global_status"}, host_metrics="off") as collector:
        with caplog.at_level(logging.WARNING):
            snapshot = collector.collect()
    assert not snapshot.up
    (warning,) = connection_warnings(caplog)
    assert "Access denied" in warning and user.name in warning


def test_processlist_without_process_is_a_privilege_failure(mariadb, tmp_path):
    user = create_monitoring_user(mariadb, tmp_path, GRANTS_WITHOUT_PROCESS)
    with Collector(user.settings, sources={"processlist"}, host_metrics="off") as collector:
        snapshot = collector.collect()
    status = snapshot.sources["processlist"]
    assert snapshot.up and not status.ok and status.reason == "privilege"
    assert "PROCESS" in status.error
    assert not any(name.startswith("processlist_") for name in snapshot.values)
    assert "processlist_threads" not in snapshot.series


def test_processlist_with_process_sees_other_users(mariadb, tmp_path):
    user = create_monitoring_user(mariadb, tmp_path)
    other = mariadb.connect()  # root's thread: only visible with PROCESS
    try:
        with Collector(user.settings, sources={"processlist"}, host_metrics="off") as collector:
            snapshot = collector.collect()
    finally:
        other.close()
    assert snapshot.sources["processlist"].ok
    assert any(row["user"] == "root" for row in snapshot.raw["processlist"])
