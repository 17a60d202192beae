"""--web.systemd-socket: the sd_listen_fds environment, adopting passed sockets, and the exporter
started the way systemd starts it (listening socket as fd 3, LISTEN_PID = its own pid)."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import bcrypt
import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.exporter.app import ExporterApp
from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args
from mysql_snmp.agents.exporter.server import make_servers
from mysql_snmp.agents.exporter.systemd_socket import (PassedFd, SystemdSocketError, adopt, adopt_all,
                                            parse_listen_environment, take_listen_environment)
from mysql_snmp.agents.exporter.web_config import load_web_config
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.exporter_harness import RunningExporter, Scrape
from tests.exporter.test_exporter_config import self_signed

REPO = Path(__file__).resolve().parents[2]
# What systemd does between fork and exec: the listening socket becomes fd 3 and LISTEN_PID names the
# process that will run the exporter. `sh -c` keeps its pid across exec, so $$ is the exporter's pid.
# The socket arrives as the wrapper's stdin (Popen dup2s it to 0), moves to 3, and stdin is reset.
SYSTEMD_LIKE_WRAPPER = 'export LISTEN_PID=$$; exec "$@" 3<&0 0</dev/null'
EXPORTER = (sys.executable, "-m", "mysql_snmp.agents.cli", "exporter")


def parse(*argv: str):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return config_from_args(parser.parse_args(list(argv)))


def listening_socket(family: socket.AddressFamily = socket.AF_INET) -> socket.socket:
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))  # port 0: the kernel picks a free port and we hold it, no race
    except OSError as exc:
        sock.close()
        pytest.skip(f"cannot bind {host}: {exc}")
    sock.listen()
    return sock


def clean_environment(**listen: str) -> dict[str, str]:
    """The test runner's environment without inherited LISTEN_* variables, plus ``listen``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
    return {**environ, **listen}


# --------------------------------------------------------------------------- the environment


def test_passed_fds_start_at_3_with_their_names():
    environ = {"LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "metrics-v4:metrics-v6"}
    assert parse_listen_environment(environ, 4242) == (PassedFd(3, "metrics-v4"), PassedFd(4, "metrics-v6"))


@pytest.mark.parametrize("names", [None, "only-one", ":"])
def test_fds_without_a_name_are_unknown_as_systemd_calls_them(names):
    environ = {"LISTEN_PID": "7", "LISTEN_FDS": "2", **({"LISTEN_FDNAMES": names} if names is not None else {})}
    first = "only-one" if names == "only-one" else "unknown"
    assert parse_listen_environment(environ, 7) == (PassedFd(3, first), PassedFd(4, "unknown"))


@pytest.mark.parametrize("environ, message", [
    ({}, "LISTEN_PID is not set, so systemd passed no sockets"),
    ({"LISTEN_FDS": "1"}, "LISTEN_PID is not set"),
    ({"LISTEN_PID": "4241", "LISTEN_FDS": "1"},
     "LISTEN_PID=4241 names another process than this exporter (pid 4242)"),
    ({"LISTEN_PID": "me", "LISTEN_FDS": "1"}, "LISTEN_PID='me' is not a process id"),
    ({"LISTEN_PID": "4242"}, "LISTEN_FDS is not set, so systemd passed no sockets"),
    ({"LISTEN_PID": "4242", "LISTEN_FDS": "0"}, "LISTEN_FDS=0: systemd passed no sockets"),
    ({"LISTEN_PID": "4242", "LISTEN_FDS": "two"}, "LISTEN_FDS='two' is not a number of sockets"),
    ({"LISTEN_PID": "4242", "LISTEN_FDS": "-1"}, "LISTEN_FDS='-1' is not a number of sockets"),
    ({"LISTEN_PID": "4242", "LISTEN_FDS": "1_0"}, "LISTEN_FDS='1_0' is not a number of sockets"),
    ({"LISTEN_PID": "4242", "LISTEN_FDS": ""}, "LISTEN_FDS='' is not a number of sockets"),
])
def test_no_passed_sockets_is_an_error_saying_what_is_missing_and_where_to_look(environ, message):
    with pytest.raises(SystemdSocketError) as error:
        parse_listen_environment(environ, 4242)
    text = str(error.value)
    assert text.startswith(f"--web.systemd-socket: {message}")
    assert "ListenStream=" in text and "\n" not in text


@pytest.mark.parametrize("listen_pid, ours", [("99", True), ("98", False)])
def test_variables_are_unset_after_reading_also_on_error(listen_pid, ours):
    environ = {"LISTEN_PID": listen_pid, "LISTEN_FDS": "1", "LISTEN_FDNAMES": "x", "PATH": "/bin"}
    if ours:
        assert take_listen_environment(environ, pid=99) == (PassedFd(3, "x"),)
    else:
        with pytest.raises(SystemdSocketError, match="LISTEN_PID=98 names another process"):
            take_listen_environment(environ, pid=99)
    assert environ == {"PATH": "/bin"}


def test_the_process_environment_loses_the_variables(monkeypatch):
    monkeypatch.setenv("LISTEN_PID", str(os.getpid()))
    monkeypatch.setenv("LISTEN_FDS", "0")
    monkeypatch.setenv("LISTEN_FDNAMES", "gone")
    with pytest.raises(SystemdSocketError, match="LISTEN_FDS=0"):
        take_listen_environment()
    assert not {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} & set(os.environ)


# --------------------------------------------------------------------------- adopting fds


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6])
def test_adopted_socket_keeps_its_family_and_address_and_is_not_inherited(family):
    with listening_socket(family) as original:
        passed = adopt(PassedFd(os.dup(original.fileno()), "metrics"))
        with passed.socket:
            assert passed.socket.family == family
            assert passed.socket.getsockname() == original.getsockname()
            assert not os.get_inheritable(passed.socket.fileno())
            assert passed.describe() == f"systemd socket fd {passed.fd} (metrics)"


@pytest.mark.parametrize("make, message", [
    (lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), "is not listening: Accept=yes"),
    (lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), "is not a stream socket: use ListenStream="),
    (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), "is an AF_UNIX socket"),
])
def test_a_passed_socket_that_cannot_serve_http_is_refused(make, message):
    with make() as sock:
        fd = os.dup(sock.fileno())
        with pytest.raises(SystemdSocketError, match=message):
            adopt(PassedFd(fd, "wrong"))
        with pytest.raises(OSError):
            os.fstat(fd)  # refused sockets are closed, not left open behind the error


def test_an_fd_that_is_no_socket_is_refused():
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(SystemdSocketError, match=rf"fd {read_end} \(pipe\) is not an open socket"):
            adopt(PassedFd(read_end, "pipe"))
    finally:
        os.close(read_end)
        os.close(write_end)


def test_adopting_several_closes_the_adopted_ones_when_one_is_refused():
    with listening_socket() as good, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as bad:
        good_fd, bad_fd = os.dup(good.fileno()), os.dup(bad.fileno())
        with pytest.raises(SystemdSocketError, match=f"fd {bad_fd}"):
            adopt_all([PassedFd(good_fd, "good"), PassedFd(bad_fd, "bad")])
        with pytest.raises(OSError):
            os.fstat(good_fd)


def test_tls_and_basic_auth_apply_to_a_passed_socket(tmp_path):
    self_signed(tmp_path)
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode()
    web_yml = tmp_path / "web.yml"
    web_yml.write_text(f"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                       f"basic_auth_users:\n  prom: '{hashed}'\n")
    web = load_web_config(web_yml)
    app = ExporterApp(parse("--web.systemd-socket", "--no-exporter.leak-detector"), load_catalog(), web, environ={})
    with listening_socket() as original:
        port = original.getsockname()[1]
        (server,) = make_servers(app, adopt_all([PassedFd(os.dup(original.fileno()), "tls")]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = ssl.create_default_context(cafile=str(tmp_path / "server.crt"))
        client.check_hostname = False  # self_signed() names CN=127.0.0.1 without a subjectAltName
        exporter = RunningExporter(f"https://127.0.0.1:{port}", app, client)
        assert exporter.get("/")[0] == 401
        assert exporter.get("/", user="prom", password="wrong")[0] == 401
        status, body, _ = exporter.get("/", user="prom", password="s3cret")
        assert status == 200 and "MySQL exporter (mysql-snmp)" in body
        with pytest.raises(OSError):  # the passed socket speaks TLS only
            fetch(f"http://127.0.0.1:{port}/")
    finally:
        server.shutdown()
        server.server_close()
        app.close()


# --------------------------------------------------------------------------- the exporter, started as systemd does


@contextmanager
def socket_activated_exporter(sock: socket.socket, *flags: str, log: Path, **listen: str):
    """The exporter in a subprocess with ``sock`` as fd 3 and LISTEN_PID set to its pid."""
    with log.open("wb") as stderr:
        process = subprocess.Popen(["sh", "-c", SYSTEMD_LIKE_WRAPPER, "sh", *EXPORTER, *flags], cwd=REPO,
                                   stdin=sock.fileno(), stdout=subprocess.DEVNULL, stderr=stderr,
                                   env=clean_environment(**listen))
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


def fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.read().decode()


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6])
def test_exporter_serves_the_socket_systemd_passed(family, mariadb, monitoring_user, tmp_path):
    unused_port = free_loopback_port()
    log = tmp_path / "exporter.log"
    with listening_socket(family) as sock:
        host, port = sock.getsockname()[:2]
        url = f"http://[{host}]:{port}" if family == socket.AF_INET6 else f"http://{host}:{port}"
        with socket_activated_exporter(sock, "--web.systemd-socket", f"--config.my-cnf={monitoring_user.my_cnf}",
                                       f"--web.listen-address=127.0.0.1:{unused_port}", "--no-exporter.leak-detector",
                                       log=log, LISTEN_FDS="1", LISTEN_FDNAMES="mysqld-exporter.socket") as process:
            sock.close()  # the exporter holds the only copy now: if it died, the scrapes would fail fast
            status, landing = fetch(url + "/")
            assert status == 200 and 'href="/metrics"' in landing
            status, metrics = fetch(url + "/metrics")
            assert status == 200
            assert Scrape(metrics).value("mysql_up") == 1.0
            with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", unused_port)):
                pass  # --web.listen-address was not bound
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
    text = log.read_text()
    address = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
    assert (f"listening on {address}, systemd socket fd 3 (mysqld-exporter.socket), TLS is disabled"
            in text), text
    assert "--web.listen-address is ignored with --web.systemd-socket" in text
    assert "Traceback" not in text


def test_flag_without_passed_sockets_exits_2_with_one_line(tmp_path):
    result = subprocess.run([*EXPORTER, "--web.systemd-socket", f"--config.my-cnf={tmp_path / 'none.cnf'}"],
                            cwd=REPO, env=clean_environment(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    # mysqld_exporter's default log format, logfmt.
    assert " level=error logger=mysql_snmp.agents.commands.exporter " in line, line
    assert line.endswith('msg="--web.systemd-socket: LISTEN_PID is not set, so systemd '
                         "passed no sockets; check that a .socket unit with ListenStream= activates this service "
                         "(the same unit name, or Sockets= in the .service) and that ExecStart= runs the exporter "
                         'itself, not a wrapper that forks"'), line


@pytest.mark.parametrize("listen, message", [
    ({"LISTEN_FDS": "0"}, "--web.systemd-socket: LISTEN_FDS=0: systemd passed no sockets; "),
    ({"LISTEN_FDS": "one"}, "--web.systemd-socket: LISTEN_FDS='one' is not a number of sockets; "),
])
def test_activated_without_a_socket_exits_2_with_one_line(listen, message, tmp_path):
    log = tmp_path / "exporter.log"
    with listening_socket() as sock, socket_activated_exporter(
            sock, "--web.systemd-socket", f"--config.my-cnf={tmp_path / 'none.cnf'}", log=log, **listen) as process:
        assert process.wait(timeout=60) == 2
    (line,) = log.read_text().splitlines()
    assert message in line and "ListenStream=" in line
