"""The installed version: pyproject.toml's ``version``, the one place it is written."""

from __future__ import annotations

import importlib.metadata

DISTRIBUTION = "mysql-snmp"


def installed_version() -> str:
    """As installed by pip (editable or not) or by the .deb/.rpm, which install with pip too."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a bare checkout, never installed
        return "unknown (not installed)"
