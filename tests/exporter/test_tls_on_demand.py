"""OpenSSL only when TLS is wanted: an exporter started without TLS loads no ssl, and a target that
asks for TLS later (a /probe auth module) loads it then and connects with it."""

from __future__ import annotations

import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from mysql_snmp.agents.config.settings import ConnectionSettings
from mysql_snmp.agents.mysql.tls_on_demand import wants_tls
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB, free_loopback_port
from tests.exporter.test_exporter_imports import scrape_when_listening
from tests.support import MINIMAL_GRANTS, create_monitoring_user

REPO = Path(__file__).resolve().parents[2]


def test_which_settings_want_tls():
    assert not wants_tls(ConnectionSettings(host="localhost", socket="/run/mysqld/mysqld.sock"))
    assert not wants_tls(ConnectionSettings(ssl_mode="DISABLED", ssl_ca="/ca"))
    assert not wants_tls(ConnectionSettings(host="db1", ssl_mode="DISABLED"))
    # Nothing said, on this host: no TLS (a login that needs it is retried with it).
    for host in (None, "localhost", "127.0.0.1", "127.0.1.1", "::1", "[::1]"):
        assert not wants_tls(ConnectionSettings(host=host)), host
    # Nothing said, over the network: pymysql's preferred TLS, as before OpenSSL was loaded on demand.
    for host in ("db1", "db1.example.com", "10.0.3.7", "fe80::1"):
        assert wants_tls(ConnectionSettings(host=host)), host
    assert wants_tls(ConnectionSettings(host="db1", socket="/run/mysqld/mysqld.sock"))
    for settings in (ConnectionSettings(ssl_mode="REQUIRED"), ConnectionSettings(ssl_mode="PREFERRED"),
                     ConnectionSettings(ssl_ca="/ca"), ConnectionSettings(ssl_cert="/c", ssl_key="/k"),
                     ConnectionSettings(ssl_verify_server_cert=True)):
        assert wants_tls(settings), settings


# MySQL 8's caching_sha2_password full login over TCP without TLS: pymysql needs the cryptography
# module (held back by the exporter) and raises this.  No MySQL 8 here (MariaDB has no caching_sha2_password), so the first
# login attempt is a double that raises it; the retry is a real login to a TLS MariaDB.
SECURE_LOGIN_RETRY = """import sys
from mysql_snmp.agents.mysql.tls_on_demand import without_openssl
with without_openssl():
    import pymysql
    from mysql_snmp.agents.mysql.connection import MySQLConnection
    from mysql_snmp.agents.config.settings import ConnectionSettings
attempts = []
def connector(**kwargs):
    attempts.append(sorted(kwargs))
    if len(attempts) == 1:
        raise RuntimeError("'cryptography' package is required for sha256_password or caching_sha2_password auth methods")
    return pymysql.connect(**kwargs)
settings = ConnectionSettings(host="127.0.0.1", port=int(sys.argv[1]), user="mon_tls", password="tls-only",
                              ssl_mode=sys.argv[2] or None)
connection = MySQLConnection(settings, connector=connector)
try:
    connection.ensure_connected()
    cipher = connection._run("SHOW SESSION STATUS LIKE 'Ssl_cipher'").rows[0][1]
    print("connected", len(attempts), "ssl" in sys.modules, "cryptography" in sys.modules, bool(cipher))
except Exception as exc:
    print("failed", len(attempts), "ssl" in sys.modules, "cryptography" in sys.modules, type(exc).__name__)
"""


@pytest.mark.live
# Retried with cryptography's RSA and TLS; with TLS disabled, with RSA only, which this TLS-only
# user refuses (an account on MySQL 8 without REQUIRE SSL would be let in).
@pytest.mark.parametrize("ssl_mode, outcome", [("", "connected 2 True True True"),
                                               ("DISABLED", "failed 2 False True QueryError")])
def test_a_login_that_needs_a_secure_channel_is_retried_over_tls(mariadb_tls, ssl_mode, outcome):
    result = subprocess.run([sys.executable, "-c", SECURE_LOGIN_RETRY, str(mariadb_tls.port), ssl_mode],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(outcome), result.stdout + result.stderr


def test_pymysql_loaded_without_openssl_is_given_ssl_on_demand():
    # A fresh interpreter: this one has loaded ssl long ago.
    script = (
        "import sys\n"
        "from mysql_snmp.agents.mysql.tls_on_demand import ensure_ssl, without_openssl\n"
        "with without_openssl():\n"
        "    import pymysql.connections as connections\n"
        "    from mysql_snmp.agents.config.settings import ConnectionSettings\n"
        "print('ssl' in sys.modules, connections.SSL_ENABLED, connections.ssl)\n"
        "ensure_ssl()\n"
        "import ssl\n"
        "print('ssl' in sys.modules, connections.SSL_ENABLED, connections.ssl is ssl)\n"
        "print(ConnectionSettings(ssl_mode='REQUIRED').pymysql_kwargs()['ssl']['verify_mode'] == ssl.CERT_NONE)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.split("\n") == ["False False None", "True True True", "True", ""]


def test_pymysql_loaded_without_cryptography_is_given_its_rsa_on_demand(tmp_path):
    # A fresh interpreter, in a venv where cryptography is installed (pyproject's test extra).
    key = tmp_path / "server.key"
    subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
    public = subprocess.run(["openssl", "rsa", "-in", str(key), "-pubout"], check=True, capture_output=True).stdout
    (tmp_path / "public.pem").write_bytes(public)
    script = (
        "import sys\n"
        "from mysql_snmp.agents.mysql.tls_on_demand import ensure_cryptography, without_openssl\n"
        "with without_openssl():\n"
        "    import pymysql._auth as auth\n"
        "print('cryptography' in sys.modules, auth._have_cryptography)\n"
        "print(ensure_cryptography(), 'cryptography' in sys.modules, auth._have_cryptography)\n"
        "sealed = auth.sha2_rsa_encrypt(b'secret', b'0123456789abcdefghij', open(sys.argv[1], 'rb').read())\n"
        "sys.stdout.buffer.write(sealed)\n")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "public.pem")], cwd=REPO,
                            capture_output=True, check=True)
    lines = result.stdout.split(b"\n", 2)
    assert lines[:2] == [b"False False", b"True True True"]
    # The password really went through RSA: the private key opens it (XORed with the scramble).
    (tmp_path / "sealed").write_bytes(lines[2])
    opened = subprocess.run(["openssl", "pkeyutl", "-decrypt", "-inkey", str(key), "-in", str(tmp_path / "sealed"),
                             "-pkeyopt", "rsa_padding_mode:oaep"], check=True, capture_output=True).stdout
    scramble = b"0123456789abcdefghij"
    assert bytes(c ^ scramble[i % len(scramble)] for i, c in enumerate(opened)) == b"secret\0"


def openssl_certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="module")
def mariadb_tls(tmp_path_factory):
    """A private MariaDB that speaks TLS, with a monitoring user that may log in only over TLS."""
    cert, key = openssl_certificate(tmp_path_factory.mktemp("mariadb-tls"))
    server = ThrowawayMariaDB(server_id=21, extra_args=(f"--ssl-cert={cert}", f"--ssl-key={key}"))
    server.start()
    try:
        account = "'mon_tls'@'127.0.0.1'"
        server.execute(f"CREATE USER {account} IDENTIFIED BY 'tls-only' REQUIRE SSL",
                       *(grant.format(user=account) for grant in MINIMAL_GRANTS))
        yield server
    finally:
        server.stop(remove=True)


def maps_libssl(pid: int) -> bool:
    return "libssl" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.live
def test_an_exporter_without_tls_loads_ssl_for_the_first_probe_that_asks_for_it(mariadb, mariadb_tls, tmp_path):
    my_cnf = tmp_path / "my.cnf"
    tls_section = f"host = 127.0.0.1\nport = {mariadb_tls.port}\nuser = mon_tls\npassword = tls-only\n"
    # The /metrics target on the Unix socket: no TLS there, so OpenSSL waits for the probe.
    my_cnf.write_text(create_monitoring_user(mariadb, tmp_path, over_socket=True).my_cnf.read_text()
                      + f"[client.tls]\n{tls_section}ssl-mode = REQUIRED\n"
                      + f"[client.plain]\n{tls_section}ssl-mode = DISABLED\n")
    my_cnf.chmod(0o600)
    port = free_loopback_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mysql_snmp.agents.cli", "--log-level=warning", "exporter",
         f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={my_cnf}", "--no-exporter.leak-detector"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    accepted_before = int(mariadb_tls.execute("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'")[0][1])
    try:
        assert "\nmysql_up 1.0\n" in scrape_when_listening(base + "/metrics", process)
        assert not maps_libssl(process.pid)  # the /metrics target asks for no TLS: OpenSSL never loaded
        # The TLS-only user cannot log in without TLS: the control that the next probe really uses it.
        plain = scrape_when_listening(f"{base}/probe?target=127.0.0.1:{mariadb_tls.port}&auth_module=client.plain",
                                      process)
        assert "\nmysql_up 0.0\n" in plain
        tls = scrape_when_listening(f"{base}/probe?target=127.0.0.1:{mariadb_tls.port}&auth_module=client.tls",
                                    process)
        assert "\nmysql_up 1.0\n" in tls and "mysql_global_status_uptime " in tls
        assert maps_libssl(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert int(mariadb_tls.execute("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'")[0][1]) > accepted_before


@pytest.mark.live
def test_an_exporter_started_with_web_tls_serves_https(mariadb, monitoring_user, tmp_path):
    cert, key = openssl_certificate(tmp_path)
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    port = free_loopback_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mysql_snmp.agents.cli", "--log-level=warning", "exporter",
         f"--web.listen-address=127.0.0.1:{port}", f"--config.my-cnf={monitoring_user.my_cnf}",
         f"--web.config.file={web}", "--no-exporter.leak-detector"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    client = ssl.create_default_context(cafile=str(cert))
    client.check_hostname = False  # the certificate names 127.0.0.1 as its CN only
    deadline = time.monotonic() + 30
    try:
        while True:
            assert process.poll() is None, process.stderr.read()
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/metrics", timeout=10, context=client) as answer:
                    body = answer.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "the exporter did not answer over TLS"
                time.sleep(0.1)
        assert "\nmysql_up 1.0\n" in body
        assert maps_libssl(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
