"""The leak detector's history on disk, so a restarted agent keeps its baseline.

Written atomically (temporary file in the same directory, fsync, rename) so a crash
mid-write leaves the previous file intact.  A missing, unreadable or corrupt file
means starting fresh with a warning, never an agent that refuses to start.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


def state_path_for_target(base: str | os.PathLike, target: str) -> Path:
    """One state file per monitored target (the exporter's multi-target mode):
    ``leak-state.json`` + ``db1:3306`` -> ``leak-state.db1_3306.json``."""
    base = Path(base)
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", target).strip("_.") or "default"
    return base.with_name(f"{base.stem}.{slug}{base.suffix}")


def load_state(path: str | os.PathLike) -> dict[str, Any]:
    """The per-series state mapping saved by save_state(); {} (with a warning) when unusable."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        log.info("leak state file %s does not exist yet: starting without history", path)
        return {}
    except OSError as exc:
        log.warning("leak state file %s unreadable (%s): starting without history", path, exc)
        return {}
    try:
        document = json.loads(text)
    except ValueError as exc:
        log.warning("leak state file %s is corrupt (%s): starting without history", path, exc)
        return {}
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        log.warning("leak state file %s has an unknown format: starting without history", path)
        return {}
    series = document.get("series")
    if not isinstance(series, dict):
        log.warning("leak state file %s has no series mapping: starting without history", path)
        return {}
    return series


def save_state(path: str | os.PathLike, series: dict[str, Any], saved_at: float) -> None:
    """Replace the file atomically; raises OSError when the directory is not writable."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"version": FORMAT_VERSION, "saved_at": saved_at, "series": series}
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
