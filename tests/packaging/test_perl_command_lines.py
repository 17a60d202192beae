"""The Perl mysql-snmp's command lines run the subagent unchanged after an upgrade: no command
word, Getopt::Long's spellings, a root-only -c file handed over by systemd, an unwritable
--daemon-pid."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mysql_snmp.agents.cli import COMMAND_MODULES, build_parser
from mysql_snmp.agents.commands.perl_agent_options import (PERL_CONFIG_CREDENTIAL, PERL_CONFIG_ENV, PidFile,
                                                           perl_command_line, with_perl_spellings)

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv, expected", [
    (["-c", "/etc/snmp/my.cnf"], ["agentx", "-c", "/etc/snmp/my.cnf"]),
    (["--config=/etc/snmp/my.cnf", "--nomaster"], ["agentx", "--config=/etc/snmp/my.cnf", "--nomaster"]),
    (["--daemon-pid", "/var/run/mysql-snmp.pid"], ["agentx", "--daemon-pid", "/var/run/mysql-snmp.pid"]),
    (["--version"], None), (["--help"], None), (["-h"], None), ([], None),
    (["collect", "-h", "db1"], None), (["--log-level", "debug", "exporter"], None),
])
def test_a_line_without_a_command_word_is_the_perl_agents(argv, expected):
    assert perl_command_line(argv, COMMAND_MODULES) == expected


def test_getopt_long_spellings_parse_as_the_perl_agent_meant_them():
    argv = with_perl_spellings(["agentx", "-config", "/etc/snmp/my.cnf", "-nomaster", "--noslave",
                                "--noprocess-list", "-refresh", "60", "-c", "x.cnf"])
    assert argv == ["agentx", "--config", "/etc/snmp/my.cnf", "--nomaster", "--noslave", "--noprocess-list",
                    "--refresh", "60", "-c", "x.cnf"]
    args = build_parser().parse_args(argv)
    assert (args.my_cnf, args.refresh) == ("x.cnf", 60.0)
    assert (args.perl_master, args.perl_slave, args.perl_procs, args.perl_innodb) == (False, False, False, None)
    # Without the rewrite argparse reads -config as -c onfig: the control.
    assert build_parser().parse_known_args(["agentx", "-config", "/etc/snmp/my.cnf"])[0].my_cnf == "onfig"


def test_the_old_call_runs_the_subagent():
    """/usr/sbin/mysql-snmp -c FILE -?: the subagent's help, not 'arguments are required: COMMAND'."""
    result = subprocess.run([sys.executable, "-c", "import sys; from mysql_snmp.agents.cli import main; sys.exit(main())",
                             "-config", "/etc/snmp/my.cnf", "-?"], capture_output=True, text=True, cwd=REPO,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: mysql-snmp agentx")
    assert "options of the Perl mysql-snmp" in result.stdout


def test_an_unwritable_daemon_pid_is_a_warning(tmp_path, caplog):
    with PidFile(str(tmp_path / "missing-directory" / "mysql-snmp.pid")) as pid_file:
        assert pid_file.path is None
    assert "running without a PID file" in caplog.text


CONFIG_PROBE = """
import json, os, sys
from mysql_snmp.agents.commands.perl_agent_options import config_from_credential
try:
    print(json.dumps({"file": config_from_credential(sys.argv[1])}))
except ValueError as exc:
    print(json.dumps({"error": str(exc)}))
try:
    open(sys.argv[1]).close()
    print(json.dumps({"open": "ok"}))
except OSError as exc:
    print(json.dumps({"open": exc.strerror}))
"""


def as_unprivileged_user(program: str, args: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess:
    """``python -c program args`` run by a user who may not read a root 0600 file (nobody, when we are root)."""
    command = [sys.executable, "-c", program, *args]
    if os.geteuid() == 0:
        command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]
    paths = [str(Path(p).resolve()) for p in sys.path if p]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd="/",
                          env={**environ, "PYTHONPATH": os.pathsep.join(paths), "PATH": os.environ["PATH"]})


def probe_as_unprivileged_user(config: Path, environ: dict[str, str]) -> list[dict]:
    """config_from_credential run by a user who may not read ``config``."""
    import json

    result = as_unprivileged_user(CONFIG_PROBE, [str(config)], environ)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def root_only_config():
    directory = Path(tempfile.mkdtemp(prefix="mysql-snmp-perl-"))
    directory.chmod(0o755)  # traversable, as /etc/snmp is
    config = directory / "my.cnf"
    config.write_text("[client]\nuser = monitor\npassword = secret\n")
    config.chmod(0o600 if os.geteuid() == 0 else 0o000)
    credentials = directory / "credentials"
    credentials.mkdir(mode=0o755)
    credential = credentials / PERL_CONFIG_CREDENTIAL
    credential.write_text(config.read_text() if os.geteuid() == 0 else "[client]\nuser = monitor\n")
    credential.chmod(0o444)  # systemd makes it 0400 and the service user's; nobody stands in here
    yield config, credentials
    config.chmod(0o600)
    shutil.rmtree(directory, ignore_errors=True)


def test_a_root_only_config_is_read_through_the_credential_systemd_loaded(root_only_config):
    config, credentials = root_only_config
    named = {"CREDENTIALS_DIRECTORY": str(credentials), PERL_CONFIG_ENV: str(config)}
    found, opened = probe_as_unprivileged_user(config, named)
    assert opened == {"open": "Permission denied"}  # the control: the file itself is out of reach
    assert found == {"file": str(credentials / PERL_CONFIG_CREDENTIAL)}


def test_another_unreadable_config_says_how_to_hand_it_over(root_only_config):
    config, credentials = root_only_config
    elsewhere = {"CREDENTIALS_DIRECTORY": str(credentials), PERL_CONFIG_ENV: "/etc/snmp/other.cnf"}
    for environ in (elsewhere, {}):
        found, _ = probe_as_unprivileged_user(config, environ)
        assert found["error"].startswith(f"cannot read {config} as this user")
        assert f"LoadCredential={PERL_CONFIG_CREDENTIAL}:{config}" in found["error"]


def test_agentx_exits_2_with_that_line_instead_of_restart_looping(root_only_config):
    """Exit status 2 is what the units' RestartPreventExitStatus= names: no restart every 5 s."""
    config, _ = root_only_config
    result = as_unprivileged_user("import sys; from mysql_snmp.agents.cli import main; sys.exit(main())",
                                  ["-c", str(config), "--no-leak", "--agentx-socket", "/nonexistent"], {})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().startswith(f"mysql-snmp agentx: cannot read {config} as this user")
