"""/probe never hands an auth module's password to a server it was not meant for.

Two locks, each tested against a fake server that asks for the password in clear text:
the allow-list (a target the auth module's section does not name gets 403, no connection at all),
and the auth guard (even an allowed target cannot make the client send the password).
"""

from __future__ import annotations

import pymysql
import pytest
from exporter_harness import running_exporter

from mysql_snmp.agents.config.settings import ConnectionSettings, settings_from_my_cnf
from mysql_snmp.agents.mysql.connection import MySQLConnection
from mysql_snmp.agents.mysql.errors import QueryError
from mysql_snmp.agents.exporter.probe_access import ProbeAllowList, ProbeRefused, canonical_target
from tests.fake_mysql_server import clear_text_phisher

PASSWORD = "Zq8-never-leaves-7Kp"


def _my_cnf(tmp_path, body: str):
    path = tmp_path / "exporter.cnf"
    path.write_text(body)
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("plugin", [b"mysql_clear_password", b"dialog"])
def test_the_fake_server_does_get_the_password_from_an_unguarded_client(plugin):
    # The control: without our auth guard pymysql obeys the switch, so the fake server can detect a leak.
    with clear_text_phisher(plugin) as phisher:
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(host="127.0.0.1", port=phisher.port, user="monitor", password=PASSWORD,
                            connect_timeout=5)
    assert phisher.sent_password(PASSWORD)


@pytest.mark.parametrize("plugin", [b"mysql_clear_password", b"dialog"])
@pytest.mark.parametrize("allow_cleartext", [False, True])
def test_our_connection_refuses_clear_text_without_tls(plugin, allow_cleartext):
    settings = ConnectionSettings(host="127.0.0.1", user="monitor", password=PASSWORD,
                                  allow_cleartext=allow_cleartext)
    with clear_text_phisher(plugin) as phisher:
        settings = ConnectionSettings(**{**settings.__dict__, "port": phisher.port})
        connection = MySQLConnection(settings)
        with pytest.raises(QueryError) as refused:
            connection.ensure_connected()
        connection.close()
    assert phisher.connections == 1
    assert not phisher.sent_password(PASSWORD)
    assert "clear text" in str(refused.value) and PASSWORD not in str(refused.value)
    hint = "without TLS" if allow_cleartext else "enable-cleartext-plugin"
    assert hint in str(refused.value)


def test_enable_cleartext_plugin_and_server_public_key_are_read_from_the_option_file(tmp_path):
    key = tmp_path / "server.pem"
    key.write_bytes(b"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n")
    cnf = _my_cnf(tmp_path, f"[client]\nuser = m\nenable-cleartext-plugin\nserver-public-key-path = {key}\n"
                            "[client.strict]\nenable-cleartext-plugin = 0\n")
    loose = settings_from_my_cnf(cnf)
    assert loose.allow_cleartext and loose.pymysql_kwargs()["server_public_key"] == key.read_bytes()
    assert not settings_from_my_cnf(cnf, "client.strict").allow_cleartext
    assert not settings_from_my_cnf(_my_cnf(tmp_path, "[client]\nuser = m\n")).allow_cleartext


def test_allow_list_defaults_to_the_sections_own_address():
    section = ConnectionSettings(host="DB1.example.com", port=3307)
    allowed = ProbeAllowList()
    allowed.check("client.x", section, ConnectionSettings(host="db1.example.com", port=3307))
    for host, port in (("db1.example.com", 3306), ("db2.example.com", 3307), ("127.0.0.1", 3307)):
        with pytest.raises(ProbeRefused) as refused:
            allowed.check("client.x", section, ConnectionSettings(host=host, port=port))
        # The log says how to allow it; the answer, to a client not yet trusted, says nothing of the section.
        assert f"--exporter.probe-allowed-targets client.x={host}:{port}" in refused.value.detail
        assert str(refused.value) == f"target {host}:{port} is not allowed for auth_module client.x"


def test_allow_list_patterns_per_auth_module():
    allowed = ProbeAllowList.from_flags(["db-*.example.com:3306, client.replicas=10.0.3.*:*",
                                         "unix:///run/mysqld/*.sock"])
    section = ConnectionSettings(host="localhost")

    def ok(module: str, **target) -> bool:
        try:
            allowed.check(module, section, ConnectionSettings(**target))
        except ProbeRefused:
            return False
        return True

    assert ok("client", host="db-7.example.com", port=3306)
    assert not ok("client", host="db-7.example.com", port=3307)
    assert not ok("client", host="db-7.example.com.evil.net", port=3306)
    assert ok("client.replicas", host="10.0.3.9", port=3310)
    assert not ok("client", host="10.0.3.9", port=3310)
    assert ok("client", host="localhost", socket="/run/mysqld/b.sock")
    assert canonical_target(ConnectionSettings(host="::1", port=3306)) == "[::1]:3306"
    with pytest.raises(ValueError):
        ProbeAllowList.from_flags(["replicas=10.0.0.1:3306"])


def test_probe_of_an_unlisted_target_never_connects(tmp_path):
    with clear_text_phisher() as phisher:
        cnf = _my_cnf(tmp_path, f"[client]\nhost = 127.0.0.1\nport = 1\nuser = m\npassword = {PASSWORD}\n"
                                "[client.other]\nhost = 127.0.0.2\n")
        with running_exporter(f"--config.my-cnf={cnf}", "--no-collect.host",
                              "--no-exporter.leak-detector") as exporter:
            for module in ("client", "client.other"):
                status, body, _ = exporter.get(f"/probe?target=127.0.0.1:{phisher.port}&auth_module={module}")
                assert status == 403, body
                assert body == f"target 127.0.0.1:{phisher.port} is not allowed for auth_module {module}\n"
                assert PASSWORD not in body
    assert phisher.connections == 0


def test_an_allowed_target_asking_for_clear_text_gets_no_password(tmp_path):
    with clear_text_phisher() as phisher:
        cnf = _my_cnf(tmp_path, f"[client]\nhost = 127.0.0.1\nuser = m\npassword = {PASSWORD}\n"
                                "enable-cleartext-plugin\n")
        with running_exporter(f"--config.my-cnf={cnf}", "--no-collect.host", "--no-exporter.leak-detector",
                              f"--exporter.probe-allowed-targets=127.0.0.1:{phisher.port}") as exporter:
            scrape = exporter.scrape(f"/probe?target=127.0.0.1:{phisher.port}")
            assert scrape.value("mysql_up") == 0.0
            assert PASSWORD not in scrape.text
    assert phisher.connections >= 1
    assert not phisher.sent_password(PASSWORD)


def test_only_client_sections_are_auth_modules(mariadb, tmp_path, caplog):
    # A DBA's my.cnf often holds root's credentials for the tools, at the server's own address.
    cnf = _my_cnf(tmp_path, f"[client]\nhost = 127.0.0.1\nport = {mariadb.port}\nuser = m\npassword = {PASSWORD}\n"
                            f"[mysqldump]\nhost = 127.0.0.1\nport = {mariadb.port}\nuser = root\npassword =\n"
                            "[clientele]\nuser = root\n")
    target = f"127.0.0.1:{mariadb.port}"
    # The control: read as a section, [mysqldump] logs in as root there (what auth_module=mysqldump did).
    control = MySQLConnection(settings_from_my_cnf(cnf, "mysqldump"))
    try:
        assert control.query("SELECT CURRENT_USER()").rows[0][0].startswith("root@")
    finally:
        control.close()
    with running_exporter(f"--config.my-cnf={cnf}", "--no-collect.host", "--no-exporter.leak-detector") as exporter:
        for module in ("mysqldump", "clientele", "client.", "client.absent", "MYSQLDUMP"):
            status, body, _ = exporter.get(f"/probe?target={target}&auth_module={module}")
            assert status == 400, body
            # The same answer whether the section exists or not, and nothing of the file or its addresses.
            assert body == f"auth_module {module!r}: no such auth module ([client] or [client.NAME] section)\n"
    log_text = caplog.text
    assert "auth_module 'mysqldump' refused: only [client] and [client.NAME] sections are auth modules" in log_text
    assert f"auth_module 'client.absent': {cnf}: no [client.absent] section" in log_text
    assert "Access denied" not in log_text and "root@" not in log_text
