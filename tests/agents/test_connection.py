"""agents/config/settings.py and agents/mysql/: my.cnf reading, flag/env precedence, server detection, reconnect backoff."""

from __future__ import annotations

import argparse
import logging

import pymysql
import pytest

from mysql_snmp.agents.config.settings import PASSWORD_ENV, ConfigError, ConnectionSettings, add_connection_arguments, resolve_settings, settings_from_my_cnf
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.errors import MySQLUnavailable, classify_error
from mysql_snmp.agents.mysql.server_version import server_info_from_version, session_setup_statements


def write_cnf(tmp_path, text, mode=0o600, name="my.cnf"):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return path


def test_client_section_with_dashes_quotes_and_comments(tmp_path):
    path = write_cnf(tmp_path, """
# monitoring
[mysqld]
port = 9999
[client]
host = db1.example.net
port = 3307
user = "monitor"
password = 's3cr#t'   
ssl-ca = /etc/mysql/ca.pem
ssl_cert = /etc/mysql/cert.pem
ssl-key=/etc/mysql/key.pem   # the key
ssl-mode = verify_identity
""")
    s = settings_from_my_cnf(path)
    assert (s.host, s.port, s.user, s.password) == ("db1.example.net", 3307, "monitor", "s3cr#t")
    assert (s.ssl_ca, s.ssl_cert, s.ssl_key, s.ssl_mode) == (
        "/etc/mysql/ca.pem", "/etc/mysql/cert.pem", "/etc/mysql/key.pem", "VERIFY_IDENTITY")
    kwargs = s.pymysql_kwargs()
    assert kwargs["ssl_verify_cert"] is True and kwargs["ssl_verify_identity"] is True
    assert kwargs["host"] == "db1.example.net" and kwargs["port"] == 3307


def test_named_client_section_inherits_from_client(tmp_path):
    path = write_cnf(tmp_path, """
[client]
user = monitor
password = base
port = 3306
[client.replica2]
host = 10.0.0.2
password = other
""")
    s = settings_from_my_cnf(path, "client.replica2")
    assert (s.host, s.port, s.user, s.password) == ("10.0.0.2", 3306, "monitor", "other")
    with pytest.raises(ConfigError, match=r"no \[client.absent\] section"):
        settings_from_my_cnf(path, "client.absent")


def test_repr_never_shows_the_password(tmp_path):
    s = ConnectionSettings(host="h", user="u", password="hunter2")
    assert "hunter2" not in repr(s) and "hunter2" not in str(s)
    assert "<set>" in repr(s)


@pytest.mark.parametrize("port", ["abc", "0", "70000", ""])
def test_bad_port_names_file_and_key(tmp_path, port):
    path = write_cnf(tmp_path, f"[client]\nport = {port}\n")
    with pytest.raises(ConfigError) as info:
        settings_from_my_cnf(path)
    message = str(info.value)
    assert str(path) in message and "port" in message and "\n" not in message


@pytest.mark.parametrize("timeout", ["abc", "0", "-1", "nan", "inf", "1e9"])
def test_bad_connect_timeout_names_file_and_key(tmp_path, timeout):
    # pymysql refuses these only when connecting, which read as "server unreachable".
    path = write_cnf(tmp_path, f"[client]\nconnect-timeout = {timeout}\n")
    with pytest.raises(ConfigError) as info:
        settings_from_my_cnf(path)
    message = str(info.value)
    assert str(path) in message and "connect-timeout" in message and repr(timeout) in message


def test_missing_file_is_one_clear_line(tmp_path):
    with pytest.raises(ConfigError, match=r"absent.cnf: no such file"):
        resolve_settings(tmp_path / "absent.cnf", environ={})


def test_binary_file_is_one_clear_line_naming_it(tmp_path):
    path = tmp_path / "binary.cnf"
    path.write_bytes(b"[client]\nuser = \xd0\x00\xff\n")
    path.chmod(0o600)
    with pytest.raises(ConfigError) as info:
        settings_from_my_cnf(path)
    message = str(info.value)
    assert str(path) in message and "UTF-8" in message and "\n" not in message


def test_file_readable_by_others_is_warned(tmp_path, caplog):
    path = write_cnf(tmp_path, "[client]\nuser = u\n", mode=0o644)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.option_file"):
        settings_from_my_cnf(path)
    warned = [r.getMessage() for r in caplog.records if "readable by group or others" in r.getMessage()]
    # The one command that works for the packaged units (they read it through LoadCredential=).
    assert len(warned) == 1 and f"sudo chown root:root {path} && sudo chmod 0600 {path}" in warned[0]
    caplog.clear()
    path.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="mysql_snmp.agents.option_file"):
        settings_from_my_cnf(path)
    assert not caplog.records


def test_flags_override_file_and_password_only_from_file_or_env(tmp_path):
    path = write_cnf(tmp_path, "[client]\nhost = a\nport = 3306\nuser = filer\npassword = frompass\n")
    s = resolve_settings(path, host="b", port="3310", user="flagger", environ={})
    assert (s.host, s.port, s.user, s.password) == ("b", 3310, "flagger", "frompass")
    # mysqld_exporter's rule: the file's password wins, the variable fills in when it has none.
    s = resolve_settings(path, environ={PASSWORD_ENV: "fromenv"})
    assert s.password == "frompass"
    no_password = write_cnf(tmp_path, "[client]\nuser = filer\n[client.replica]\nhost = r\n", name="nopw.cnf")
    assert resolve_settings(no_password, environ={PASSWORD_ENV: "fromenv"}).password == "fromenv"
    assert resolve_settings(no_password, section="client.replica", environ={PASSWORD_ENV: "fromenv"}).password \
        == "fromenv"
    assert resolve_settings(no_password, environ={}).password is None
    with pytest.raises(ConfigError, match="--port"):
        resolve_settings(path, port="x", environ={})


def test_socket_used_for_localhost_only(tmp_path):
    path = write_cnf(tmp_path, "[client]\nuser = m\nsocket = /run/mysqld/mysqld.sock\n")
    s = resolve_settings(path, environ={})
    assert s.uses_socket and s.target == "unix:/run/mysqld/mysqld.sock"
    assert s.pymysql_kwargs()["unix_socket"] == "/run/mysqld/mysqld.sock"
    s = resolve_settings(path, host="127.0.0.1", environ={})
    assert not s.uses_socket and s.target == "127.0.0.1:3306"


def test_ssl_modes(tmp_path):
    assert ConnectionSettings(ssl_mode="DISABLED").pymysql_kwargs()["ssl_disabled"] is True
    required = ConnectionSettings(ssl_mode="REQUIRED").pymysql_kwargs()
    assert required["ssl"]["check_hostname"] is False
    verify_ca = ConnectionSettings(ssl_mode="VERIFY_CA", ssl_ca="/ca").pymysql_kwargs()
    assert verify_ca["ssl_verify_cert"] is True and verify_ca["ssl_verify_identity"] is False
    mariadb_style = write_cnf(tmp_path, "[client]\nssl-ca=/ca\nssl-verify-server-cert\n")
    kwargs = settings_from_my_cnf(mariadb_style).pymysql_kwargs()
    assert kwargs["ssl_verify_identity"] is True and kwargs["ssl_ca"] == "/ca"
    bad = write_cnf(tmp_path, "[client]\nssl-mode = sometimes\n", name="bad.cnf")
    with pytest.raises(ConfigError, match="ssl-mode"):
        settings_from_my_cnf(bad)


@pytest.mark.parametrize(
    "version, comment, flavour, numbers",
    [
        ("10.11.19-MariaDB-0+deb12u1-log", "Debian 12", "mariadb", (10, 11, 19)),
        ("5.5.5-10.6.12-MariaDB", "mariadb.org binary distribution", "mariadb", (5, 5, 5)),
        ("8.0.36-28", "Percona Server (GPL), Release 28, Revision 47601f19", "percona", (8, 0, 36)),
        ("8.4.3", "MySQL Community Server - GPL", "mysql", (8, 4, 3)),
    ],
)
def test_server_flavour_and_version(version, comment, flavour, numbers):
    info = server_info_from_version(version, comment)
    assert (info.flavour, info.version) == (flavour, numbers)


def test_statement_limits_per_flavour():
    mariadb = server_info_from_version("10.11.19-MariaDB", "")
    mysql = server_info_from_version("8.0.36", "MySQL Community Server - GPL")
    old_mysql = server_info_from_version("5.6.51", "")
    assert session_setup_statements(mariadb, 2.5, 1) == [
        "SET SESSION lock_wait_timeout = 1", "SET SESSION max_statement_time = 2.5"]
    assert session_setup_statements(mysql, 2.5, 3) == [
        "SET SESSION lock_wait_timeout = 3", "SET SESSION max_execution_time = 2500"]
    assert session_setup_statements(old_mysql, 2.5, 1) == ["SET SESSION lock_wait_timeout = 1"]


def test_error_classification():
    assert classify_error(pymysql.err.OperationalError(1227, "Access denied; you need ...")).reason == "privilege"
    assert classify_error(pymysql.err.OperationalError(1969, "max_statement_time exceeded")).reason == "timeout"
    assert classify_error(pymysql.err.ProgrammingError(1064, "syntax")).reason == "unsupported"
    lost = classify_error(pymysql.err.OperationalError(2013, "Lost connection to server during query"))
    assert isinstance(lost, MySQLUnavailable) and lost.reason == "connection"


def test_reconnect_backoff_doubles_and_caps():
    now = [100.0]
    attempts = []

    def refuse(**kwargs):
        attempts.append(now[0])
        raise pymysql.err.OperationalError(2003, "Can't connect to MySQL server on '127.0.0.1'")

    conn = MySQLConnection(ConnectionSettings(host="127.0.0.1", port=1), backoff_initial=0.5, backoff_max=2.0,
                           clock=lambda: now[0], connector=refuse)
    delays = []
    for _ in range(5):
        with pytest.raises(MySQLUnavailable):
            conn.ensure_connected()
        # A call before the next attempt is due does not touch the network.
        with pytest.raises(MySQLUnavailable, match="next attempt in"):
            conn.ensure_connected()
        delays.append(conn._next_attempt - now[0])
        now[0] = conn._next_attempt
    assert delays == [0.5, 1.0, 2.0, 2.0, 2.0]
    assert len(attempts) == 5


def test_default_my_cnf_is_read_from_home_when_present(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    s = resolve_settings(environ={})
    assert (s.host, s.port, s.origin) == ("localhost", 3306, "defaults")
    write_cnf(tmp_path, "[client]\nuser = fromhome\nport = 3399\n", name=".my.cnf")
    s = resolve_settings(environ={})
    assert (s.user, s.port) == ("fromhome", 3399) and s.origin.endswith(".my.cnf [client]")


@pytest.mark.parametrize("flag, value", [("--statement-timeout", "0"), ("--statement-timeout", "-5"),
                                         ("--statement-timeout", "nan"), ("--lock-wait-timeout", "0"),
                                         ("--lock-wait-timeout", "-5")])
def test_timeout_flags_must_be_positive(capsys, flag, value):
    # A statement timeout <= 0 reached pymysql as read_timeout and failed as "server unreachable";
    # lock_wait_timeout below 1 is not a value the server accepts.
    parser = argparse.ArgumentParser(prog="mysql-snmp collect")
    add_connection_arguments(parser)
    with pytest.raises(SystemExit) as info:
        parser.parse_args([flag, value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert flag in err and f"{value!r} is not a number of seconds greater than 0" in err
    assert parser.parse_args([flag, "2"]).__dict__[flag[2:].replace("-", "_")] == 2


def test_an_error_without_a_server_code_reads_as_its_type_not_error_none():
    assert str(classify_error(pymysql.err.OperationalError(1045, "Access denied"))) == "ERROR 1045: Access denied"
    assert str(classify_error(RuntimeError("cryptography is required"))) == "RuntimeError: cryptography is required"
    assert str(classify_error(pymysql.err.OperationalError("no code"))) == "OperationalError: no code"
    encoding = classify_error(UnicodeEncodeError("latin-1", "pw€", 2, 3, "ordinal not in range(256)"))
    assert str(encoding) == "UnicodeEncodeError: a setting cannot be converted to latin-1"
