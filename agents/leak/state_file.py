"""The leak detector's history on disk, so a restarted agent keeps its baseline.

Written atomically (temporary file in the same directory, fsync, rename) so a crash
mid-write leaves the previous file intact.  A missing, unreadable or corrupt file
means starting fresh with a warning, never an agent that refuses to start.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .server_identity import Identity, checked_identity
from ..config.textfile import read_regular_text

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def state_path_for_target(base: str | os.PathLike, target: str) -> Path:
    """One state file per monitored target (the exporter's multi-target mode):
    ``leak-state.json`` + ``db1:3306`` -> ``leak-state.db1_3306.json``."""
    base = Path(base)
    return base.with_name(f"{base.stem}.{_slug(target)}{base.suffix}")


def set_aside_path(path: str | os.PathLike, server: str) -> Path:
    """Where the history of another server found in ``path`` is kept:
    ``leak-state.json`` + ``db2:3306`` -> ``leak-state.other-server.db2_3306.json``."""
    path = Path(path)
    return state_path_for_target(path.with_name(f"{path.stem}.other-server{path.suffix}"), server)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_.")[:100] or "default"


# The largest file a detector writes is well under 2 MiB (max_series x a week of 15-min
# buckets and a few hours of bins); anything much bigger was not written by it.
MAX_STATE_BYTES = 32 * 2**20
# Numbers in the file are bytes, counts and Unix times: none comes near this.  A larger
# one (or a NaN, an infinity) would poison every computation and every later save.
MAX_MAGNITUDE = 2.0**63
# to_dict() nests four levels; deeper input is hostile and must not reach a recursive walk.
MAX_DEPTH = 8


class StateFileError(ValueError):
    """Why a state file cannot be used (one line, for the warning)."""


def _number(text: str) -> float | int:
    value = float(text) if any(c in text for c in ".eE") else int(text)
    if not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:  # also false for nan
        raise StateFileError(f"number {text[:40]} out of range")
    return value


def _no_constant(name: str) -> None:
    raise StateFileError(f"{name} is not a number this file may hold")


def _check_depth(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise StateFileError(f"nested deeper than {MAX_DEPTH} levels")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        _check_depth(child, depth + 1)


def storable(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` can be written so that parse_state() reads it back: finite numbers in
    range, strings, None, and lists/dicts (string keys) no deeper than MAX_DEPTH."""
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, (int, float)):
        return math.isfinite(value) and -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE
    if isinstance(value, dict):
        return all(isinstance(k, str) and storable(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(storable(v, depth + 1) for v in value)
    return False


@dataclass(frozen=True)
class StateDocument:
    series: dict[str, Any]  # per watched series: its detector's to_dict()
    server: Identity | None = None  # the server it was measured on (None: not recorded)


def parse_state(text: str) -> dict[str, Any]:
    """The per-series mapping of a state file's text; raises StateFileError (or ValueError) when unusable."""
    return parse_document(text).series


def parse_document(text: str) -> StateDocument:
    """A state file's text; raises StateFileError (or ValueError) when unusable."""
    try:
        document = json.loads(text, parse_float=_number, parse_int=_number, parse_constant=_no_constant)
    except RecursionError:
        raise StateFileError("nested too deeply to parse") from None
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        raise StateFileError("unknown format")
    series = document.get("series")
    if not isinstance(series, dict):
        raise StateFileError("no series mapping")
    _check_depth(series)
    server = document.get("server")
    if server is not None:
        try:
            server = checked_identity(server)
        except ValueError as exc:
            raise StateFileError(str(exc)) from None
    return StateDocument(series, server)


def load_state(path: str | os.PathLike) -> dict[str, Any]:
    """The per-series state mapping saved by save_state(); {} (with a warning) when unusable."""
    return load_document(path).series


def load_document(path: str | os.PathLike) -> StateDocument:
    """What save_state() wrote; no series (with a warning) when unusable.

    Whatever is at the path (missing, unreadable, not a regular file, huge, binary, malformed
    or hostile JSON, NaN or out-of-range numbers) costs a warning and a fresh start, never a
    traceback or a hang.
    """
    path = Path(path)
    try:
        return parse_document(read_regular_text(path, MAX_STATE_BYTES))
    except FileNotFoundError:
        log.info("leak state file %s does not exist yet: starting without history", path)
    except OSError as exc:
        log.warning("leak state file %s unreadable (%s): starting without history", path,
                    exc.strerror or exc)
    except ValueError as exc:  # UnusableFile, StateFileError, JSONDecodeError, int() of too many digits
        log.warning("leak state file %s is unusable (%s): starting without history", path, exc)
    return StateDocument({})


def save_state(path: str | os.PathLike, series: dict[str, Any], saved_at: float,
               server: Identity | None = None) -> None:
    """Replace the file atomically; raises OSError when the directory is not writable.

    ``server`` is an optional key of format 1: a file without it (older releases) still loads,
    and older releases load a file with it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"version": FORMAT_VERSION, "saved_at": saved_at, "series": series}
    if server:
        document["server"] = server
    fd, tmp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as tmp:
            json.dump(document, tmp, separators=(",", ":"), allow_nan=False)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise
