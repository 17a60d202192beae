"""SHOW GLOBAL STATUS and SHOW GLOBAL VARIABLES rows to typed values."""

from __future__ import annotations

import calendar
import re
import time
from typing import Iterable, Mapping

from .types import Value
from .columns import MISSING, fold_row, pick
from .values import text_of, typed

_NAME_COLUMNS = ("Variable_name", "Name")
_VALUE_COLUMNS = ("Value",)


def parse_status_rows(rows: Iterable[object]) -> dict[str, Value]:
    """{variable name as printed: typed value}.

    Rows are (name, value) sequences (pymysql's default cursor) or mappings
    with Variable_name/Value (DictCursor, mysql_snmp.parsers.tabular).  A row without a
    name cannot be attributed and raises ValueError naming it.
    """
    result: dict[str, Value] = {}
    for index, row in enumerate(rows):
        # pymysql's rows are (str, value) tuples: take them as they are (~1,200 rows a scrape).
        if type(row) is tuple and len(row) == 2 and type(row[0]) is str and row[0]:
            name, value = row
        else:
            name, value = _name_and_value(row, index)
        result[name] = typed(value)
    return result


def _name_and_value(row: object, index: int) -> tuple[str, object]:
    if isinstance(row, (tuple, list)) and len(row) == 2:
        name, value = row
    elif isinstance(row, Mapping):
        folded = fold_row(row)
        name, value = pick(folded, _NAME_COLUMNS), pick(folded, _VALUE_COLUMNS)
        if name is MISSING or value is MISSING:
            columns = ", ".join(sorted(str(name) for name in row))
            raise ValueError(f"status row {index}: needs Variable_name and Value columns, has {columns!r:.100}")
    else:
        raise ValueError(f"status row {index}: expected (name, value), got {row!r:.80}")
    name_text = text_of(name)
    if not name_text:
        raise ValueError(f"status row {index}: empty variable name")
    return name_text, value


# Words mysqld_exporter reads as numbers besides ON/OFF/YES/NO (typed() already maps those):
# Slave_IO_Running "Connecting" is a not-running state; wsrep_cluster_status Primary /
# non-Primary / Disconnected.
_STATE_WORDS = {"primary": 1.0, "disabled": 0.0, "connecting": 0.0, "non-primary": 0.0, "disconnected": 0.0}
# Timestamps it also reads: Ssl_server_not_after ("Nov 29 09:00:00 2036 GMT") and DATETIME
# columns, both as UTC.  The patterns keep strptime (slow) off the other text values.
_TIME_FORMATS = (
    (re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} [A-Z]+$"), "%b %d %H:%M:%S %Y %Z"),
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"), "%Y-%m-%d %H:%M:%S"),
)


def sample_number(value: Value) -> float | None:
    """A typed status, variable or column value as a sample; None when it is none (NULL, free text)."""
    if value is None:
        return None
    if type(value) is int or type(value) is float:
        return float(value)
    text = str(value)
    word = _STATE_WORDS.get(text.lower())
    if word is not None:
        return word
    for pattern, fmt in _TIME_FORMATS:
        if pattern.match(text):
            try:
                return float(calendar.timegm(time.strptime(text, fmt)))
            except ValueError:
                return None
    return None


def wsrep_enabled(status: Mapping[str, Value], variables: Mapping[str, Value] | None = None) -> bool:
    """Whether this server runs Galera replication.

    MariaDB prints wsrep_* status (wsrep_ready OFF, wsrep_cluster_status Disconnected) even
    with wsrep off, which reads as a broken cluster node.  The variable wsrep_on says it;
    without the variables, a server without a loaded provider names none.
    """
    if variables is not None and "wsrep_on" in variables:
        return variables["wsrep_on"] == 1
    return bool(status.get("wsrep_provider_name"))


def without_wsrep(status: Mapping[str, Value]) -> dict[str, Value]:
    """The status without its wsrep_* rows (for a server where wsrep is off)."""
    kept = dict(status)
    # The first letter first: ~600 names a scrape, lowercased only when they may be one.
    for name in [name for name in kept if name[:1] in ("w", "W") and name[:5].lower() == "wsrep"]:
        del kept[name]
    return kept


_EVS_LATENCY_PARTS = ("min_seconds", "avg_seconds", "max_seconds", "stdev", "sample_size")
_GCACHE_SIZE = re.compile(r"gcache.size = (\d+)([MG]?);")
_GCACHE_UNITS = {"": 1, "M": 1024**2, "G": 1024**3}


def galera_evs_latency(text: str) -> dict[str, float]:
    """wsrep_evs_repl_latency "min/avg/max/stdev/samples" by part; {} unless all five are numbers."""
    parts = text.split("/") if text else []
    if len(parts) != len(_EVS_LATENCY_PARTS):
        return {}
    numbers = [typed(part.strip()) for part in parts]
    if not all(type(n) in (int, float) for n in numbers):
        return {}
    return {name: float(n) for name, n in zip(_EVS_LATENCY_PARTS, numbers)}


def galera_gcache_size_bytes(provider_options: str) -> int | None:
    """gcache.size from wsrep_provider_options, in bytes."""
    match = _GCACHE_SIZE.search(provider_options or "")
    return int(match.group(1)) * _GCACHE_UNITS[match.group(2)] if match else None
