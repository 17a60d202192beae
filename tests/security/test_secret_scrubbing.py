"""Every secret source through every error path: the password never comes back as text.

Passwords here hold what breaks naive handling: a character outside Latin-1 (pymysql's
UnicodeEncodeError carried the whole password as ``args[1]``, which the error classifier served as
``ERROR None: <password>``), quotes, a backslash and a ``#``.  Each one comes from the option file,
MYSQLD_EXPORTER_PASSWORD or DATA_SOURCE_NAME, and meets a wrong password, an authentication switch,
a TLS failure and a failing statement; the error text, the collection's record of it and the log
(tracebacks included) are searched for it.
"""

from __future__ import annotations

import logging
import secrets

import pymysql
import pytest

from mysql_snmp.agents.collection import Collector
from mysql_snmp.agents.config.settings import PASSWORD_ENV, resolve_settings, settings_from_my_cnf
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.errors import QueryError, classify_error
from mysql_snmp.agents.exporter.settings import settings_from_dsn
from mysql_snmp.agents.bounds.log_lines import install_log_guards
from mysql_snmp.agents.config.redact import MASK, redact, remember_secret
from tests.agents.test_collection import _FakeConnection
from tests.fake_mysql_server import clear_text_phisher
from tests.support import option_file_literal, sql_literal


def nasty_secret() -> tuple[str, str]:
    """(password, token): the token, at both ends, shows any part of the password that got out."""
    token = secrets.token_hex(6)
    return f"{token}S3cret€\"q'\\b#x{token}", token


@pytest.fixture
def redacted_log(caplog):
    original = logging.getLogRecordFactory()
    install_log_guards()
    caplog.set_level(logging.DEBUG)
    yield caplog
    logging.setLogRecordFactory(original)


def settings_from(source: str, password: str, tmp_path, host: str, port: int, **options: str):
    extra = "".join(f"{key} = {value}\n" for key, value in options.items())
    if source == "dsn":
        return settings_from_dsn(f"monitor:{password}@tcp({host}:{port})/")
    path = tmp_path / "my.cnf"
    line = f"password = {option_file_literal(password)}\n" if source == "my.cnf" else ""
    path.write_text(f"[client]\nhost = {host}\nport = {port}\nuser = monitor\n{line}{extra}")
    path.chmod(0o600)
    if source == "my.cnf":
        return settings_from_my_cnf(path)
    return resolve_settings(path, environ={PASSWORD_ENV: password})


SOURCES = ["my.cnf", "env", "dsn"]


def assert_nowhere(token: str, *texts: str) -> None:
    for text in texts:
        assert token not in text, text


def login_error(settings) -> str:
    connection = MySQLConnection(settings)
    try:
        with pytest.raises(QueryError) as failed:
            connection.ensure_connected()
    finally:
        connection.close()
    return str(failed.value)


@pytest.mark.parametrize("source", SOURCES)
def test_a_wrong_password_from_each_source(mariadb, tmp_path, redacted_log, source):
    password, token = nasty_secret()
    settings = settings_from(source, password, tmp_path, "127.0.0.1", mariadb.port)
    assert settings.password == password  # read whole, quotes, backslash and all
    error = login_error(settings)
    assert "ERROR 1045: Access denied for user 'monitor'" in error and "None" not in error
    assert_nowhere(token, error, redacted_log.text)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("plugin", [b"mysql_clear_password", b"dialog"])
def test_an_authentication_switch_from_each_source(tmp_path, redacted_log, source, plugin):
    password, token = nasty_secret()
    with clear_text_phisher(plugin) as phisher:
        error = login_error(settings_from(source, password, tmp_path, "127.0.0.1", phisher.port))
    assert "clear text" in error
    assert not any(token.encode() in sent for sent in phisher.received)
    assert_nowhere(token, error, redacted_log.text)


@pytest.mark.parametrize("source", ["my.cnf", "env"])
@pytest.mark.parametrize("tls, expected", [
    ({"ssl-mode": "REQUIRED"}, "ERROR 2026: SSL is required but the server doesn't support it"),
    ({"ssl-mode": "VERIFY_CA", "ssl-ca": "/nonexistent/ca.pem"}, "FileNotFoundError: "),
])
def test_a_tls_failure_from_each_source(mariadb, tmp_path, redacted_log, source, tls, expected):
    password, token = nasty_secret()
    error = login_error(settings_from(source, password, tmp_path, "127.0.0.1", mariadb.port, **tls))
    assert expected in error
    assert_nowhere(token, error, redacted_log.text)


def test_a_tls_failure_from_the_dsn(mariadb, redacted_log):
    password, token = nasty_secret()
    error = login_error(settings_from_dsn(f"monitor:{password}@tcp(127.0.0.1:{mariadb.port})/?tls=skip-verify"))
    assert "ERROR 2026" in error
    assert_nowhere(token, error, redacted_log.text)


def echoing_server(password: str):
    """A driver fault no real server produces on purpose: errors whose text is the password, in the
    shapes pymysql used (UnicodeEncodeError's args[1]) and a server echoing a statement back."""

    def answer(statement: str):
        if statement.startswith("SELECT @@version"):
            return ("v", "c"), [("10.11.99-MariaDB", "")]
        if "GLOBAL STATUS" in statement.upper():
            return pymysql.err.ProgrammingError(1064, f"syntax error near '{password}'")
        if "GLOBAL VARIABLES" in statement.upper():
            return UnicodeEncodeError("latin-1", password, 12, 13, "ordinal not in range(256)")
        return (), []

    return answer


@pytest.mark.parametrize("source", SOURCES)
def test_a_failing_statement_that_echoes_the_password(tmp_path, redacted_log, source):
    password, token = nasty_secret()
    settings = settings_from(source, password, tmp_path, "127.0.0.1", 9)
    unicode_error = UnicodeEncodeError("latin-1", password, 12, 13, "ordinal not in range(256)")
    # The control: the classifier's old reading of an exception (args[1] as the message) is the password.
    assert unicode_error.args[1] == password
    assert_nowhere(token, str(classify_error(unicode_error)))
    connection = MySQLConnection(settings, connector=lambda **kwargs: _FakeConnection(echoing_server(password)))
    collector = Collector(settings, sources=["global_status", "global_variables"], connection=connection)
    snapshot = collector.collect()
    errors = [status.error or "" for status in snapshot.sources.values()]
    assert any("ERROR 1064: syntax error near" in error for error in errors), errors
    assert any("UnicodeEncodeError: a setting cannot be converted to latin-1" in error for error in errors), errors
    assert_nowhere(token, *errors, redacted_log.text)
    collector.close()


def test_every_configured_password_is_scrubbed_even_unused_ones(tmp_path):
    path = tmp_path / "my.cnf"
    unused = f"unused-{secrets.token_hex(6)}"
    env = f"env-{secrets.token_hex(6)}"
    path.write_text(f"[client]\nuser = m\npassword = used\n[mysqldump]\nuser = root\npassword = {unused}\n")
    path.chmod(0o600)
    resolve_settings(path, environ={PASSWORD_ENV: env})
    assert redact(f"a {unused} b {env!r} c {'used'.encode()!r}") == f"a {MASK} b '{MASK}' c b'{MASK}'"


def test_a_traceback_in_the_log_is_scrubbed(redacted_log):
    password, token = nasty_secret()
    remember_secret(password)
    try:
        raise RuntimeError(f"driver said {password!r}")
    except RuntimeError:
        logging.getLogger("mysql_snmp.test").exception("unexpected %s", password)
    assert "driver said" in redacted_log.text and MASK in redacted_log.text
    assert_nowhere(token, redacted_log.text)


def test_collect_logs_in_with_the_password_and_prints_no_part_of_a_wrong_one(mariadb, tmp_path, capsys):
    from mysql_snmp.agents.cli import main

    password, token = nasty_secret()
    user = f"scrub_{token[:8]}"
    mariadb.execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY {sql_literal(password)}")
    try:
        path = tmp_path / "my.cnf"
        for given, expected_code in ((password, 0), (password[::-1], 1)):
            path.write_text(f"[client]\nhost = 127.0.0.1\nport = {mariadb.port}\nuser = {user}\n"
                            f"password = {option_file_literal(given)}\n")
            path.chmod(0o600)
            code = main(["collect", "--my-cnf", str(path), "--sources", "global_status"])
            out, err = capsys.readouterr()
            assert code == expected_code, err
            assert_nowhere(token, out, err)
            assert_nowhere(token[::-1], out, err)
        assert "ERROR 1045: Access denied" in err and "None" not in err
    finally:
        mariadb.execute(f"DROP USER IF EXISTS '{user}'@'127.0.0.1'")
