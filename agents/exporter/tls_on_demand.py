"""OpenSSL only for an exporter that speaks TLS.

Python's ssl module maps OpenSSL's libssl and its tables: ~1.3 MB of resident memory for the
process's life.  pymysql imports it when it is imported, although most exporters talk to
MySQL over a socket or plain TCP and serve plain HTTP.  So the exporter imports its modules
``without_ssl()``: pymysql then loads as if Python had no ssl (it checks at import), and
nothing else loads it.  When TLS is wanted, at start (web config TLS, ssl-* options or
``tls=`` in the DSN, --tls.insecure-skip-verify) or later (a /probe whose [client.NAME]
section asks for TLS), ``ensure_ssl()`` imports ssl then and hands it to pymysql, before the
connection that needs it; web TLS imports it where it builds its context.
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
    return bool(settings.ssl_mode or settings.ssl_ca or settings.ssl_cert or settings.ssl_key
                or settings.ssl_verify_server_cert)


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
