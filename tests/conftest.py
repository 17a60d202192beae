"""Shared fixtures: throwaway MariaDB servers (a primary and a replica) and monitoring users.

Servers start lazily (only when a test asks for them), once per session, on a
free loopback port with their own datadir and socket, and are removed at the end.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from mysql_snmp.agents.config import redact

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB
from tests.support import MINIMAL_GRANTS, MonitoringUser, create_monitoring_user, wait_for_replication

SHARED_DIR = Path(__file__).resolve().parents[1] / ".." / "shared"


@pytest.fixture(scope="session")
def mariadb():
    """A private MariaDB primary (log-bin, performance_schema memory instruments, AHI on)."""
    with ThrowawayMariaDB(server_id=1) as server:
        yield server


# What mysqld_exporter's table collectors read: userstat's tables and the query response time
# plugin (shipped with Debian's mariadb-server, loaded here); performance_schema is on already.
TABLE_COLLECTOR_ARGS = ("--userstat=1", "--plugin-load-add=query_response_time", "--query-response-time-stats=ON")


@pytest.fixture(scope="session")
def mariadb_tables():
    """A private MariaDB primary for the table collectors: as ``mariadb``, plus userstat and query_response_time."""
    with ThrowawayMariaDB(server_id=11, extra_args=TABLE_COLLECTOR_ARGS) as server:
        yield server


@pytest.fixture(scope="session")
def mariadb_replica(mariadb):
    """A second MariaDB replicating from ``mariadb`` with GTID (MASTER_USE_GTID=slave_pos)."""
    password = secrets.token_urlsafe(12)
    mariadb.execute(
        f"CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1' IDENTIFIED BY '{password}'",
        "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'",
    )
    with ThrowawayMariaDB(server_id=2) as replica:
        replica.execute(
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={mariadb.port}, MASTER_USER='repl', "
            f"MASTER_PASSWORD='{password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            "START SLAVE",
        )
        wait_for_replication(replica)
        yield replica


@pytest.fixture
def monitoring_user(mariadb, tmp_path) -> MonitoringUser:
    """A user on ``mariadb`` with the minimal grants and its 0600 my.cnf."""
    return create_monitoring_user(mariadb, tmp_path)


@pytest.fixture
def make_monitoring_user(tmp_path):
    """Factory: make_monitoring_user(server, grants=...) -> MonitoringUser."""

    def make(server: ThrowawayMariaDB, grants=MINIMAL_GRANTS) -> MonitoringUser:
        return create_monitoring_user(server, tmp_path, grants)

    return make


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.skip(f"../shared absent: {SHARED_DIR} holds the reference fixtures")
    return SHARED_DIR


@pytest.fixture(autouse=True)
def _passwords_stay_with_their_test():
    """The scrubber remembers every password a process was given: one test's ("p", "other") would
    otherwise mask those letters in every later test's log lines."""
    secrets, forms = set(redact._secrets), redact._forms
    yield
    redact._secrets, redact._forms = secrets, forms
