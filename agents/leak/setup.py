"""One LeakDetector per monitored target, built from an agent's flags.

Both agents (``mysql-snmp agentx`` and ``mysql-snmp exporter``) take a YAML file whose
``leak:`` section configures the detector, and a state file path.  Where the history is
kept, first match wins:

1. the state-file flag (``--leak-state`` / ``--exporter.leak-state-file``), as given;
2. ``state_file`` in the YAML section (empty or null: keep no history);
3. ``/var/lib/mysql-snmp/leak-state.<agent>.<target>.json``: one file per agent and target,
   so agents watching different servers -- or the exporter and the AgentX agent watching
   the same one -- never share (and overwrite) each other's history.  Releases before
   this kept ``leak-state.<target>.json`` for both agents: when an agent's own file does
   not exist yet, it starts from a copy of that shared file, so no history is lost.

A running agent holds the file's lock (agents/leak/history_lock.py): a second agent given
the same file refuses to start, naming the first.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping


from .config import (
    DEFAULT_STATE_FILE,
    LeakConfig,
    LeakConfigError,
    canonical_series_name,
    load_leak_config,
)
from .detector import LeakDetector
from .history_lock import HistoryLock
from .state_file import state_path_for_target
from ..config.names import did_you_mean
from ..config.yaml_errors import describe_load_error

if TYPE_CHECKING:
    from ..catalog import Catalog

log = logging.getLogger(__name__)

AGENTS = ("exporter", "agentx")


def read_leak_section(config_file: str | os.PathLike | None) -> Mapping[str, Any] | None:
    """The ``leak:`` section of a YAML file (None without a file or section)."""
    if not config_file:
        return None
    try:
        text = Path(config_file).read_text()
    except OSError as exc:
        raise LeakConfigError(f"{config_file}: {describe_load_error(exc)}") from None
    if _only_comments(text):
        # The packaged leak.yml, every key commented out: what PyYAML would make of it (None),
        # without loading PyYAML (~1 MB of every agent's RSS) for it.
        return None
    import yaml  # only with a file: most processes read no YAML at all

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LeakConfigError(f"{config_file}: {describe_load_error(exc)}") from None
    if document is None:
        return None
    if not isinstance(document, dict):
        raise LeakConfigError(f"{config_file}: not a YAML mapping")
    section = document.get("leak")
    if section is not None and not isinstance(section, dict):
        raise LeakConfigError(f"{config_file}: leak: must be a mapping")
    return section


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines())


def default_state_path(agent: str, target: str, base: str | os.PathLike = DEFAULT_STATE_FILE) -> Path:
    """``leak-state.json``, ``agentx``, ``db1:3306`` -> ``leak-state.agentx.db1_3306.json``."""
    if agent not in AGENTS:
        raise ValueError(f"agent must be one of {AGENTS}, not {agent!r}")
    base = Path(base)
    return state_path_for_target(base.with_name(f"{base.stem}.{agent}{base.suffix}"), target)


def adopt_shared_history(path: Path, target: str, base: str | os.PathLike = DEFAULT_STATE_FILE) -> None:
    """Start an agent's own file from the file both agents shared before (left in place for the other)."""
    shared = state_path_for_target(base, target)
    if path.exists() or not shared.is_file():
        return
    try:
        shutil.copyfile(shared, path)
        log.info("leak detector history: %s starts from a copy of %s", path, shared)
    except OSError as exc:
        log.warning("cannot copy leak history %s to %s (%s): starting without it", shared, path, exc)


def state_path(section: Mapping[str, Any] | None, config: LeakConfig, target: str,
               state_file: str | os.PathLike | None, agent: str) -> Path | None:
    """Where this target's history is kept (None: nowhere); see the module docstring."""
    if state_file:
        return Path(state_file)
    if section and "state_file" in section:
        return Path(config.state_file) if config.state_file else None
    return default_state_path(agent, target)


def build_leak_detector(target: str, config_file: str | os.PathLike | None = None,
                        state_file: str | os.PathLike | None = None, *, agent: str,
                        catalog: Catalog | None = None, live: bool = False) -> LeakDetector:
    """The detector of one target for ``agent`` (exporter or agentx); raises LeakConfigError
    (naming the file) on a bad config.  Series names are checked against ``catalog`` (the
    agent's own; the packaged one when None).  ``live``: the detector of a running agent: it
    holds the state file's lock for its life (raises HistoryInUse, naming the holder, when
    another process holds it) and tells clock steps forward by the monotonic clock."""
    section = read_leak_section(config_file)
    try:
        config = load_leak_config(section)
        check_series_names(config, catalog)
    except LeakConfigError as exc:
        raise LeakConfigError(f"{config_file}: {exc}") from None
    path = state_path(section, config, target, state_file, agent)
    history_lock = None
    if live and path is not None:
        history_lock = HistoryLock(path, f"mysql-snmp {agent} monitoring {target}")
        history_lock.acquire()
    if path is not None and path == default_state_path(agent, target):
        adopt_shared_history(path, target)
    return LeakDetector(config, state_path=path, lock=history_lock, monotonic=time.monotonic if live else None)


def check_series_names(config: LeakConfig, catalog: Catalog | None = None) -> None:
    """A watched, explaining or limit series must be a catalog value: a misspelt one would be
    watched for ever without a single value, and say nothing."""
    if catalog is None:
        from ..catalog import load_catalog

        catalog = load_catalog()
    for i, series in enumerate(config.series):
        named = [("name", series.name), ("explained_by", series.explained_by)]
        named += [("limit_series", name) for name in series.limit_series]
        for field, name in named:
            if name and canonical_series_name(name) not in catalog:
                hint = did_you_mean(canonical_series_name(name), (m.name for m in catalog.metrics))
                raise LeakConfigError(f"leak.series[{i}].{field}: {name} is not a catalog value{hint} "
                                      "('mysql-snmp collect' prints them)")


def describe_watched(detector: LeakDetector) -> str:
    """The watched series as one log line: ``name{label=pattern} (explained by x), ...``."""
    parts = []
    for series in detector.config.series:
        text = series.name
        if series.labels:
            text += "{" + ",".join(f"{k}={v}" for k, v in series.labels) + "}"
        if series.explained_by:
            text += f" (explained by {series.explained_by})"
        parts.append(text)
    where = detector.state_path or "not kept"
    return f"{', '.join(parts) or 'no series'}; history: {where}"
