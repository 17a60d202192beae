"""Where to connect: a MySQL option file, the flags and the environment -> ``ConnectionSettings``.

Every command that talks to MySQL takes the same flags and the same password rule, and each
broken setting is a ``ConfigError`` naming the file or flag and the key."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping

from ..mysql.auth_plugins import auth_plugin_map
from .option_file import OptionFileError, cached_option_file
from .redact import (
    remember_secret,
)

DEFAULT_MY_CNF = Path("~/.my.cnf")
PASSWORD_ENV = "MYSQLD_EXPORTER_PASSWORD"
DEFAULT_PORT = 3306
SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")


class ConfigError(ValueError):
    """A broken connection configuration; the message names the file and key."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class ConnectionSettings:
    host: str | None = None
    port: int = DEFAULT_PORT
    socket: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_mode: str | None = None  # one of SSL_MODES; None = the client default (no TLS)
    ssl_verify_server_cert: bool = False
    # enable-cleartext-plugin: the server may ask for the password in clear text (TLS only, see
    # agents/mysql/auth_plugins.py); server-public-key-path: the RSA key caching_sha2/sha256 full
    # authentication encrypts with, instead of one the server hands over.
    allow_cleartext: bool = False
    server_public_key: bytes | None = field(default=None, repr=False)
    connect_timeout: float = 5.0
    origin: str = "defaults"  # where the settings came from, for error messages

    def __post_init__(self):
        remember_secret(self.password)  # however the settings were made (file, variable, DSN)

    def __repr__(self) -> str:
        password = "<set>" if self.password else "<none>"
        return (
            f"ConnectionSettings(target={self.target!r}, user={self.user!r}, password={password}, "
            f"ssl_mode={self.ssl_mode!r}, origin={self.origin!r})"
        )

    __str__ = __repr__

    @property
    def uses_socket(self) -> bool:
        # As the mysql client: "localhost" (or no host) with a socket means the Unix socket.
        return bool(self.socket) and self.host in (None, "", "localhost")

    @property
    def target(self) -> str:
        if self.uses_socket:
            return f"unix:{self.socket}"
        return f"{self.host or 'localhost'}:{self.port}"

    def pymysql_kwargs(self) -> dict:
        kwargs: dict = {
            "user": self.user if self.user is not None else getpass.getuser(),
            # As libmysqlclient sends it: the option file's bytes (UTF-8); pymysql would encode a
            # str as Latin-1, failing on "€" and sending "é" as a byte the server does not hash.
            "password": (self.password or "").encode("utf-8"),
            "connect_timeout": self.connect_timeout,
            "auth_plugin_map": auth_plugin_map(self.allow_cleartext),
        }
        if self.server_public_key:
            kwargs["server_public_key"] = self.server_public_key
        if self.uses_socket:
            kwargs["unix_socket"] = self.socket
        else:
            kwargs["host"] = self.host or "localhost"
            kwargs["port"] = self.port
        mode = (self.ssl_mode or "").upper()
        if mode == "DISABLED":
            kwargs["ssl_disabled"] = True
            return kwargs
        verify_identity = mode == "VERIFY_IDENTITY" or self.ssl_verify_server_cert
        verify_cert = verify_identity or mode == "VERIFY_CA"
        for key in ("ssl_ca", "ssl_cert", "ssl_key"):
            if getattr(self, key):
                kwargs[key] = getattr(self, key)
        if verify_cert:
            kwargs["ssl_verify_cert"] = True
            kwargs["ssl_verify_identity"] = verify_identity
        elif mode == "REQUIRED" and not any(kwargs.get(k) for k in ("ssl_ca", "ssl_cert", "ssl_key")):
            # TLS without verification: pymysql only starts TLS when given some ssl setting.
            import ssl

            kwargs["ssl"] = {"check_hostname": False, "verify_mode": ssl.CERT_NONE}
        return kwargs


def read_server_public_key(path: str, where: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where} server-public-key-path: {path}: cannot read: {exc.strerror}") from None


def _boolean(value: str | None) -> bool:
    return value is None or value.strip().lower() in ("1", "on", "true", "yes")


def settings_from_my_cnf(path: str | Path, section: str = "client") -> ConnectionSettings:
    """Read one ``[client]`` (or ``[client.<name>]``) section of a my.cnf file and its includes.

    ``[client.<name>]`` inherits every option of ``[client]`` and overrides some
    (mysqld_exporter's auth_module).  Every password the file holds, in any group, is handed
    to the scrubber (agents/config/redact.py) first.  Raises ConfigError naming the file and key.
    """
    path = Path(path).expanduser()
    try:
        option_file = cached_option_file(path)
    except OptionFileError as exc:
        if not (path.exists() or path.is_symlink()):
            raise ConfigError(f"{path}: no such file (give --my-cnf or create it with a [client] section)") from None
        raise ConfigError(str(exc)) from None
    for options in option_file.groups.values():
        remember_secret(options.get("password"))
    section = section.lower()
    options: dict[str, str | None] = dict(option_file.group("client") or {})
    if section != "client":
        if option_file.group(section) is None:
            raise ConfigError(f"{path}: no [{section}] section")
        options.update(option_file.group(section))
    elif option_file.group("client") is None:
        raise ConfigError(f"{path}: no [client] section")
    return _settings_from_options(options, f"{path} [{section}]")


def require_user(settings: ConnectionSettings) -> ConnectionSettings:
    """An option file that names no user is an error, as in mysqld_exporter: the clients would log
    in as the operating-system user (often root) with whatever password the file gives."""
    if not settings.user and settings.origin not in ("defaults", "flags"):
        raise ConfigError(f"{settings.origin}: no user (set user = NAME in that section, "
                          "or give --user / --mysqld.username)")
    return settings


def _settings_from_options(options: Mapping[str, str | None], where: str) -> ConnectionSettings:
    kwargs: dict = {"origin": where}
    for key in ("host", "socket", "user", "password", "ssl_ca", "ssl_cert", "ssl_key"):
        if options.get(key) is not None:
            kwargs[key] = options[key]
    if options.get("port") is not None:
        kwargs["port"] = parse_port(options["port"], f"{where} port")
    if "ssl_mode" in options:
        mode = (options["ssl_mode"] or "").upper()
        if mode not in SSL_MODES:
            raise ConfigError(f"{where} ssl-mode: {options['ssl_mode']!r} is not one of {', '.join(SSL_MODES)}")
        kwargs["ssl_mode"] = mode
    if "ssl_verify_server_cert" in options:
        kwargs["ssl_verify_server_cert"] = _boolean(options["ssl_verify_server_cert"])
    if options.get("server_public_key_path"):
        kwargs["server_public_key"] = read_server_public_key(options["server_public_key_path"], where)
    if "enable_cleartext_plugin" in options:
        kwargs["allow_cleartext"] = _boolean(options["enable_cleartext_plugin"])
    if "skip_ssl" in options and _boolean(options["skip_ssl"]):
        kwargs["ssl_mode"] = "DISABLED"
    if options.get("connect_timeout") is not None:
        kwargs["connect_timeout"] = _connect_timeout(options["connect_timeout"], f"{where} connect-timeout")
    return ConnectionSettings(**kwargs)


# pymysql.connect refuses other values, but only when connecting: checked here so a bad
# file is a configuration error naming the key, not an "unreachable server".
MAX_CONNECT_TIMEOUT = 31536000


def _connect_timeout(value: str, where: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT:  # also false for nan
        raise ConfigError(f"{where}: {value!r} is not a number of seconds in (0, {MAX_CONNECT_TIMEOUT}]")
    return seconds


def parse_port(value: object, where: str) -> int:
    try:
        port = int(str(value).strip())
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise ConfigError(f"{where}: {value!r} is not a TCP port (1-65535)")
    return port


PASSWORD_RULE = (
    f"The password comes only from the option file or the {PASSWORD_ENV} environment variable, "
    "never from a flag (flags show in ps); the file's password wins and the variable is used "
    "when the file gives none, as in mysqld_exporter."
)


def with_env_password(settings: ConnectionSettings, environ: Mapping[str, str]) -> ConnectionSettings:
    """The one password rule of every command: the option file's password wins;
    MYSQLD_EXPORTER_PASSWORD is the password only when the file gives none.

    mysqld_exporter (config/config.go, ReloadConfig) loads "[client] password =
    ${MYSQLD_EXPORTER_PASSWORD}" as a first source that the option file then overrides, and
    [client.NAME] sections inherit it from [client]: the variable is a default, not an override.
    """
    remember_secret(environ.get(PASSWORD_ENV))  # a secret even when the file's password wins
    if not settings.password and environ.get(PASSWORD_ENV):
        return replace(settings, password=environ[PASSWORD_ENV])
    return settings


def resolve_settings(
    my_cnf: str | Path | None = None,
    *,
    section: str = "client",
    host: str | None = None,
    port: int | str | None = None,
    socket: str | None = None,
    user: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConnectionSettings:
    """my.cnf, then --host/--port/--socket/--user flags, then ``with_env_password``.

    A missing default ~/.my.cnf is fine; a missing file that was asked for is an error.
    """
    environ = os.environ if environ is None else environ
    if my_cnf is not None or DEFAULT_MY_CNF.expanduser().exists():
        settings = settings_from_my_cnf(my_cnf if my_cnf is not None else DEFAULT_MY_CNF, section)
    else:
        settings = ConnectionSettings(host="localhost")
    overrides: dict = {}
    if host:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = parse_port(port, "--port")
    if socket:
        overrides["socket"] = socket
    if user:
        overrides["user"] = user
    return with_env_password(require_user(replace(settings, **overrides)), environ)


# --------------------------------------------------------------------------- command-line flags


def _positive(number: type) -> Callable[[str], float]:
    """An argparse type: ``number(text)`` greater than 0 (timeouts of 0 or less mean nothing here)."""
    import argparse

    def convert(text: str):
        try:
            value = number(text)
        except ValueError:
            value = 0
        if not value > 0:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds greater than 0")
        return value

    convert.__name__ = number.__name__  # argparse names the type in its own messages
    return convert


def add_connection_arguments(parser) -> None:
    """The connection flags every command that talks to MySQL shares (argparse)."""
    group = parser.add_argument_group("connection", f"Where to connect. {PASSWORD_RULE}")
    group.add_argument("--my-cnf", "--config.my-cnf", dest="my_cnf", metavar="FILE",
                       help=f"MySQL option file with a [client] section (default: {DEFAULT_MY_CNF}, if it exists)")
    group.add_argument("--my-cnf-section", default="client", metavar="SECTION",
                       help="section of the file to read; [client.NAME] inherits from [client] (default: client)")
    group.add_argument("--host", help="server host name or address (overrides the file)")
    group.add_argument("--port", help=f"server TCP port (overrides the file; default {DEFAULT_PORT})")
    group.add_argument("--socket", help="server Unix socket, used when the host is localhost (overrides the file)")
    group.add_argument("--user", help="MySQL user (overrides the file)")
    group.add_argument("--statement-timeout", type=_positive(float), default=5.0, metavar="SECONDS",
                       help="limit for each statement (default: 5). The server aborts it (MariaDB max_statement_time, "
                       "MySQL 5.7.8+ max_execution_time, SELECTs only); otherwise the connection is "
                       "dropped one second later")
    group.add_argument("--lock-wait-timeout", "--exporter.lock_wait_timeout", dest="lock_wait_timeout", type=_positive(int),
                       default=1, metavar="SECONDS",
                       help="session lock_wait_timeout, so monitoring never queues behind DDL for long (default: 1)")


def settings_from_args(args) -> ConnectionSettings:
    return resolve_settings(
        args.my_cnf, section=args.my_cnf_section, host=args.host, port=args.port, socket=args.socket, user=args.user
    )
