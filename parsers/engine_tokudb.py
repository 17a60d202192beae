"""SHOW ENGINE TOKUDB STATUS (Percona Server up to 8.0.27, MariaDB up to 10.5) as named values.

The rows are (Type, Name, Status), Name a free-text description ("ft: uncompressed /
compressed bytes written (overall)").  mysqld_exporter names each numeric line by that
text: lower case, ``> , : ( )`` dropped, spaces and dashes to ``_``, ``+`` and ``/`` to
``and``.  The family name is the catalog's (``prometheus_families.named``); a character
the rule leaves that Prometheus refuses becomes ``_`` there.
"""

from __future__ import annotations

from typing import Iterable

from .columns import MISSING, fold_row, pick
from .status import sample_number
from .types import NamedRow
from .values import text_of, typed

_UPSTREAM_NAME_CHARS = str.maketrans({">": "", ",": "", ":": "", "(": "", ")": "", " ": "_", "-": "_",
                                      "+": "and", "/": "and"})


def tokudb_metric_name(description: str) -> str:
    """A status line's description as mysqld_exporter names it."""
    return description.lower().translate(_UPSTREAM_NAME_CHARS)


def tokudb_status_rows(rows: Iterable[object]) -> list[NamedRow]:
    """Every line whose Status is a number (text, dates and versions give none)."""
    named = []
    for index, row in enumerate(rows):
        folded = fold_row(row, f"TokuDB status row {index}")
        description, status = pick(folded, ("Name",)), pick(folded, ("Status",))
        if description is MISSING or status is MISSING:
            raise ValueError(f"TokuDB status row {index}: needs Name and Status columns, has {sorted(folded)}")
        key = tokudb_metric_name(text_of(description) or "")
        value = sample_number(typed(status))
        if key and value is not None:
            named.append(NamedRow(key, value))
    return named
