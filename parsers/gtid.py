"""GTID set text as servers print it."""

from __future__ import annotations


def normalise_gtid_set(text: str | None) -> str | None:
    """One-line GTID set: MySQL breaks long sets after each comma ("uuid:1-3,\\nuuid:1-5")."""
    if text is None:
        return None
    return "".join(part.strip() for part in text.splitlines())
