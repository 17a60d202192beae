"""Plain helpers for tests that use a throwaway MariaDB: monitoring users with their my.cnf,
root settings, waiting for replication.  No fixtures, so the conftest, the agent helpers and
the benchmarks import them alike (importing a conftest module would register its fixtures twice)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from mysql_snmp.agents.config.settings import ConnectionSettings, settings_from_my_cnf
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB

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


def option_file_literal(value: str) -> str:
    """``value`` as an option-file value the mysql clients read back whole: quoted, its double
    quotes and backslashes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sql_literal(value: str) -> str:
    """``value`` as a MariaDB string literal (default sql_mode: backslash escapes)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def root_settings(server: ThrowawayMariaDB) -> ConnectionSettings:
    return ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")


def create_monitoring_user(server: ThrowawayMariaDB, directory: Path, grants=MINIMAL_GRANTS,
                           name: str | None = None, over_socket: bool = False) -> MonitoringUser:
    """A user with exactly ``grants`` and a 0600 my.cnf for it in ``directory``: over loopback TCP,
    or with ``over_socket`` over the server's Unix socket (the account is then @'localhost')."""
    name = name or f"mon_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(12)
    account = f"'{name}'@'{'localhost' if over_socket else '127.0.0.1'}'"
    server.execute(f"CREATE USER {account} IDENTIFIED BY '{password}'",
                   *(grant.format(user=account) for grant in grants))
    my_cnf = Path(directory) / f"{name}.cnf"
    where = f"host = localhost\nsocket = {server.socket_path}" if over_socket else f"host = 127.0.0.1\nport = {server.port}"
    my_cnf.write_text(f"[client]\n{where}\nuser = {name}\npassword = {password}\n")
    my_cnf.chmod(0o600)
    return MonitoringUser(name, password, my_cnf)


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
