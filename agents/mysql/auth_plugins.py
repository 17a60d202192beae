"""Which authentication exchanges may carry the password: a guard around pymysql's auth plugins.

A server (or anything answering on a MySQL port) chooses the authentication method, and may switch
to one that makes the client send the password itself: ``mysql_clear_password`` sends it verbatim,
MariaDB's ``dialog`` (PAM) sends it in answer to a "Password:" prompt.  pymysql obeys both, so a
fake server, reached through ``/probe?target=`` or a hijacked address, could collect the monitoring
user's password.  The mysql client refuses the clear-text plugin unless ``enable-cleartext-plugin``
is given; we do the same, and additionally insist on TLS, where the password at least does not cross
the network readable.

The hash-based methods (``mysql_native_password``, ``caching_sha2_password``, ``client_ed25519``)
never send the password and stay untouched.
"""

from __future__ import annotations

from pymysql import err
from pymysql.constants import CR

CLEARTEXT_PLUGINS = ("mysql_clear_password", "dialog")


def refusal(plugin: str, allowed: bool) -> str:
    if allowed:
        return (f"the server asked for {plugin} authentication, which sends the password in clear "
                "text: refused on a connection without TLS (set ssl-mode=REQUIRED or VERIFY_* in the "
                "option file)")
    return (f"the server asked for {plugin} authentication, which sends the password in clear text: "
            "refused (add enable-cleartext-plugin to the option file section to allow it over TLS)")


def cleartext_guard(plugin: str, allowed: bool):
    """An ``auth_plugin_map`` handler class for ``plugin`` that sends the password only when allowed
    and the connection is encrypted, and otherwise ends the handshake before anything is sent."""

    class ClearTextGuard:
        def __init__(self, connection):
            self.connection = connection

        def authenticate(self, packet):
            connection = self.connection
            # pymysql sets _secure once TLS is up; there is no public accessor.
            if not (allowed and getattr(connection, "_secure", False)):
                raise err.OperationalError(CR.CR_AUTH_PLUGIN_CANNOT_LOAD, refusal(plugin, allowed))
            if plugin == "dialog":
                # Let pymysql run its prompt loop: it answers "Password: " prompts.
                raise AttributeError("dialog prompts are answered by pymysql")
            connection.write_packet(connection.password + b"\0")
            answer = connection._read_packet()
            answer.check_error()
            return answer

    ClearTextGuard.__name__ = f"ClearTextGuard_{plugin}"
    return ClearTextGuard


def auth_plugin_map(allow_cleartext: bool) -> dict:
    """pymysql's ``auth_plugin_map``: every clear-text plugin behind the guard."""
    return {plugin: cleartext_guard(plugin, allow_cleartext) for plugin in CLEARTEXT_PLUGINS}
