"""The installed version: pyproject.toml's ``version``, the one place it is written.

Read from the installed distribution's metadata file the way importlib.metadata finds it (the
first sys.path entry holding a ``mysql_snmp-*.dist-info`` or ``mysql_snmp*.egg-info``), without
importing importlib.metadata: it brings zipfile, csv, email and importlib.resources, ~0.7 MB of
resident memory the exporter would keep for its whole life (tests/exporter/test_exporter_imports.py).
"""

from __future__ import annotations

import functools
import os
import sys

# The distribution "mysql-snmp" as its metadata directory spells it (PEP 503 name, "-" -> "_").
DIRECTORY_PREFIX = "mysql_snmp"
METADATA_FILES = {".dist-info": "METADATA", ".egg-info": "PKG-INFO"}
NOT_INSTALLED = "unknown (not installed)"


@functools.lru_cache(maxsize=1)
def installed_version() -> str:
    """As installed by pip (editable or not) or by the .deb/.rpm, which install with pip too."""
    for entry in sys.path:
        version = _version_in(entry or ".")
        if version is not None:
            return version
    return NOT_INSTALLED  # run from a bare checkout, never installed


def _version_in(directory: str) -> str | None:
    try:
        names = sorted(os.listdir(directory))
    except OSError:  # not a directory (a zip on sys.path), or gone
        return None
    for name in names:
        suffix = next((s for s in METADATA_FILES if name.endswith(s)), None)
        if suffix is None or not _names_this_distribution(name.removesuffix(suffix)):
            continue
        version = _version_field(os.path.join(directory, name, METADATA_FILES[suffix]))
        if version is not None:
            return version
    return None


def _names_this_distribution(stem: str) -> bool:
    """``mysql_snmp-2.0.0`` or ``mysql_snmp`` (an egg-info may omit the version), any case."""
    project = stem.partition("-")[0]
    return project.lower().replace(".", "_").replace("-", "_") == DIRECTORY_PREFIX


def _version_field(path: str) -> str | None:
    """The ``Version:`` header of a core metadata file (RFC 822 style: headers end at a blank line)."""
    try:
        with open(path, encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():
                    break
                field, _, value = line.partition(":")
                if field.strip().lower() == "version":
                    return value.strip()
    except OSError:
        return None
    return None
