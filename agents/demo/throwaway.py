"""A private, disposable MariaDB server: for the test suite and the demo.

It never touches a server that happens to be running: its own datadir under a
temp dir, its own socket, a free loopback port, and it is stopped (and the
datadir removed) on exit.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# performance_schema memory instruments are off by default on MariaDB, and the
# adaptive hash index is off since 10.5: turn both on so the memory that the
# leak detector watches is visible, as on a production server that enables them.
DEFAULT_SERVER_ARGS = (
    "--log-bin=mysql-bin",
    "--binlog-format=ROW",
    "--performance-schema=ON",
    "--performance-schema-instrument=memory/%=ON",
    "--innodb-adaptive-hash-index=ON",
    "--innodb-buffer-pool-size=64M",
    "--innodb-log-file-size=48M",
    "--skip-name-resolve",
    "--max-connections=200",
)


class ThrowawayError(RuntimeError):
    pass


def find_binary(*names: str) -> str:
    for name in names:
        for directory in (None, "/usr/sbin", "/usr/bin", "/usr/local/sbin"):
            path = shutil.which(name, path=directory) if directory else shutil.which(name)
            if path:
                return path
    raise ThrowawayError(
        f"none of {', '.join(names)} found: install Debian's mariadb-server "
        "(apt-get install mariadb-server)"
    )


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ThrowawayMariaDB:
    """``with ThrowawayMariaDB() as server:`` then ``server.connect()``."""

    server_id: int = 1
    extra_args: tuple[str, ...] = ()
    base_dir: Path | None = None
    startup_timeout: float = 30.0
    port: int = 0
    process: subprocess.Popen | None = field(default=None, repr=False)
    _owns_base_dir: bool = field(default=False, repr=False)

    @property
    def datadir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket_path(self) -> Path:
        return self.base_dir / "mysqld.sock"

    @property
    def tmpdir(self) -> Path:
        # A private tmpdir: concurrent install-db runs sharing /tmp collide on
        # their #sql-temptable files.
        return self.base_dir / "tmp"

    @property
    def pid_file(self) -> Path:
        return self.base_dir / "mysqld.pid"

    @property
    def error_log(self) -> Path:
        return self.base_dir / "mysqld.err"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> "ThrowawayMariaDB":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop(remove=True)

    def _ensure_datadir(self) -> None:
        if self.base_dir is None:
            self.base_dir = Path(tempfile.mkdtemp(prefix="mysql-snmp-mariadb-"))
            self._owns_base_dir = True
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.tmpdir.mkdir(exist_ok=True)
        if (self.datadir / "mysql").is_dir():
            return
        install_db = find_binary("mariadb-install-db", "mysql_install_db")
        cmd = [
            install_db,
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--tmpdir={self.tmpdir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise ThrowawayError(
                f"mariadb-install-db failed ({result.returncode}): {result.stderr.strip()[-2000:]}"
            )

    def start(self) -> None:
        self._ensure_datadir()
        if not self.port:
            self.port = free_loopback_port()
        mariadbd = find_binary("mariadbd", "mysqld")
        cmd = [
            mariadbd,
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--tmpdir={self.tmpdir}",
            f"--port={self.port}",
            "--bind-address=127.0.0.1",
            f"--socket={self.socket_path}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.error_log}",
            f"--server-id={self.server_id}",
            *DEFAULT_SERVER_ARGS,
            *self.extra_args,
        ]
        if os.geteuid() == 0:
            cmd.append("--user=root")
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ThrowawayError(
                    f"mariadbd exited with {self.process.returncode}: {self._log_tail()}"
                )
            if self.socket_path.exists():
                try:
                    self.connect().close()
                    return
                except Exception:  # not accepting yet
                    pass
            time.sleep(0.05)
        self.stop()
        raise ThrowawayError(f"mariadbd not ready after {self.startup_timeout}s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return self.error_log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no error log)"

    def connect(self, **kwargs):
        import pymysql

        params = dict(host="127.0.0.1", port=self.port, user="root", password="", connect_timeout=5)
        params.update(kwargs)
        return pymysql.connect(**params)

    def execute(self, *statements: str) -> list[tuple]:
        """Run statements as root; returns the rows of the last one."""
        conn = self.connect(autocommit=True)
        try:
            rows: list[tuple] = []
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
                    rows = list(cur.fetchall())
            return rows
        finally:
            conn.close()

    def stop(self, remove: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if remove and self._owns_base_dir and self.base_dir is not None:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def kill(self) -> None:
        """Simulate a crash: SIGKILL, no clean shutdown."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None
