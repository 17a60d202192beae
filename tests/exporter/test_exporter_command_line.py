"""mysqld_exporter's non-collector flags and Debian's DATA_SOURCE_NAME, with their meaning."""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys

import pytest

from mysql_snmp.agents.config.settings import ConfigError
from mysql_snmp.agents.snapshot import ServerInfo
from mysql_snmp.agents.mysql.server_version import session_setup_statements
from mysql_snmp.agents.exporter.flags import add_arguments, config_from_args
from mysql_snmp.agents.exporter.log_format import JsonFormatter, LogfmtFormatter
from mysql_snmp.agents.exporter.settings import default_settings, settings_from_dsn
from mysql_snmp.agents.config.version import installed_version


def parse(*argv: str):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return config_from_args(parser.parse_args(list(argv)))


# --------------------------------------------------------------------------- DATA_SOURCE_NAME


@pytest.mark.parametrize("dsn, target, user, password", [
    ("exporter:s3cr:et@(db.example:3307)/", "db.example:3307", "exporter", "s3cr:et"),
    ("exporter:pw@tcp(127.0.0.1:3306)/", "127.0.0.1:3306", "exporter", "pw"),
    ("exporter@unix(/run/mysqld/mysqld.sock)/", "unix:/run/mysqld/mysqld.sock", "exporter", None),
    ("exporter:p@ss@([::1]:3306)/mysql?timeout=5s", "::1:3306", "exporter", "p@ss"),
    ("root@/", "127.0.0.1:3306", "root", None),
])
def test_go_dsn_forms(dsn, target, user, password):
    settings = settings_from_dsn(dsn)
    assert (settings.target, settings.user, settings.password) == (target, user, password)
    assert settings.origin == "DATA_SOURCE_NAME"


def test_dsn_tls_parameter():
    assert settings_from_dsn("u:p@(h:1)/?tls=skip-verify").ssl_mode == "REQUIRED"
    verified = settings_from_dsn("u:p@(h:1)/?tls=true")
    assert verified.ssl_mode == "VERIFY_IDENTITY" and verified.ssl_verify_server_cert


@pytest.mark.parametrize("dsn", ["user:hunter2@(host:3306)", "user:hunter2@udp(host:1)/", "user:hunter2@(host:1/"])
def test_bad_dsn_is_one_error_without_the_password(dsn):
    with pytest.raises(ConfigError) as error:
        settings_from_dsn(dsn)
    assert "hunter2" not in str(error.value) and "DATA_SOURCE_NAME" in str(error.value)


def test_dsn_only_without_an_option_file_flag(tmp_path):
    environ = {"DATA_SOURCE_NAME": "dsnuser:pw@(10.1.2.3:3306)/"}
    from_dsn = default_settings("~/.my.cnf", None, None, environ, my_cnf_given=False)
    assert (from_dsn.target, from_dsn.user) == ("10.1.2.3:3306", "dsnuser")
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser = cnfuser\nhost = 127.0.0.1\nport = 3310\n")
    cnf.chmod(0o600)
    from_file = default_settings(str(cnf), None, None, environ, my_cnf_given=True)
    assert (from_file.target, from_file.user) == ("127.0.0.1:3310", "cnfuser")
    assert parse().my_cnf_given is False and parse(f"--config.my-cnf={cnf}").my_cnf_given is True


def test_dsn_beside_an_option_file_this_user_cannot_read_is_used_as_go_uses_it(tmp_path):
    """Debian's unit runs mysqld_exporter as prometheus; ARGS may name a root-only file."""
    environ = {"DATA_SOURCE_NAME": "dsnuser:pw@(10.1.2.3:3306)/"}
    missing = tmp_path / "missing.cnf"
    from_dsn = default_settings(str(missing), None, None, environ, my_cnf_given=True)
    assert (from_dsn.target, from_dsn.user, from_dsn.origin) == ("10.1.2.3:3306", "dsnuser", "DATA_SOURCE_NAME")
    if os.geteuid() != 0:  # root reads every file
        unreadable = tmp_path / "root-only.cnf"
        unreadable.write_text("[client]\nuser = cnfuser\n")
        unreadable.chmod(0)
        assert default_settings(str(unreadable), None, None, environ, my_cnf_given=True).user == "dsnuser"
    # The control: without the variable, the same missing file is the one-line error it was.
    with pytest.raises(ConfigError, match="no such file"):
        default_settings(str(missing), None, None, {}, my_cnf_given=True)


def test_no_option_file_and_nothing_naming_a_server_stops_at_start_as_go_does(tmp_path, monkeypatch):
    """mysqld_exporter 0.14 exits 1 ("Error parsing my.cnf"); ours exits 2 with one line, rather
    than serve mysql_up 0 for ever."""
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/.my.cnf does not exist
    with pytest.raises(ConfigError, match=r"no such file, and neither DATA_SOURCE_NAME nor --mysqld.address"):
        default_settings("~/.my.cnf", None, None, {}, my_cnf_given=False)
    # A server named any other way is enough, as before.
    assert default_settings("~/.my.cnf", "db1:3306", None, {}, my_cnf_given=False).target == "db1:3306"
    assert default_settings("~/.my.cnf", None, "monitor", {}, my_cnf_given=False).user == "monitor"
    go = "/usr/bin/prometheus-mysqld-exporter"
    if os.path.exists(go):
        answer = subprocess.run([go, "--web.listen-address=127.0.0.1:0"], capture_output=True, text=True, timeout=30,
                                env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
        assert answer.returncode == 1 and "Error parsing my.cnf" in answer.stderr


def test_password_of_a_dsn_is_never_in_the_settings_text():
    settings = settings_from_dsn("u:hunter2@(h:1)/")
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings)


# --------------------------------------------------------------------------- logging, version, session


def record(message: str, level=logging.INFO) -> logging.LogRecord:
    return logging.LogRecord("mysql_snmp.agents.x", level, __file__, 1, message, (), None)


def test_logfmt_lines():
    line = LogfmtFormatter().format(record('scrape of "db" failed', logging.WARNING))
    assert line.startswith("ts=") and " level=warn logger=mysql_snmp.agents.x " in line
    assert line.endswith('msg="scrape of \\"db\\" failed"')
    assert LogfmtFormatter().format(record("ready")).endswith(" msg=ready")


def test_json_lines():
    fields = json.loads(JsonFormatter().format(record("listening", logging.DEBUG)))
    assert fields["level"] == "debug" and fields["msg"] == "listening" and fields["ts"].endswith("Z")


def test_log_flags_and_version():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--log.level=warn", "--log.format=json"])
    assert (args.exporter_log_level, args.exporter_log_format) == ("warn", "json")
    with pytest.raises(SystemExit):
        parser.parse_args(["--log.format=xml"])
    out = subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "exporter", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["mysql-snmp", "exporter", installed_version()]


def test_log_slow_filter_where_the_variable_exists():
    assert parse("--exporter.log_slow_filter").log_slow_filter is True
    assert parse().log_slow_filter is False
    mariadb = ServerInfo("mariadb", (10, 11, 6), "10.11.6-MariaDB")
    mysql = ServerInfo("mysql", (8, 0, 36), "8.0.36")
    filtered = [s for s in session_setup_statements(mariadb, 5.0, 2, True) if "log_slow_filter" in s]
    assert filtered == ["SET SESSION log_slow_filter = 'tmp_table_on_disk,filesort_on_disk'"]
    assert not [s for s in session_setup_statements(mysql, 5.0, 2, True) if "log_slow_filter" in s]
    assert not [s for s in session_setup_statements(mariadb, 5.0, 2, False) if "log_slow_filter" in s]


# --------------------------------------------------------------------------- option values checked at start


@pytest.mark.parametrize("flag, value, error", [
    ("--collect.perf_schema.file_instances.filter", "(", "'(' is not a regular expression: "
     "missing ), unterminated subpattern at position 0"),
    ("--collect.perf_schema.file_instances.filter", "ib.*[", "'ib.*[' is not a regular expression: "
     "unterminated character set at position 4"),
    ("--collect.perf_schema.file_instances.filter", "*.ibd", "'*.ibd' is not a regular expression: "
     "nothing to repeat at position 0"),
    ("--collect.perf_schema.eventsstatements.limit", "-1", "'-1' is negative; give 0 or more"),
    ("--collect.perf_schema.eventsstatements.timelimit", "1d", "'1d' is not a whole number"),
    ("--collect.perf_schema.eventsstatements.digest_text_limit", "-120", "'-120' is negative; give 0 or more"),
    ("--collect.info_schema.processlist.min_time", "-5", "'-5' is negative; give 0 or more"),
    ("--exporter.lock_wait_timeout", "-2", "'-2' is negative; give 0 or more"),
])
def test_a_bad_option_value_stops_the_start_with_one_line_naming_the_flag(flag, value, error):
    result = subprocess.run([sys.executable, "-m", "mysql_snmp.agents.cli", "exporter", f"{flag}={value}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    usage, message = result.stderr.splitlines()
    assert usage.startswith("usage: mysql-snmp exporter [--web.listen-address")
    assert message == f"mysql-snmp exporter: error: argument {flag}: {error}"


@pytest.mark.parametrize("pattern", [".*", r"^/var/lib/mysql/.*\.ibd$", r"\p{L}+", "(?<schema>[a-z]+)/", "a(?i)b",
                                     "[[:alpha:]]"])
def test_a_pattern_only_the_server_engine_knows_is_left_to_it(pattern):
    assert parse(f"--collect.perf_schema.file_instances.filter={pattern}").source_options.file_instances_filter \
        == pattern
