"""scripts/mysql-server-guard: ./scripts/test and ./scripts/demo never install mariadb-server over
another MySQL-family server, and our own throwaway servers do not count as one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUARD = REPO / "scripts" / "mysql-server-guard"


def dpkg_database(directory: Path, *packages: str) -> Path:
    """A dpkg admin dir whose status file lists ``packages`` as installed (dpkg-query reads it)."""
    (directory / "info").mkdir(parents=True)
    (directory / "updates").mkdir()
    (directory / "status").write_text("".join(
        f"Package: {name}\nStatus: install ok installed\nArchitecture: all\nVersion: 1.0\n"
        f"Maintainer: test <test@example.org>\nDescription: test\n\n" for name in packages))
    return directory


def guard(admindir: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(GUARD)], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "MYSQL_SNMP_DPKG_ADMINDIR": str(admindir), **env})


@pytest.fixture
def fake_server(tmp_path):
    """Start a process named ``mariadbd`` (a copy of the Python interpreter sleeping) with ``args``."""
    started = []

    def start(*args: str) -> subprocess.Popen:
        binary = tmp_path / "mariadbd"
        if not binary.exists():
            shutil.copy(sys.executable, binary)
        process = subprocess.Popen([str(binary), "-c", "import time; time.sleep(60)", *args])
        started.append(process)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{process.pid}/comm").read_text().strip() != "mariadbd":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


@pytest.mark.parametrize("package", ["percona-server-server", "mysql-server-8.0", "mysql-community-server",
                                     "mariadb-server-10.6", "percona-xtradb-cluster-server"])
def test_an_installed_server_package_is_refused_with_one_line(tmp_path, package):
    result = guard(dpkg_database(tmp_path / "dpkg", package, "mariadb-common", "mysql-common"))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert f"server package(s) installed: {package};" in result.stderr
    assert "MYSQL_SNMP_INSTALL_SERVER_ANYWAY=1" in result.stderr


def test_client_and_common_packages_are_no_server(tmp_path):
    result = guard(dpkg_database(tmp_path / "dpkg", "mariadb-client", "mariadb-common", "mysql-common",
                                 "libmariadb3"))
    assert (result.returncode, result.stderr) == (0, "")


def test_a_running_server_that_is_not_ours_is_refused(tmp_path, fake_server):
    process = fake_server("--datadir=/var/lib/mysql")
    result = guard(dpkg_database(tmp_path / "dpkg"))
    assert result.returncode == 1
    assert f"a MySQL-family server is running (pid {process.pid}:" in result.stderr


def test_our_throwaway_servers_do_not_count(tmp_path, fake_server):
    fake_server("--no-defaults", "--datadir=/tmp/mysql-snmp-mariadb-abc123/data", "--port=45678")
    result = guard(dpkg_database(tmp_path / "dpkg"))
    assert (result.returncode, result.stderr) == (0, "")


def test_the_opt_in_installs_anyway(tmp_path, fake_server):
    fake_server("--datadir=/var/lib/mysql")
    result = guard(dpkg_database(tmp_path / "dpkg", "percona-server-server"), MYSQL_SNMP_INSTALL_SERVER_ANYWAY="1")
    assert (result.returncode, result.stderr) == (0, "")

