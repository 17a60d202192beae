"""Which server a leak history belongs to, so one server's history is never judged as another's.

The state file records the identity of the server its history was measured on: what the server
says of itself in SHOW GLOBAL VARIABLES (``server_uuid`` on MySQL, ``hostname`` and ``port``,
``server_id``) and the target the agent was told to monitor.  Two identities name the same
server when the strongest evidence both hold agrees: the UUID; else hostname and port; else
the target.  With nothing in common (a file from a release that did not record it) nothing
can be told, and the history is taken as this server's, as it always was.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..snapshot import Snapshot

# What the server says of itself, strongest evidence first.
IDENTITY_VARIABLES = ("server_uuid", "hostname", "port", "server_id")
# Tuples of fields, strongest first: the first both identities hold decides.
EVIDENCE = (("server_uuid",), ("hostname", "port"), ("target",))
# A server's hostname is at most 255 bytes, a UUID 36; anything longer is not an identity
# and must not grow the state file or a log line.
MAX_TEXT = 255

Identity = dict[str, str | int]


def _usable(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 0 < len(value) <= MAX_TEXT


def server_identity(snapshot: Snapshot) -> Identity:
    """The identity of the server a snapshot was taken from (the target at least)."""
    variables = snapshot.raw.get("global_variables")
    identity: Identity = {}
    if isinstance(variables, Mapping):
        for name in IDENTITY_VARIABLES:
            value = variables.get(name)
            if _usable(value):
                identity[name] = value
    if _usable(snapshot.target):
        identity["target"] = snapshot.target
    return identity


def checked_identity(value: Any) -> Identity:
    """An identity read from a state file; ValueError when it is not one."""
    if not isinstance(value, dict):
        raise ValueError("server identity is not a mapping")
    known = set(IDENTITY_VARIABLES) | {"target"}
    if set(value) - known or not all(_usable(v) for v in value.values()):
        raise ValueError("server identity holds something else")
    return dict(value)


def same_server(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> bool | None:
    """Whether two identities name the same server; None when they share no evidence."""
    for fields in EVIDENCE:
        if all(f in recorded and f in current for f in fields):
            return all(recorded[f] == current[f] for f in fields)
    return None


def describe(identity: Mapping[str, Any]) -> str:
    """One printable line naming a server: ``hostname:port (server_id N, uuid U, target T)``."""
    parts = []
    if "hostname" in identity:
        parts.append(f"{identity['hostname']}:{identity.get('port', '?')}")
    details = [f"{label} {identity[name]}" for name, label in
               (("server_id", "server_id"), ("server_uuid", "uuid"), ("target", "target")) if name in identity]
    text = " ".join(parts + ([f"({', '.join(details)})"] if parts and details else details))
    # a hostile server's hostname must not start a log line of its own
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text) or "an unknown server"


def short_name(identity: Mapping[str, Any]) -> str:
    """The most telling part of an identity, for a file name."""
    if "hostname" in identity:
        return f"{identity['hostname']}:{identity.get('port', '')}"
    return str(identity.get("server_uuid") or identity.get("target") or "unknown")
