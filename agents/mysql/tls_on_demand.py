"""OpenSSL only for an exporter that may speak TLS.

Python's ssl module maps OpenSSL's libssl and libcrypto: ~1.3 MB of resident memory for the
process's life, ~3.7 MB with hashlib's built-in hashes (agents/exporter/builtin_hashes.py).
pymysql imports it when it is imported, although an exporter that reaches MySQL on its own host
and serves plain HTTP never needs it.  So the exporter imports its modules ``without_openssl()``:
pymysql then loads as if Python had no ssl (it checks at import), and nothing else loads it.
Before a connection that may use TLS (TLS options, or a TCP target off the host: pymysql
prefers TLS there when the server offers it), at start or later (a /probe whose [client.NAME]
section asks for it), ``ensure_ssl()`` imports ssl and hands it to pymysql; so does a login
that turns out to need a secure channel (``load_for_secure_login``), which is then retried; web TLS
imports ssl where it builds its context.
"""

from __future__ import annotations

import contextlib
import ipaddress
import sys
import threading
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # imported for real inside without_openssl(): it loads pymysql
    from ..config.settings import ConnectionSettings

_lock = threading.Lock()


# The modules that bind OpenSSL and that pymysql imports if it can: ssl for TLS, cryptography
# (its RSA) for a caching_sha2_password/sha256_password full login without TLS.
HELD_BACK = ("ssl", "cryptography")


@contextlib.contextmanager
def without_openssl() -> Iterator[None]:
    """Imports inside see neither ssl nor cryptography (unless already loaded); later imports do."""
    blocked = [name for name in HELD_BACK if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # the import system's "not available" marker
    try:
        yield
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def wants_tls(settings: "ConnectionSettings") -> bool:
    """Whether a connection with ``settings`` may use TLS (as pymysql_kwargs() configures it)."""
    if _tls_disabled(settings):
        return False
    if settings.ssl_mode or settings.ssl_ca or settings.ssl_cert or settings.ssl_key or settings.ssl_verify_server_cert:
        return True
    # Nothing said: over the network pymysql prefers TLS when the server offers it, as the mysql
    # client does.  Loopback and the Unix socket never leave the host, so TLS there protects
    # nothing (mysqld_exporter does not use it either); a login that needs it anyway is retried
    # with it (load_for_secure_login).
    return not (settings.uses_socket or is_loopback(settings.host))


def is_loopback(host: str | None) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


def ssl_given_to_pymysql() -> bool:
    connections = sys.modules.get("pymysql.connections")
    return connections is not None and getattr(connections, "SSL_ENABLED", False)


def _tls_disabled(settings: "ConnectionSettings") -> bool:
    return (settings.ssl_mode or "").upper() == "DISABLED"


def ensure_ssl() -> None:
    """Load ssl, and give it to pymysql if pymysql was imported without it."""
    with _lock:
        import ssl

        connections = sys.modules.get("pymysql.connections")
        if connections is None or getattr(connections, "ssl", None) is ssl:
            return
        if not hasattr(connections, "SSL_ENABLED") or not hasattr(connections, "ssl"):
            from ..config.settings import ConfigError

            raise ConfigError("TLS to MySQL is configured, but this pymysql version cannot be given ssl after "
                              "it was loaded (pymysql.connections has no ssl / SSL_ENABLED)")
        connections.ssl = ssl
        connections.SSL_ENABLED = True


def ensure_cryptography() -> bool:
    """Give pymysql cryptography's RSA if it was imported without it; False when not installed."""
    with _lock:
        auth = sys.modules.get("pymysql._auth")
        if auth is None or getattr(auth, "_have_cryptography", False):
            return True
        try:
            from cryptography.hazmat.backends import default_backend
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
        except ImportError:
            return False
        auth.default_backend, auth.hashes, auth.serialization, auth.padding = (
            default_backend, hashes, serialization, padding)
        auth._have_cryptography = True
        return True


def prepare_for(settings: "ConnectionSettings") -> "ConnectionSettings":
    """``settings``, after loading ssl when they may use TLS, and cryptography when they pin the
    server's RSA key (server-public-key-path: pymysql encrypts the password with it)."""
    if wants_tls(settings):
        ensure_ssl()
    if settings.server_public_key is not None:
        ensure_cryptography()
    return settings


def load_for_secure_login(error: BaseException, settings: "ConnectionSettings") -> bool:
    """After a failed login: load what was held back that would let it succeed, and say whether
    anything was loaded (worth a retry).

    MySQL 8's caching_sha2_password (and sha256_password) make a full login, after a server restart
    or a password change, over a secure channel or by encrypting the password with the server's RSA
    key; pymysql does the latter only with the cryptography module, and says so in a RuntimeError.
    Loaded then: cryptography's RSA if installed (with or without TLS), and ssl unless TLS is
    disabled (pymysql then prefers TLS, which makes the login secure)."""
    if not (isinstance(error, RuntimeError) and "cryptography" in str(error)):
        return False
    auth = sys.modules.get("pymysql._auth")
    had_rsa, had_ssl = getattr(auth, "_have_cryptography", False), ssl_given_to_pymysql()
    has_rsa = ensure_cryptography()
    if not _tls_disabled(settings):
        ensure_ssl()
    return (has_rsa and not had_rsa) or (ssl_given_to_pymysql() and not had_ssl)
