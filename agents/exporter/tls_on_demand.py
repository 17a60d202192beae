"""OpenSSL only for an exporter that may speak TLS.

Python's ssl module maps OpenSSL's libssl and its tables: ~1.3 MB of resident memory for the
process's life.  pymysql imports it when it is imported, although an exporter that reaches
MySQL over a Unix socket (or with ssl-mode=DISABLED) and serves plain HTTP never uses it.  So
the exporter imports its modules ``without_ssl()``: pymysql then loads as if Python had no ssl
(it checks at import), and nothing else loads it.  Before a connection that may use TLS (TLS
options, or any TCP target not DISABLED: pymysql prefers TLS there when the server offers
it), at start or later (a /probe whose [client.NAME] section asks for it), ``ensure_ssl()``
imports ssl and hands it to pymysql; web TLS imports it where it builds its context.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # imported for real inside without_ssl(): it loads pymysql
    from mysql_snmp.agents.connection import ConnectionSettings

_lock = threading.Lock()


@contextlib.contextmanager
def without_ssl() -> Iterator[None]:
    """Imports inside see no ssl module (unless one is loaded already); later imports do."""
    if "ssl" in sys.modules:
        yield
        return
    sys.modules["ssl"] = None  # the import system's "not available" marker
    try:
        yield
    finally:
        if sys.modules.get("ssl", 0) is None:
            del sys.modules["ssl"]


def wants_tls(settings: "ConnectionSettings") -> bool:
    """Whether a connection with ``settings`` may use TLS (as pymysql_kwargs() configures it)."""
    if (settings.ssl_mode or "").upper() == "DISABLED":
        return False
    if settings.ssl_mode or settings.ssl_ca or settings.ssl_cert or settings.ssl_key or settings.ssl_verify_server_cert:
        return True
    # Unsaid over TCP, pymysql prefers TLS when the server offers it, as the mysql client does; this
    # also lets MySQL 8's caching_sha2_password finish a full login without the cryptography module.
    # A Unix socket needs no TLS: the server already trusts it as a secure channel.
    return not settings.uses_socket


def ensure_ssl() -> None:
    """Load ssl, and give it to pymysql if pymysql was imported without it."""
    with _lock:
        import ssl

        connections = sys.modules.get("pymysql.connections")
        if connections is None or getattr(connections, "ssl", None) is ssl:
            return
        if not hasattr(connections, "SSL_ENABLED") or not hasattr(connections, "ssl"):
            from mysql_snmp.agents.connection import ConfigError

            raise ConfigError("TLS to MySQL is configured, but this pymysql version cannot be given ssl after "
                              "it was loaded (pymysql.connections has no ssl / SSL_ENABLED)")
        connections.ssl = ssl
        connections.SSL_ENABLED = True


def ensure_ssl_for(settings: "ConnectionSettings") -> "ConnectionSettings":
    """``settings``, after loading ssl when they ask for TLS."""
    if wants_tls(settings):
        ensure_ssl()
    return settings
