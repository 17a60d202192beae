"""The password stays where the operator put it: never in argv, logs (debug included), metrics,
SNMP answers, error messages or the environment handed down, through real runs of both agents
and their error paths (wrong password, missing grant, killed connection, unreachable server)."""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from mysql_snmp.agents.catalog import format_oid, load_catalog
from mysql_snmp.agents.config.settings import PASSWORD_ENV
from mysql_snmp.agents.demo.netsnmp_sandbox import REPO_ROOT, stop_process
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.agentx.agent_process import mysql_up
from tests.agentx.netsnmp import Snmpd, need_net_snmp, wait_until
from tests.faults.faultkit import kill_connections
from tests.support import MINIMAL_GRANTS, option_file_literal, sql_literal

_CATALOG = load_catalog()
LAST_ERROR_OID = format_oid(_CATALOG.by_name("agent_last_error").snmp.oid) + ".0"


def canary(label: str) -> str:
    # A random token at both ends: finding it anywhere, whole or in part, escaped or not, can only
    # mean it leaked.  Between them what breaks naive handling: a character outside Latin-1 (pymysql
    # raised UnicodeEncodeError carrying the password), quotes, a backslash, a '#'.
    token = secrets.token_hex(6)
    return f"{token}Pw€{label}\"q'\\#{token}"


class Secrets:
    def __init__(self):
        self.right = canary("Right")   # the monitoring user's real password, in my.cnf
        self.wrong = canary("Wrong")   # a wrong one, in another section
        self.env = canary("Env")       # given through MYSQLD_EXPORTER_PASSWORD

    def __iter__(self):
        return iter((self.right, self.wrong, self.env))

    def assert_absent(self, where: str, text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        for password in self:
            assert password[:12].encode() not in data, f"password found in {where}"


@pytest.fixture
def secret_setup(mariadb, tmp_path):
    """A monitoring user whose password is a canary, and a my.cnf with a right, a wrong and an
    env-only section."""
    found = Secrets()
    name = f"sec_{secrets.token_hex(4)}"
    account = f"'{name}'@'127.0.0.1'"
    mariadb.execute(f"CREATE USER {account} IDENTIFIED BY {sql_literal(found.right)}",
                    *(grant.format(user=account) for grant in MINIMAL_GRANTS))
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text(
        f"[client]\nhost = 127.0.0.1\nport = {mariadb.port}\nuser = {name}\npassword = {option_file_literal(found.right)}\n"
        f"[client.wrong]\npassword = {option_file_literal(found.wrong)}\n"
        f"[client.envonly]\nuser = sec_nobody\npassword =\n"
    )
    my_cnf.chmod(0o600)
    yield found, name, my_cnf
    mariadb.execute(f"DROP USER IF EXISTS {account}")


def environment(found: Secrets) -> dict[str, str]:
    return {**os.environ, PASSWORD_ENV: found.env, "PYTHONPATH": str(REPO_ROOT)}


def process_traces(process: subprocess.Popen) -> dict[str, bytes]:
    """What another local user or a child could read of a running agent."""
    proc = Path(f"/proc/{process.pid}")
    traces = {"argv": (proc / "cmdline").read_bytes(), "start-up environment": (proc / "environ").read_bytes()}
    for task in (proc / "task").iterdir():
        traces[f"argv of thread {task.name}"] = (task / "cmdline").read_bytes()
    return traces


def http_get(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError:  # not listening yet
        return 0, ""


def test_exporter_never_shows_the_password(mariadb, secret_setup, tmp_path):
    found, user, my_cnf = secret_setup
    port = free_loopback_port()
    log_path = tmp_path / "exporter.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "mysql_snmp.agents.cli", "--log-level", "debug", "exporter", f"--config.my-cnf={my_cnf}",
             f"--web.listen-address=127.0.0.1:{port}", f"--exporter.leak-state-file={tmp_path / 'leak.json'}",
             "--collect.info_schema.processlist", "--collect.perf_schema.memory_events"],
            cwd=REPO_ROOT, env=environment(found), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    answers: dict[str, str] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: process.poll() is not None or http_get(base + "/metrics")[0] == 200, what="exporter up")
        answers["/metrics"] = http_get(base + "/metrics")[1]
        assert "mysql_up 1" in answers["/metrics"]
        # The error paths: a wrong password, a password from the environment for a user that does
        # not exist, a port nobody listens on, a missing grant, connections killed under it.
        target = urllib.parse.quote(f"127.0.0.1:{mariadb.port}")
        for module in ("client.wrong", "client.envonly"):
            answers[module] = http_get(f"{base}/probe?target={target}&auth_module={module}")[1]
            assert "mysql_up 0" in answers[module]
        closed = urllib.parse.quote(f"127.0.0.1:{free_loopback_port()}")
        answers["closed port"] = http_get(f"{base}/probe?target={closed}&auth_module=client")[1]
        answers["bad module"] = http_get(f"{base}/probe?target={target}&auth_module=client.none")[1]
        mariadb.execute(f"REVOKE PROCESS ON *.* FROM '{user}'@'127.0.0.1'")
        kill_connections(mariadb, user)
        answers["/metrics after revoke"] = http_get(base + "/metrics")[1]
        assert "mysql_up 1" in answers["/metrics after revoke"]
        traces = process_traces(process)
    finally:
        stop_process(process)
        mariadb.execute(f"GRANT PROCESS ON *.* TO '{user}'@'127.0.0.1'")
    log_text = log_path.read_text()
    assert "Access denied" in log_text or "1045" in log_text, log_text[-2000:]  # the error path ran
    assert "level=debug" in log_text  # the exporter logs logfmt, as mysqld_exporter
    found.assert_absent("the log", log_text)
    for where, text in {**answers, **traces}.items():
        found.assert_absent(where, text)
    found.assert_absent("the history file", (tmp_path / "leak.json").read_bytes())


def run_agentx(snmpd: Snmpd, my_cnf: Path, log_path: Path, env: dict, *options: str) -> subprocess.Popen:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "mysql_snmp.agents.cli", "--log-level", "debug", "agentx", "--agentx-socket",
             str(snmpd.agentx_socket), "--my-cnf", str(my_cnf), "--refresh", "1", *options],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def test_agentx_never_shows_the_password(mariadb, secret_setup, tmp_path):
    need_net_snmp()
    found, user, my_cnf = secret_setup
    snmpd = Snmpd(tmp_path / "snmpd")
    snmpd.start()
    outputs: dict[str, str] = {}
    log_path = tmp_path / "agentx.log"
    try:
        agent = run_agentx(snmpd, my_cnf, log_path, environment(found), "--leak-state", str(tmp_path / "leak.json"))
        try:
            wait_until(lambda: agent.poll() is not None or mysql_up(snmpd), what="agent serving")
            outputs["walk"] = snmpd.run("snmpbulkwalk", "1.3.6.1.4.1.20267.200").stdout
            mariadb.execute(f"REVOKE PROCESS ON *.* FROM '{user}'@'127.0.0.1'")
            kill_connections(mariadb, user)
            time.sleep(2.5)
            outputs["walk after revoke"] = snmpd.run("snmpbulkwalk", "1.3.6.1.4.1.20267.200").stdout
            traces = process_traces(agent)
        finally:
            stop_process(agent)
            mariadb.execute(f"GRANT PROCESS ON *.* TO '{user}'@'127.0.0.1'")
        # The wrong password, then the env password for a user that does not exist.
        for section in ("client.wrong", "client.envonly"):
            agent = run_agentx(snmpd, my_cnf, log_path, environment(found), "--my-cnf-section", section,
                               "--no-leak")
            try:
                wait_until(lambda: agent.poll() is not None or "Access denied" in (
                    " ".join(v.value for v in snmpd.get(LAST_ERROR_OID))), what="the access error served")
                outputs[section] = snmpd.run("snmpbulkwalk", "1.3.6.1.4.1.20267.200").stdout
                traces.update({f"{section} {k}": v for k, v in process_traces(agent).items()})
            finally:
                stop_process(agent)
    finally:
        snmpd.stop()
    log_text = log_path.read_text()
    assert "DEBUG" in log_text and "Access denied" in log_text and "disabled" in log_text
    found.assert_absent("the log", log_text)
    for where, text in {**outputs, **traces}.items():
        found.assert_absent(where, text)
    found.assert_absent("the history file", (tmp_path / "leak.json").read_bytes())


@pytest.mark.parametrize("command", ["exporter", "agentx"])
def test_the_password_variable_is_not_handed_down(command, monkeypatch, tmp_path):
    """Once read, MYSQLD_EXPORTER_PASSWORD leaves the process environment: a child started later
    (a hook, a shell) does not inherit it."""
    monkeypatch.setenv(PASSWORD_ENV, "from-the-environment")
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nhost = 127.0.0.1\nport = 9\nuser = nobody\n")
    my_cnf.chmod(0o600)
    if command == "exporter":
        from mysql_snmp.agents.commands import exporter
        from mysql_snmp.agents.exporter import server

        monkeypatch.setattr(server, "serve", lambda *args: None)
        monkeypatch.setattr("signal.signal", lambda *args: None)  # keep pytest's own handlers
        parser = argparse.ArgumentParser()
        exporter.register(parser.add_subparsers())
        args = parser.parse_args(["exporter", f"--config.my-cnf={my_cnf}", "--no-exporter.leak-detector"])
        assert exporter.run(args) == 0
    else:
        from mysql_snmp.agents.commands import agentx

        async def no_serving(refresher, session):
            return None

        monkeypatch.setattr(agentx, "serve", no_serving)
        parser = argparse.ArgumentParser()
        agentx.register(parser.add_subparsers())
        assert agentx.run(parser.parse_args(["agentx", "--my-cnf", str(my_cnf), "--no-leak"])) == 0
    assert PASSWORD_ENV not in os.environ
    child = subprocess.run([sys.executable, "-c", f"import os; print(os.environ.get({PASSWORD_ENV!r}, ''))"],
                           capture_output=True, text=True)
    assert child.stdout.strip() == ""
