"""agents/config/option_file.py reads my.cnf as the mariadb client does: each case is checked against the
client's own parser (my_print_defaults) on the same file, and logins against a throwaway MariaDB."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pymysql
import pytest

from mysql_snmp.agents.config.settings import ConfigError, resolve_settings, settings_from_my_cnf
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.config.option_file import (
    MAX_INCLUDE_DEPTH,
    OptionFileError,
    cached_option_file,
    option_name,
    parse_option_text,
    read_option_file,
)
from tests.support import sql_literal

# One line of a [client] group -> the password the mariadb client reads from it.
VALUES = [
    ('password = "secret" # the monitoring one', "secret"),
    ("password = 'secret'", "secret"),
    ("password=secret#not a comment?", "secret"),
    ('password = "sec#ret"', "sec#ret"),
    ('password = "a\\"b\\\\c\'d#e"', "a\"b\\c'd#e"),
    ("password = a\"b\\\\c'd#e", "a\"b\\c'd#e"),  # an unclosed quote keeps the # in the value
    ("password = caf\\sé", "caf é"),
    ("password = C:\\path\\x", "C:\\path\\x"),  # an unknown escape keeps its backslash
    ("password = \"unbalanced'", "\"unbalanced'"),
    ('password = "', '"'),
    ("password = S3cret€pw   ", "S3cret€pw"),
    ("password =", ""),
    ("  password\t=\t 'spaced out'  ; not a comment", "'spaced out'  ; not a comment"),
]


@pytest.mark.parametrize("line, value", VALUES)
def test_values_as_the_client_reads_them(line, value):
    assert parse_option_text(f"[client]\n{line}\n")["client"]["password"] == value


def test_names_groups_and_bare_options():
    groups = parse_option_text("# top\n[CLIENT]  \nskip-ssl\nloose-ssl-mode = DISABLED\nSsl-Ca=/ca\n"
                               "user # a bare option, commented\n[ client]\nhost = x\n[client.a] trailing\nport=1\r\n")
    assert groups["client"] == {"skip_ssl": None, "ssl_mode": "DISABLED", "ssl_ca": "/ca", "user": None}
    assert groups[" client"] == {"host": "x"}  # the client does not strip inside the brackets' start
    assert groups["client.a"] == {"port": "1"}
    assert option_name("loose_Password") == "password"


@pytest.mark.parametrize("text, message", [
    ("host = x\n[client]\n", "line 1: an option before any [group]"),
    ("[client\nuser = u\n", "line 1: a group name without its closing ]"),
])
def test_what_the_client_refuses_is_an_error_naming_the_line(tmp_path, text, message):
    path = tmp_path / "my.cnf"
    path.write_text(text)
    with pytest.raises(OptionFileError) as refused:
        read_option_file(path)
    assert str(refused.value) == f"{path} {message}"
    # The control: the mariadb client refuses the same file ("Fatal error in defaults handling").
    assert print_defaults(path).returncode != 0


# --------------------------------------------------------------------------- against the client's parser


def print_defaults(path, cwd=None, group: str = "client") -> subprocess.CompletedProcess:
    binary = shutil.which("my_print_defaults")
    if binary is None:
        pytest.skip("my_print_defaults (mariadb-client-core) is not installed")
    return subprocess.run([binary, f"--defaults-file={path}", group], capture_output=True, text=True, cwd=cwd)


def client_reads(path, cwd=None, group: str = "client") -> dict[str, str | None]:
    """What the mariadb client's own parser reads from ``path``, folded as ours folds names."""
    done = print_defaults(path, cwd, group)
    assert done.returncode == 0, done.stderr
    options: dict[str, str | None] = {}
    for line in done.stdout.splitlines():
        name, equals, value = line[2:].partition("=")
        options[option_name(name)] = value if equals else None
    return options


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_every_value_is_read_as_my_print_defaults_reads_it(tmp_path):
    lines = [line for line, _ in VALUES]
    for number, line in enumerate(lines):
        path = write(tmp_path / f"{number}.cnf", f"[client]\nuser = u{number}\n{line}\n")
        ours = read_option_file(path).group("client")
        assert ours == client_reads(path), line


def test_include_and_includedir_as_the_client_follows_them(tmp_path, monkeypatch):
    conf_d = tmp_path / "conf.d"
    write(conf_d / "b.cnf", "[client]\npassword = from-b\n")
    write(conf_d / "a.cnf", "[client]\npassword = from-a\nuser = from-a\n")
    write(conf_d / "c.cnf.disabled", "[client]\npassword = never\n")
    write(conf_d / "notes.txt", "[client]\nuser = never\n")
    write(tmp_path / "secrets" / "monitor.cnf", "[client.replica]\npassword = replica-pw\n[client]\nhost = db1\n")
    main = write(tmp_path / "my.cnf", "[client]\nhost = before\nport = 3306\n"
                                      "!include secrets/monitor.cnf\n"   # relative: to the working directory
                                      "user = main\n"                    # still [client]: the group goes on
                                      "!includedir conf.d\n"
                                      "[client.replica]\nhost = db2\n")
    monkeypatch.chdir(tmp_path)
    option_file = read_option_file(main)
    assert option_file.group("client") == {"host": "db1", "port": "3306", "user": "from-a", "password": "from-b"}
    assert option_file.group("client") == client_reads(main, cwd=tmp_path)
    assert option_file.group("client.replica") == {"password": "replica-pw", "host": "db2"}
    assert option_file.group("client.replica") == client_reads(main, cwd=tmp_path, group="client.replica")
    assert [p.name for p in option_file.files] == ["my.cnf", "monitor.cnf", "a.cnf", "b.cnf"]


def test_an_include_that_cannot_be_read_is_an_error_not_a_silent_root_login(tmp_path):
    main = write(tmp_path / "my.cnf", "[client]\nhost = 127.0.0.1\n!include /nonexistent/monitor.cnf\n")
    with pytest.raises(ConfigError, match="/nonexistent/monitor.cnf: no such file"):
        settings_from_my_cnf(main)
    # The control: the mariadb client skips it without a word, and would log in with no user.
    assert "user" not in client_reads(main)
    write(main, "[client]\nuser = u\n!includedir /nonexistent/conf.d\n")
    with pytest.raises(ConfigError, match=r"my.cnf line 3: !includedir /nonexistent/conf.d: cannot read"):
        settings_from_my_cnf(main)
    write(main, "[client]\nuser = u\n!include\n")
    with pytest.raises(ConfigError, match="line 3: !include without a path"):
        settings_from_my_cnf(main)


def test_an_include_loop_is_an_error(tmp_path):
    loop = write(tmp_path / "loop.cnf", f"[client]\nuser = u\n!include {tmp_path / 'loop.cnf'}\n")
    with pytest.raises(ConfigError, match=f"more than {MAX_INCLUDE_DEPTH} levels deep"):
        settings_from_my_cnf(loop)


def test_a_section_without_user_is_an_error_unless_a_flag_gives_one(tmp_path):
    path = write(tmp_path / "my.cnf", "[client]\nhost = 127.0.0.1\npassword = pw\n")
    with pytest.raises(ConfigError, match=r"my.cnf \[client\]: no user"):
        resolve_settings(path, environ={})
    assert resolve_settings(path, user="monitor", environ={}).user == "monitor"
    write(path, "[client]\nuser =\n")  # empty: the anonymous user, which no monitoring setup means
    with pytest.raises(ConfigError, match="no user"):
        resolve_settings(path, environ={})


# --------------------------------------------------------------------------- logging in


ACCOUNTS = {  # user -> password, each one a trap for a parser or an encoder
    "opt_euro": "S3cret€pw",
    "opt_cafe": "café",
    "opt_quotes": "a\"b\\c'd#e",
}
# The same password, written in the ways an operator writes it.
SPELLINGS = {
    "opt_euro": ["password = S3cret€pw", 'password = "S3cret€pw" # comment', "password='S3cret€pw'"],
    "opt_cafe": ["password = café", 'password = "café"   # note'],
    "opt_quotes": ['password = "a\\"b\\\\c\'d#e"', "password = a\"b\\\\c'd#e"],
}


@pytest.fixture(scope="module")
def accounts(mariadb):
    for user, password in ACCOUNTS.items():
        mariadb.execute(f"CREATE OR REPLACE USER '{user}'@'127.0.0.1' IDENTIFIED BY {sql_literal(password)}")
    yield mariadb
    mariadb.execute(*(f"DROP USER IF EXISTS '{user}'@'127.0.0.1'" for user in ACCOUNTS))


def client_login(path) -> str:
    binary = shutil.which("mariadb") or shutil.which("mysql")
    done = subprocess.run([binary, f"--defaults-file={path}", "-N", "-e", "SELECT CURRENT_USER()"],
                          capture_output=True, text=True, env={**os.environ, "LC_ALL": "C.UTF-8"})
    return done.stdout.strip() or done.stderr.strip()


@pytest.mark.parametrize("user, spelling", [(u, s) for u, spellings in SPELLINGS.items() for s in spellings])
def test_we_log_in_wherever_the_mariadb_client_does(accounts, tmp_path, user, spelling):
    path = write(tmp_path / "my.cnf", f"[client]\nhost = 127.0.0.1\nport = {accounts.port}\nuser = {user}\n{spelling}\n")
    assert client_login(path) == f"{user}@127.0.0.1"
    connection = MySQLConnection(settings_from_my_cnf(path))
    try:
        assert connection.query("SELECT CURRENT_USER()").rows == [(f"{user}@127.0.0.1",)]
    finally:
        connection.close()


def test_the_control_pymysql_given_the_password_as_text_fails(accounts):
    # pymysql encodes a str password as Latin-1: "€" cannot be, and "é" becomes a byte the server
    # never hashed.  Its UnicodeEncodeError carries the whole password as args[1].
    with pytest.raises(UnicodeEncodeError) as failed:
        pymysql.connect(host="127.0.0.1", port=accounts.port, user="opt_euro", password=ACCOUNTS["opt_euro"])
    assert failed.value.args[1] == ACCOUNTS["opt_euro"]
    with pytest.raises(pymysql.err.OperationalError, match="1045"):
        pymysql.connect(host="127.0.0.1", port=accounts.port, user="opt_cafe", password=ACCOUNTS["opt_cafe"])


def age(*paths, seconds: float = 3600) -> None:
    """As if written an hour ago: a file just written is never trusted to the cache (coarse clock)."""
    then = time.time() - seconds
    for path in paths:
        os.utime(path, (then, then))


def test_the_cached_file_is_read_again_when_an_included_file_changes(tmp_path):
    included = write(tmp_path / "secrets.cnf", "[client.replica]\npassword = first-pw\n")
    conf_d = tmp_path / "conf.d"
    write(conf_d / "a.cnf", "[client.replica]\nhost = db-a\n")
    main = write(tmp_path / "my.cnf", f"[client]\nuser = mon\n!include {included}\n!includedir {conf_d}\n")
    age(included, conf_d / "a.cnf", conf_d, main)
    first = cached_option_file(main)
    assert first.group("client.replica") == {"password": "first-pw", "host": "db-a"}
    assert cached_option_file(main) is first  # nothing changed: not parsed again

    write(included, "[client.replica]\npassword = other-pw\n")  # same size, a new modification time
    assert settings_from_my_cnf(main, "client.replica").password == "other-pw"
    age(included)
    assert cached_option_file(main).group("client.replica")["password"] == "other-pw"

    write(conf_d / "b.cnf", "[client.replica]\nhost = db-b\n")  # a file added to an !includedir
    age(conf_d / "b.cnf", conf_d)
    assert cached_option_file(main).group("client.replica")["host"] == "db-b"

    (conf_d / "a.cnf").unlink()
    write(conf_d / "a.cnf", "[client.replica]\nhost = db-a\n")  # replaced, as an editor does
    age(conf_d / "a.cnf", conf_d)
    assert cached_option_file(main).group("client.replica")["host"] == "db-b"
    assert cached_option_file(main) is cached_option_file(main)

    included.unlink()  # a file that disappears is an error, as before any cache
    with pytest.raises(ConfigError, match="secrets.cnf: no such file"):
        settings_from_my_cnf(main, "client.replica")


def test_a_file_changed_just_before_it_was_read_is_read_again(tmp_path):
    main = write(tmp_path / "my.cnf", "[client]\nuser = mon\n")
    first = cached_option_file(main)
    # Written in the same clock tick as the read, a second edit of the same size could keep the
    # same times: a result read so soon after a change is not kept.
    assert cached_option_file(main) is not first
    age(main)
    assert cached_option_file(main) is cached_option_file(main)
