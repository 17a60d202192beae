"""What an operator relies on: one version everywhere, --log-level after the command, the Perl
mysql-snmp's options, the missing-bcrypt line, SIGHUP that does not kill, --daemon-pid."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from mysql_snmp.agents.cli import build_parser, commands_of, main
from mysql_snmp.agents.commands.perl_agent_options import PASSWORD_REFUSED, apply_perl_agent_options
from mysql_snmp.agents.sources import default_source_names
from mysql_snmp.agents.demo.throwaway import free_loopback_port

REPO = Path(__file__).resolve().parents[2]
PYPROJECT_VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def run_cli(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from mysql_snmp.agents.cli import main; sys.exit(main())", *argv],
                          capture_output=True, text=True, cwd=REPO, timeout=60, **kwargs)


def test_version_is_pyprojects_for_the_program_and_every_command():
    commands = [parser.prog.split()[1:] for parser in commands_of(build_parser())]
    assert {"agentx", "exporter", "leak", "leak replay"} <= {" ".join(command) for command in commands}
    for argv in (["--version"], *([*command, "--version"] for command in commands), ["agentx", "-V"]):
        result = run_cli(*argv)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split()[-1] == PYPROJECT_VERSION, (argv, result.stdout)


@pytest.mark.parametrize("argv, level", [
    (["collect"], "info"),
    (["--log-level", "error", "collect"], "error"),
    (["collect", "--log-level", "debug"], "debug"),
    (["--log-level", "error", "exporter", "--log-level", "warning"], "warning"),
    (["leak", "replay", "--input", "x.csv", "--series", "s", "--log-level", "debug"], "debug"),
])
def test_log_level_before_or_after_the_command(argv, level):
    assert build_parser().parse_args(argv).log_level == level


def test_perl_agent_command_line_maps_onto_the_new_flags(tmp_path):
    my_cnf = tmp_path / "my.cnf"
    args = build_parser().parse_args([
        "agentx", "-c", str(my_cnf), "-h", "db1", "-P", "3307", "-u", "monitor", "-o", "1.3.6.1.4.1.20267.200.1",
        "-r", "300", "-b", "percona.heartbeat", "-n", "-m", "-s", "--no-procs", "--no-innodb",
        "--daemon-pid", str(tmp_path / "pid"),
    ])
    assert (args.my_cnf, args.host, args.port, args.user) == (str(my_cnf), "db1", "3307", "monitor")
    assert (args.oid, args.refresh, args.heartbeat) == ("1.3.6.1.4.1.20267.200.1", 300.0, "percona.heartbeat")
    assert args.perl_no_daemon and args.perl_pid_file == str(tmp_path / "pid")
    apply_perl_agent_options(args, default_source_names())
    chosen = args.sources.split(",")
    assert "processlist" not in chosen and "innodb_status" not in chosen
    assert set(chosen) == set(default_source_names()) - {"processlist", "innodb_status"}


def test_perl_agent_long_spellings_and_defaults():
    args = build_parser().parse_args(["agentx", "--config", "/etc/snmp/my.cnf", "--process-list"])
    assert args.my_cnf == "/etc/snmp/my.cnf" and args.refresh == 30.0 and args.perl_procs is True
    apply_perl_agent_options(args, default_source_names())
    assert args.sources is None  # switching a source on that runs anyway changes nothing


def test_password_on_the_command_line_is_refused_with_one_line(capsys):
    assert main(["agentx", "-p", "secret", "-h", "127.0.0.1"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"mysql-snmp agentx: {PASSWORD_REFUSED}"
    assert "secret" not in err


def test_verbose_is_debug_logging():
    args = build_parser().parse_args(["agentx", "-v"])
    root = logging.getLogger()
    before = root.level
    try:
        apply_perl_agent_options(args, default_source_names())
        assert root.level == logging.DEBUG
    finally:
        root.setLevel(before)


def test_basic_auth_without_bcrypt_is_one_clear_line(tmp_path):
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prometheus: $2b$12$" + "a" * 53 + "\n")
    blocked = ("import sys; sys.modules['bcrypt'] = None; from mysql_snmp.agents.cli import main; "
               "sys.exit(main())")  # an import of a module set to None raises ImportError, as when absent
    result = subprocess.run(
        [sys.executable, "-c", blocked, "exporter", "--web.config.file", str(web),
         "--web.listen-address", f"127.0.0.1:{free_loopback_port()}", "--mysqld.address", "127.0.0.1:1"],
        capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "bcrypt module, which is not installed: apt-get install python3-bcrypt" in lines[0]
    assert "Traceback" not in result.stderr


def wait_for(predicate, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached within {timeout} s")


@pytest.mark.parametrize("command", ["agentx", "exporter"])
def test_sighup_is_logged_not_fatal_and_sigterm_ends_cleanly(command, tmp_path):
    """SIGHUP's default action would kill the agent; it says a restart applies changes instead."""
    log = tmp_path / "log"
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nhost = 127.0.0.1\nport = 1\nuser = nobody\n")
    my_cnf.chmod(0o600)
    if command == "agentx":
        pid_file = tmp_path / "mysql-snmp.pid"
        options = ["agentx", "-c", str(my_cnf), "--agentx-socket", str(tmp_path / "no-snmpd"), "--no-leak",
                   "--daemon-pid", str(pid_file)]
    else:
        pid_file = None
        options = ["exporter", "--config.my-cnf", str(my_cnf), "--web.listen-address",
                   f"127.0.0.1:{free_loopback_port()}", "--no-exporter.leak-detector"]
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-c", "import sys; from mysql_snmp.agents.cli import main; sys.exit(main())",
                                    *options], cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "serving" in log.read_text() or "listening" in log.read_text().lower()
                 or process.poll() is not None, "start-up")
        assert process.poll() is None, log.read_text()
        if pid_file is not None:
            assert pid_file.read_text() == f"{process.pid}\n"
        os.kill(process.pid, signal.SIGHUP)
        wait_for(lambda: "SIGHUP" in log.read_text(), "the SIGHUP line")
        assert process.poll() is None, log.read_text()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0, log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert f"restart the {'agent' if command == 'agentx' else 'exporter'} to apply" in log.read_text()
    if pid_file is not None:
        assert not pid_file.exists()
