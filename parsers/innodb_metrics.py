"""information_schema.INNODB_METRICS rows as named values (the catalog groups and names them)."""

from __future__ import annotations

from typing import Iterable

from .columns import MISSING, fold_row, pick
from .status import sample_number
from .types import NamedRow
from .values import text_of, typed


def _text(folded: dict, column: str) -> str:
    value = pick(folded, (column,))
    return "" if value is MISSING else text_of(value) or ""


def _enabled(folded: dict) -> bool:
    # MySQL has STATUS ('enabled'/'disabled'); MariaDB 10.x has ENABLED (1/0).
    status = pick(folded, ("STATUS",))
    if status is not MISSING and status is not None:
        return str(status).lower() == "enabled"
    enabled = pick(folded, ("ENABLED",))
    return enabled is MISSING or enabled is None or typed(enabled) == 1


def innodb_metric_rows(rows: Iterable[object]) -> list[NamedRow]:
    """Every enabled counter, keyed ``<SUBSYSTEM>/<NAME>`` (case kept), with its kind and COMMENT.

    Which rows mysqld_exporter groups (buffer page I/O by page type, buffer pool pages by
    state) or leaves out (the pool's page total) is the catalog's ``prometheus_families.named``.
    """
    named = []
    for index, row in enumerate(rows):
        folded = fold_row(row, f"INNODB_METRICS row {index}")
        if not _enabled(folded):
            continue
        name, subsystem = _text(folded, "NAME"), _text(folded, "SUBSYSTEM")
        count = pick(folded, ("COUNT",))
        value = None if count is MISSING else sample_number(typed(count))
        if not name or value is None:
            continue
        # A counter that went negative is a server bug (bugs.mysql.com 75966): not a counter.
        counter = _text(folded, "TYPE") in ("counter", "status_counter") and value >= 0
        named.append(NamedRow(f"{subsystem}/{name}", value, counter=counter, help=_text(folded, "COMMENT") or name))
    return named
