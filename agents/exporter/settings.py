"""Connection settings of exporter targets, formed the way mysqld_exporter forms them.

/metrics: the option file's ``[client]``, completed by --mysqld.address/--mysqld.username;
or, without --config.my-cnf, Debian's ``DATA_SOURCE_NAME`` (Go MySQL driver DSN) when set.
/probe: ``[client.<auth_module>]`` (inheriting ``[client]``) aimed at ``?target=``, when allowed.
Both: the password rule of every command, mysql_snmp.agents.config.settings.with_env_password.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

from ..config.settings import ConfigError, ConnectionSettings, parse_port, require_user, settings_from_my_cnf, with_env_password
from .probe_access import ProbeAllowList, ProbeRefused, is_auth_module

log = logging.getLogger(__name__)


def apply_address(settings: ConnectionSettings, address: str) -> ConnectionSettings:
    """``host:port``, ``[v6]:port`` or ``unix:///path/to/socket`` onto connection settings."""
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        path = path[2:] if path.startswith("//") else path
        if not path.startswith("/"):
            raise ConfigError(f"target {address!r}: a unix socket needs an absolute path (unix:///path)")
        return replace(settings, host="localhost", socket=path)
    host, sep, port = address.rpartition(":")
    if not sep or not host:
        raise ConfigError(f"target {address!r} is not host:port or unix:///path")
    return replace(settings, host=host.strip("[]"), port=parse_port(port, f"target {address!r}"), socket=None)


DSN_VARIABLE = "DATA_SOURCE_NAME"


def settings_from_dsn(dsn: str) -> ConnectionSettings:
    """A Go MySQL driver DSN: ``[user[:password]@][tcp|unix][(address)]/[db][?params]``.

    ``user:pass@(host:port)/`` and ``user@unix(/run/mysqld/mysqld.sock)/`` are the forms
    Debian documents for prometheus-mysqld-exporter.  Errors never repeat the DSN:
    it holds the password.
    """
    head, slash, tail = dsn.rpartition("/")
    if not slash:
        raise ConfigError(f"{DSN_VARIABLE}: not a DSN of the form user:password@(host:port)/")
    credentials, at, network = head.rpartition("@")
    if not at:
        credentials, network = "", head
    user, _, password = credentials.partition(":")
    protocol, paren, address = network.partition("(")
    if paren and not address.endswith(")"):
        raise ConfigError(f"{DSN_VARIABLE}: unclosed '(' in the address part")
    address = address[:-1] if paren else ""
    protocol = protocol or "tcp"
    params = dict(part.partition("=")[::2] for part in tail.partition("?")[2].split("&") if part)
    settings = ConnectionSettings(user=user or None, password=password or None, origin=DSN_VARIABLE)
    if protocol == "unix":
        settings = replace(settings, host="localhost", socket=address or "/tmp/mysql.sock")
    elif protocol == "tcp":
        settings = apply_address(settings, address or "127.0.0.1:3306")
    else:
        raise ConfigError(f"{DSN_VARIABLE}: protocol {protocol!r} is neither tcp nor unix")
    tls = params.get("tls", "false").lower()
    if tls in ("true", "skip-verify", "preferred"):
        mode = {"true": "VERIFY_IDENTITY", "skip-verify": "REQUIRED", "preferred": "PREFERRED"}[tls]
        settings = replace(settings, ssl_mode=mode, ssl_verify_server_cert=tls == "true")
    return settings


def default_settings(my_cnf: str | None, address: str | None, username: str | None,
                     environ: dict[str, str], my_cnf_given: bool = True) -> ConnectionSettings:
    """Settings of /metrics, as mysqld_exporter forms them.

    With DATA_SOURCE_NAME set, that DSN names the server unless ``--config.my-cnf`` names a file
    this user can read (mysqld_exporter 0.14, as Debian packages it, takes the DSN first).  Otherwise the option file's
    ``[client]`` wins; ``--mysqld.address`` / ``--mysqld.username`` fill what it leaves
    out, and MYSQLD_EXPORTER_PASSWORD is the password when the file has none.
    """
    path = Path(my_cnf).expanduser() if my_cnf else None
    # Go 0.14 reads the variable first, so a DSN beside an option file its user cannot read (a
    # Debian unit's ARGS naming root's debian.cnf) is what it uses: so do we; a readable file wins.
    if environ.get(DSN_VARIABLE) and (not my_cnf_given or path is None or not os.access(path, os.R_OK)):
        return with_env_password(settings_from_dsn(environ[DSN_VARIABLE]), environ)
    if path is not None and path.exists():
        settings = settings_from_my_cnf(path, "client")
    else:
        if path is not None and my_cnf not in (None, "~/.my.cnf"):
            raise ConfigError(f"{path}: no such file")
        if address is None and username is None:
            # mysqld_exporter 0.14 exits here too, rather than serve mysql_up 0 for ever.
            raise ConfigError(f"{path or '~/.my.cnf'}: no such file, and neither {DSN_VARIABLE} nor "
                              "--mysqld.address/--mysqld.username names a server: give --config.my-cnf FILE")
        settings = ConnectionSettings(origin="flags")
    if settings.host is None and settings.socket is None:
        settings = apply_address(settings, address or "localhost:3306")
    if settings.user is None and username:
        settings = replace(settings, user=username)
    return with_env_password(require_user(settings), environ)


def without_certificate_check(settings: ConnectionSettings) -> ConnectionSettings:
    """--tls.insecure-skip-verify: TLS to MySQL, but no check of the server's certificate."""
    if settings.ssl_ca or (settings.ssl_mode or "").startswith("VERIFY") or settings.ssl_verify_server_cert:
        return replace(settings, ssl_ca=None, ssl_mode="REQUIRED", ssl_verify_server_cert=False)
    return settings


def probe_settings(my_cnf: str, target: str, auth_module: str, environ: dict[str, str],
                   allowed: ProbeAllowList) -> ConnectionSettings:
    """Settings of /probe: ``[client.<name>]`` (inheriting ``[client]``) aimed at ``target``.

    Raises ProbeRefused, before any connection, when ``target`` may not receive that section's
    credentials (agents/exporter/probe_access.py), and ConfigError when ``auth_module`` names no
    usable [client] or [client.NAME] section.  What either says goes to an unauthenticated client:
    nothing of the option file; the log has the details.
    """
    auth_module = auth_module or "client"
    unusable = ConfigError(f"auth_module {auth_module!r}: no such auth module ([client] or [client.NAME] section)")
    if not is_auth_module(auth_module):
        log.warning("/probe: auth_module %r refused: only [client] and [client.NAME] sections are auth modules",
                    auth_module)
        raise unusable
    try:
        section = require_user(settings_from_my_cnf(Path(my_cnf).expanduser(), auth_module))
    except ConfigError as exc:
        log.warning("/probe: auth_module %r: %s", auth_module, exc)
        raise unusable from None
    requested = apply_address(section, target)
    try:
        allowed.check(auth_module, section, requested)
    except ProbeRefused as exc:
        log.warning("/probe: %s", exc.detail)
        raise
    return with_env_password(requested, environ)
