"""Shared fixtures: throwaway MariaDB servers (a primary and a replica) and monitoring users.

Servers start lazily (only when a test asks for them), once per session, on a
free loopback port with their own datadir and socket, and are removed at the end.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.connection import ConnectionSettings, settings_from_my_cnf
from agents.throwaway import ThrowawayMariaDB

SHARED_DIR = Path(__file__).resolve().parents[1] / ".." / "shared"

# What a monitoring user needs on MariaDB 10.5.9+ for every default source:
# PROCESS (InnoDB status, processlist, INNODB_METRICS), REPLICATION CLIENT (= BINLOG
# MONITOR: SHOW BINARY LOGS / MASTER STATUS), SLAVE MONITOR (SHOW ALL SLAVES STATUS)
# and SELECT on performance_schema (memory instruments).
MINIMAL_GRANTS = (
    "GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {user}",
    "GRANT SELECT ON performance_schema.* TO {user}",
)


@dataclass(frozen=True)
class MonitoringUser:
    name: str
    password: str
    my_cnf: Path

    @property
    def settings(self) -> ConnectionSettings:
        return settings_from_my_cnf(self.my_cnf)


def root_settings(server: ThrowawayMariaDB) -> ConnectionSettings:
    return ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")


def create_monitoring_user(server: ThrowawayMariaDB, directory: Path, grants=MINIMAL_GRANTS,
                           name: str | None = None) -> MonitoringUser:
    """A user with exactly ``grants`` and a 0600 my.cnf for it in ``directory``."""
    name = name or f"mon_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(12)
    account = f"'{name}'@'127.0.0.1'"
    server.execute(f"CREATE USER {account} IDENTIFIED BY '{password}'",
                   *(grant.format(user=account) for grant in grants))
    my_cnf = Path(directory) / f"{name}.cnf"
    my_cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {server.port}\nuser = {name}\npassword = {password}\n")
    my_cnf.chmod(0o600)
    return MonitoringUser(name, password, my_cnf)


@pytest.fixture(scope="session")
def mariadb():
    """A private MariaDB primary (log-bin, performance_schema memory instruments, AHI on)."""
    server = ThrowawayMariaDB(server_id=1)
    server.start()
    try:
        yield server
    finally:
        server.stop(remove=True)


@pytest.fixture(scope="session")
def mariadb_replica(mariadb):
    """A second MariaDB replicating from ``mariadb`` with GTID (MASTER_USE_GTID=slave_pos)."""
    password = secrets.token_urlsafe(12)
    mariadb.execute(
        f"CREATE USER IF NOT EXISTS 'repl'@'127.0.0.1' IDENTIFIED BY '{password}'",
        "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'",
    )
    replica = ThrowawayMariaDB(server_id=2)
    replica.start()
    try:
        replica.execute(
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={mariadb.port}, MASTER_USER='repl', "
            f"MASTER_PASSWORD='{password}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            "START SLAVE",
        )
        wait_for_replication(replica)
        yield replica
    finally:
        replica.stop(remove=True)


def replica_threads(replica: ThrowawayMariaDB) -> dict:
    conn = replica.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SLAVE STATUS")
            row = cur.fetchone()
            columns = [d[0] for d in cur.description]
    finally:
        conn.close()
    return dict(zip(columns, row)) if row else {}


def wait_for_replication(replica: ThrowawayMariaDB, timeout: float = 20.0) -> dict:
    """Until both threads run and the applier has caught up with what the receiver read."""
    deadline = time.monotonic() + timeout
    status: dict = {}
    while time.monotonic() < deadline:
        status = replica_threads(replica)
        if (status.get("Slave_IO_Running") == "Yes" and status.get("Slave_SQL_Running") == "Yes"
                and status.get("Read_Master_Log_Pos") == status.get("Exec_Master_Log_Pos")):
            return status
        time.sleep(0.1)
    raise AssertionError(f"replication did not catch up in {timeout}s: {status}")


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
