"""Host safety: the test rigs' servers use nothing of the system's (config, datadir, socket, ports), and
scripts/mysql-server-guard never lets ./scripts/test or ./scripts/demo install mariadb-server over
another MySQL-family server, while our own throwaway servers do not count as one.

Each check looks at the processes it starts itself, never at what else runs on the machine (other
checkouts' test servers, a real mysqld)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.agentx.netsnmp import Snmpd, need_net_snmp

REPO = Path(__file__).resolve().parents[1]
GUARD = REPO / "scripts" / "mysql-server-guard"


# Where a system MySQL/MariaDB or snmpd keeps its configuration, data, sockets and logs.
SYSTEM_PLACES = ("/etc/mysql", "/var/lib/mysql", "/run/mysqld", "/var/run/mysqld", "/var/log/mysql",
                 "/etc/snmp", "/var/lib/snmp", "/run/snmpd", "/var/log/snmpd")


def places_used(pid: int) -> tuple[set[str], set[str]]:
    """The files and Unix sockets a process has open (its working directory counted as a file), and the
    addresses it listens on."""
    process = psutil.Process(pid)
    paths = {process.cwd(), *(f.path for f in process.open_files())}
    listening = set()
    for connection in process.net_connections("all"):
        if isinstance(connection.laddr, str):
            if connection.laddr:
                paths.add(connection.laddr)
        elif connection.status in (psutil.CONN_LISTEN, psutil.CONN_NONE):
            listening.add(f"{connection.laddr.ip}:{connection.laddr.port}")
    return paths, listening


def assert_private(paths: set[str], listening: set[str], own_dir: Path, system_port: int) -> None:
    assert paths and all(Path(path).is_relative_to(own_dir) for path in paths), sorted(paths)
    assert not [path for path in paths if path.startswith(SYSTEM_PLACES)]
    assert listening and all(address.startswith("127.0.0.1:") for address in listening), listening
    assert f"127.0.0.1:{system_port}" not in listening and f"0.0.0.0:{system_port}" not in listening


def test_a_throwaway_mariadb_uses_nothing_of_a_system_server(mariadb):
    """No option file read (--no-defaults first), datadir, socket, logs under its own temp dir, loopback only."""
    process = psutil.Process(mariadb.pid)
    assert process.cmdline()[1] == "--no-defaults"
    paths, listening = places_used(process.pid)
    assert_private(paths, listening, mariadb.base_dir, 3306)
    assert listening == {f"127.0.0.1:{mariadb.port}"}
    assert str(mariadb.datadir) in paths  # its working directory: it really is running on its own


def test_a_private_snmpd_uses_nothing_of_the_system_one(tmp_path):
    """Only its own configuration (-C -c FILE), persistent dir and AgentX socket, on a loopback port."""
    need_net_snmp()
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    try:
        arguments = psutil.Process(snmpd.process.pid).cmdline()
        assert "-C" in arguments and arguments[arguments.index("-c") + 1] == str(snmpd.directory / "snmpd.conf")
        paths, listening = places_used(snmpd.process.pid)
        paths.discard("/")  # snmpd -f keeps the working directory it was started in
        paths.discard(os.getcwd())
        assert str(snmpd.agentx_socket) in paths
        assert_private(paths, listening, snmpd.directory, 161)
    finally:
        snmpd.kill()


def dpkg_database(directory: Path, *packages: str) -> Path:
    """A dpkg admin dir whose status file lists ``packages`` as installed (dpkg-query reads it)."""
    (directory / "info").mkdir(parents=True)
    (directory / "updates").mkdir()
    (directory / "status").write_text("".join(
        f"Package: {name}\nStatus: install ok installed\nArchitecture: all\nVersion: 1.0\n"
        f"Maintainer: test <test@example.org>\nDescription: test\n\n" for name in packages))
    return directory


# Runs in a PID namespace of its own (with its own /proc), so the guard sees the processes a test
# starts there and nothing else: the throwaway servers of other test runs on this machine (or a real
# mysqld) cannot change its verdict.  The shell is the namespace's init: when it exits, every process
# started in it is gone.
ISOLATED = """
if [ $# -gt 0 ]; then
    "$@" &
    while [ "$(cat /proc/$!/comm 2>/dev/null)" != mariadbd ]; do sleep 0.01; done
    echo "$!"
fi
"$GUARD"
"""


@pytest.fixture(scope="module")
def isolation():
    """The command that gives the guard a process list of its own, or a skip saying why there is none."""
    command = ["unshare", "--pid", "--fork", "--mount-proc"]
    probe = subprocess.run([*command, "true"], capture_output=True, text=True, timeout=30) \
        if shutil.which("unshare") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("needs a PID namespace (unshare --pid --mount-proc, as root) to hide other runs' servers: "
                    + (probe.stderr.strip() if probe else "unshare not found"))
    return command


def guard(admindir: Path, isolation: list[str], *server_args: str, **env: str) -> subprocess.CompletedProcess:
    """scripts/mysql-server-guard, alone with a process named ``mariadbd`` started with ``server_args``, if any.

    The fake server is a copy of the Python interpreter sleeping; its pid (in the namespace) is on stdout."""
    server = []
    if server_args:
        binary = admindir.parent / "mariadbd"
        shutil.copy(sys.executable, binary)
        server = [str(binary), "-c", "import time; time.sleep(60)", *server_args]
    return subprocess.run([*isolation, "bash", "-c", ISOLATED, "isolated", *server], capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "GUARD": str(GUARD), "MYSQL_SNMP_DPKG_ADMINDIR": str(admindir), **env})


@pytest.mark.parametrize("package", ["percona-server-server", "mysql-server-8.0", "mysql-community-server",
                                     "mariadb-server-10.6", "percona-xtradb-cluster-server"])
def test_an_installed_server_package_is_refused_with_one_line(tmp_path, isolation, package):
    result = guard(dpkg_database(tmp_path / "dpkg", package, "mariadb-common", "mysql-common"), isolation)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert f"server package(s) installed: {package};" in result.stderr
    assert "MYSQL_SNMP_INSTALL_SERVER_ANYWAY=1" in result.stderr


def test_client_and_common_packages_are_no_server(tmp_path, isolation):
    result = guard(dpkg_database(tmp_path / "dpkg", "mariadb-client", "mariadb-common", "mysql-common",
                                 "libmariadb3"), isolation)
    assert (result.returncode, result.stderr) == (0, "")


def test_a_running_server_that_is_not_ours_is_refused(tmp_path, isolation):
    result = guard(dpkg_database(tmp_path / "dpkg"), isolation, "--datadir=/var/lib/mysql")
    pid = result.stdout.strip()
    assert result.returncode == 1 and pid.isdigit()
    assert f"a MySQL-family server is running (pid {pid}:" in result.stderr


def test_our_throwaway_servers_do_not_count(tmp_path, isolation):
    result = guard(dpkg_database(tmp_path / "dpkg"), isolation,
                   "--no-defaults", "--datadir=/tmp/mysql-snmp-mariadb-abc123/data", "--port=45678")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.strip().isdigit()  # the server was there, and the guard let it be


def test_a_server_with_our_datadir_name_but_reading_the_system_config_counts(tmp_path, isolation):
    """Without --no-defaults a mariadbd reads /etc/mysql (the system's settings): not one of ours."""
    result = guard(dpkg_database(tmp_path / "dpkg"), isolation, "--datadir=/tmp/mysql-snmp-mariadb-abc123/data")
    assert result.returncode == 1 and "a MySQL-family server is running" in result.stderr


def test_the_opt_in_installs_anyway(tmp_path, isolation):
    result = guard(dpkg_database(tmp_path / "dpkg", "percona-server-server"), isolation, "--datadir=/var/lib/mysql",
                   MYSQL_SNMP_INSTALL_SERVER_ANYWAY="1")
    assert (result.returncode, result.stderr) == (0, "")
