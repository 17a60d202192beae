"""Which ``/probe`` targets may receive an auth module's credentials.

``/probe?target=X&auth_module=client.NAME`` logs in to X with that section's user and password, so an
open list would hand the password to whatever host a request names (a fake server on any port needs
only to ask for it; see agents/mysql/auth_plugins.py for the other half).  A target is allowed when:

- it is the address the auth module's own section names (``host``/``port`` or ``socket``, after
  inheriting ``[client]``): the default, nothing else; or
- it matches a ``--exporter.probe-allowed-targets`` pattern: ``[AUTH_MODULE=]PATTERN``, shell-style
  (``db-*.example.com:3306``, ``10.0.3.*:*``, ``unix:///run/mysqld/*.sock``), for every auth module or,
  with the prefix, for that one only.

Targets are compared in one canonical form: ``host:port`` with the host lowercased (IPv6 in
brackets), or ``unix:///path``.

Only ``[client]`` and ``[client.NAME]`` sections are auth modules (the ones mysqld_exporter documents): the
option file may hold others (``[mysqldump]`` with root's password) that no request may name.  The
answers to a refused request say nothing of the option file (its path, its sections' addresses):
the details go to the exporter's log.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from ..config.settings import ConnectionSettings

FLAG = "--exporter.probe-allowed-targets"


class ProbeRefused(Exception):
    """A /probe target that the auth module may not be sent to (HTTP 403).

    ``str()`` is the answer to the client; ``detail`` is for the log and says how to allow it."""

    def __init__(self, answer: str, detail: str):
        super().__init__(answer)
        self.detail = detail


def is_auth_module(name: str) -> bool:
    """``client`` or ``client.NAME``: the sections /probe?auth_module= may name."""
    section, dot, suffix = name.lower().partition(".")
    return section == "client" and (not dot or bool(suffix.strip()))


def canonical_target(settings: ConnectionSettings) -> str:
    if settings.uses_socket:
        return f"unix://{settings.socket}"
    host = (settings.host or "localhost").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{settings.port}"


@dataclass(frozen=True)
class ProbeAllowList:
    patterns: tuple[tuple[str | None, str], ...] = ()  # (auth module or None for all, pattern)

    @classmethod
    def from_flags(cls, values: list[str] | tuple[str, ...] | None) -> "ProbeAllowList":
        patterns = []
        for value in values or ():
            for item in value.split(","):
                item = item.strip()
                if not item:
                    continue
                module, sep, pattern = item.partition("=")
                if not sep:
                    module, pattern = None, item
                elif not pattern or not module.startswith("client"):
                    raise ValueError(f"{FLAG} {item!r}: expected [client.NAME=]HOST:PORT-PATTERN")
                patterns.append((module.lower() if module else None, pattern.lower()))
        return cls(tuple(patterns))

    def check(self, auth_module: str, section: ConnectionSettings, requested: ConnectionSettings) -> None:
        """Raise ProbeRefused unless ``requested`` (the section aimed at ?target=) may be used."""
        wanted = canonical_target(requested)
        if wanted == canonical_target(section):
            return
        module = auth_module.lower()
        for only, pattern in self.patterns:
            if (only is None or only == module) and fnmatch.fnmatchcase(wanted, pattern):
                return
        raise ProbeRefused(
            f"target {wanted} is not allowed for auth_module {auth_module}",
            f"target {wanted} is not allowed for auth_module {auth_module} (its section names "
            f"{canonical_target(section)}); allow it with {FLAG} {auth_module}={wanted}")
