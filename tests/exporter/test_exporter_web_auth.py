"""Basic auth and mutual TLS of the web config against the real exporter process, over raw
sockets and real TLS clients, with certificates made here: one answer for every failed login
(whatever the user or password length), the same time for known and unknown users, Prometheus'
scrapes served through a flood of wrong passwords, and client_allowed_sans enforced."""

from __future__ import annotations

import base64
import ssl
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import bcrypt
import pytest

from mysql_snmp.agents.exporter.web_config import load_web_config
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from tests.exporter.certificates import TestCA
from tests.exporter.go_exporter import GO_EXPORTER, running_go_exporter
from tests.exporter.http_wire import exchange
from tests.exporter.test_exporter_http_hostile import unreachable_my_cnf
from tests.faults.exporter_process import ExporterProcess, start_exporter

PASSWORD = b"right horse battery"
USER_COST = 11  # a realistic cost: ~0.1-0.3 s a check on this kind of machine


def authorization(user: bytes, password: bytes) -> bytes:
    return b"Authorization: Basic " + base64.b64encode(user + b":" + password) + b"\r\n"


@contextmanager
def exporter_with(web: Path, my_cnf: Path) -> Iterator[ExporterProcess]:
    """Our exporter serving with ``web`` as its web config (logs beside ``my_cnf``)."""
    exporter = start_exporter(my_cnf, my_cnf.parent, "--no-collect.host", f"--web.config.file={web}",
                              answers_plain_http=False)
    try:
        yield exporter
    finally:
        exporter.stop()


def get(path: bytes = b"/metrics", extra: bytes = b"") -> bytes:
    """A GET asking the server to close after its answer: its time is then the answer's time."""
    return b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + extra + b"\r\n"


@pytest.fixture(scope="module")
def auth_setup(tmp_path_factory):
    directory = tmp_path_factory.mktemp("web-auth")
    hashed = bcrypt.hashpw(PASSWORD, bcrypt.gensalt(rounds=USER_COST)).decode()
    web = directory / "web.yml"
    web.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return unreachable_my_cnf(directory), web


@pytest.fixture(scope="module")
def ours(auth_setup):
    with exporter_with(auth_setup[1], auth_setup[0]) as exporter:
        yield exporter
    assert "Traceback" not in exporter.log_text()


@pytest.fixture(scope="module")
def go(auth_setup):
    my_cnf, web = auth_setup
    with running_go_exporter(my_cnf, f"--web.config.file={web}") as port:
        yield port


def without_date(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name != "date"}


@pytest.mark.parametrize("password", [b"wrong", b"x" * 73, b"x" * 200, b"x" * 5000])
def test_a_failed_login_is_one_401_whoever_the_user_and_however_long_the_password(ours, go, password):
    known = exchange(ours.port, get(extra=authorization(b"prometheus", password)))
    unknown = exchange(ours.port, get(extra=authorization(b"nobody", password)))
    assert known.statuses == unknown.statuses == [401]
    assert known.responses[0].body == unknown.responses[0].body
    assert without_date(known.responses[0].headers) == without_date(unknown.responses[0].headers)
    assert known.closed and unknown.closed
    # Go answers both with its 401 too
    assert exchange(go, get(extra=authorization(b"prometheus", password))).statuses == [401]
    assert exchange(go, get(extra=authorization(b"nobody", password))).statuses == [401]


def test_the_bcrypt_module_alone_refuses_long_passwords_which_is_what_dropped_the_connection():
    # the control: the path that crashed for an unknown user and answered 401 for a known one
    with pytest.raises(ValueError):
        bcrypt.checkpw(b"x" * 73, bcrypt.hashpw(b"x", bcrypt.gensalt(rounds=4)))


def test_right_credentials_and_a_password_cut_at_72_bytes_as_go_cuts_it(tmp_path):
    hashed = bcrypt.hashpw(b"p" * 72, bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    my_cnf = unreachable_my_cnf(tmp_path)
    with exporter_with(web, my_cnf) as exporter, running_go_exporter(my_cnf, f"--web.config.file={web}") as go:
        for port in (exporter.port, go):
            assert exchange(port, get(extra=authorization(b"prometheus", b"p" * 72))).statuses == [200]
            assert exchange(port, get(extra=authorization(b"prometheus", b"p" * 72 + b"more"))).statuses == [200]
            assert exchange(port, get()).statuses == [401]


def login_seconds(port: int, user: bytes, password: bytes) -> float:
    started = time.perf_counter()
    assert exchange(port, get(extra=authorization(user, password)), quiet=5).statuses == [401]
    return time.perf_counter() - started


def test_an_unknown_user_costs_what_a_known_one_does(ours):
    known, unknown = [], []
    for attempt in range(6):  # interleaved, so a busy machine weighs on both alike
        known.append(login_seconds(ours.port, b"prometheus", b"guess-%d" % attempt))
        unknown.append(login_seconds(ours.port, b"nobody-%d" % attempt, b"guess"))
    # the least of each: what a check costs, with the least of other processes' noise on this shared machine
    ratio = min(unknown) / min(known)
    assert 0.6 < ratio < 1.6, (known, unknown)


def test_the_timing_test_can_see_a_cost_difference():
    # the control: exporter-toolkit's fixed decoy hash has cost 10; against a cost-12 user hash
    # the difference is plain to see with the same few samples
    cheap = bcrypt.hashpw(b"decoy", bcrypt.gensalt(rounds=10))
    dear = bcrypt.hashpw(b"secret", bcrypt.gensalt(rounds=12))

    def seconds(hashed: bytes) -> float:
        started = time.perf_counter()
        bcrypt.checkpw(b"guess", hashed)
        return time.perf_counter() - started

    samples = [(seconds(cheap), seconds(dear)) for _ in range(5)]  # interleaved, as above
    assert min(d for _, d in samples) > 2 * min(c for c, _ in samples), samples  # 4 times, in theory


def flood(port: int, stop: threading.Event, answered: list[int]) -> None:
    while not stop.is_set():
        try:
            answer = exchange(port, get(extra=authorization(b"prometheus", b"wrong")), quiet=10)
        except OSError:
            continue
        answered.extend(answer.statuses)


def test_prometheus_is_served_through_a_flood_of_wrong_passwords(ours):
    right = authorization(b"prometheus", PASSWORD)
    assert exchange(ours.port, get(extra=right)).statuses == [200]  # its credentials are remembered from here
    stop, answered = threading.Event(), []
    flooders = [threading.Thread(target=flood, args=(ours.port, stop, answered), daemon=True) for _ in range(64)]
    for thread in flooders:
        thread.start()
    scrapes = []
    try:
        time.sleep(1.0)  # the flood is under way
        for _ in range(12):
            started = time.perf_counter()
            answer = exchange(ours.port, get(extra=right), quiet=10)
            scrapes.append((answer.statuses, time.perf_counter() - started))
            time.sleep(0.3)
    finally:
        stop.set()
        for thread in flooders:
            thread.join(timeout=30)
    assert len(answered) > 50 and set(answered) <= {401, 503}  # the flood was real, and refused
    assert all(statuses == [200] for statuses, _ in scrapes), scrapes
    assert max(seconds for _, seconds in scrapes) < 1.5, scrapes


# ---------------------------------------------------------------------------------- mutual TLS


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mtls")
    ca = TestCA(directory)
    server = ca.issue("server", "127.0.0.1", ["IP:127.0.0.1"], server=True)
    clients = {
        "named": ca.issue("named", "prometheus", ["DNS:prometheus.example"]),
        "by-ip": ca.issue("by-ip", "scraper", ["IP:::1"]),
        "by-uri": ca.issue("by-uri", "scraper", ["URI:spiffe://example.org/prometheus"]),
        "intruder": ca.issue("intruder", "prometheus.example", ["DNS:intruder.example"]),  # the CN is no SAN
        "no-san": ca.issue("no-san", "prometheus.example", []),
    }
    return directory, ca, server, clients


def mtls_web_config(pki, allowed: list[str] | None) -> str:
    directory, ca, server, _ = pki
    text = (f"tls_server_config:\n  cert_file: {server.cert}\n  key_file: {server.key}\n"
            f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {ca.cert}\n")
    if allowed is not None:
        text += "  client_allowed_sans:\n" + "".join(f"    - '{name}'\n" for name in allowed)
    return text


def client_context(pki, client: str) -> ssl.SSLContext:
    _, ca, _, clients = pki
    context = ssl.create_default_context(cafile=str(ca.cert))
    context.load_cert_chain(str(clients[client].cert), str(clients[client].key))
    return context


def tls_get(port: int, pki, client: str) -> list[int]:
    """The statuses a GET / with ``client``'s certificate gets; [] when the server refuses it."""
    try:
        return exchange(port, get(b"/"), context=client_context(pki, client), quiet=3).statuses
    except (ssl.SSLError, ConnectionError):  # TLS 1.3: a refusal may come as an alert on the first read
        return []


def mtls_exporter(pki, allowed: list[str] | None, tmp_path):
    web = tmp_path / "web.yml"
    web.write_text(mtls_web_config(pki, allowed))
    return exporter_with(web, unreachable_my_cnf(tmp_path))


def test_client_allowed_sans_admits_only_certificates_naming_one(pki, tmp_path):
    with mtls_exporter(pki, ["prometheus.example", "::1", "spiffe://example.org/prometheus"], tmp_path) as exporter:
        assert tls_get(exporter.port, pki, "named") == [200]
        assert tls_get(exporter.port, pki, "by-ip") == [200]  # Python spells it 0:0:0:0:0:0:0:1
        assert tls_get(exporter.port, pki, "by-uri") == [200]
        assert tls_get(exporter.port, pki, "intruder") == []
        assert tls_get(exporter.port, pki, "no-san") == []
        assert "names none of client_allowed_sans" in exporter.log_text()


def test_without_client_allowed_sans_any_certificate_of_the_ca_gets_in(pki, tmp_path):
    # the control: what every client certificate got while the key was ignored with a warning
    with mtls_exporter(pki, None, tmp_path) as exporter:
        assert tls_get(exporter.port, pki, "intruder") == [200]
        assert tls_get(exporter.port, pki, "no-san") == [200]


def test_go_0_14_refuses_client_allowed_sans_at_start_as_an_unknown_key(pki, tmp_path):
    # Its exporter-toolkit predates the key and reads the file strictly: a start-up error, not a hole.
    web = tmp_path / "web.yml"
    web.write_text(mtls_web_config(pki, ["prometheus.example"]))
    go = subprocess.run([GO_EXPORTER, f"--web.listen-address=127.0.0.1:{free_loopback_port()}",
                         f"--config.my-cnf={unreachable_my_cnf(tmp_path)}", f"--web.config.file={web}"],
                        capture_output=True, text=True, timeout=30)
    assert go.returncode != 0 and "field client_allowed_sans not found" in go.stderr


def test_a_config_with_client_allowed_sans_loads_with_its_names(pki, tmp_path):
    web = tmp_path / "web.yml"
    web.write_text(mtls_web_config(pki, ["prometheus.example", "::1"]))
    assert load_web_config(web).tls.client_allowed_sans == ("prometheus.example", "::1")


def tls12_client(pki, openssl_cipher: str) -> ssl.SSLContext:
    _, ca, _, _ = pki
    context = ssl.create_default_context(cafile=str(ca.cert))
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    context.set_ciphers(openssl_cipher)
    return context


def tls12_statuses(port: int, context: ssl.SSLContext) -> list[int]:
    try:
        return exchange(port, get(b"/"), context=context, quiet=3).statuses
    except (ssl.SSLError, ConnectionError):  # no suite in common: the handshake fails
        return []


def test_cipher_suites_allow_only_the_named_suites_as_go_does(pki, tmp_path):
    server = pki[2]
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: {server.cert}\n  key_file: {server.key}\n"
                   "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n")
    named = tls12_client(pki, "ECDHE-ECDSA-AES128-GCM-SHA256")
    other = tls12_client(pki, "ECDHE-ECDSA-AES256-GCM-SHA384")
    my_cnf = unreachable_my_cnf(tmp_path)
    with exporter_with(web, my_cnf) as exporter, running_go_exporter(my_cnf, f"--web.config.file={web}") as go:
        for port in (exporter.port, go):
            assert tls12_statuses(port, named) == [200]
            assert tls12_statuses(port, other) == []
    # the control: without cipher_suites the other suite is served
    web.write_text(f"tls_server_config:\n  cert_file: {server.cert}\n  key_file: {server.key}\n")
    with exporter_with(web, my_cnf) as exporter:
        assert tls12_statuses(exporter.port, other) == [200]
