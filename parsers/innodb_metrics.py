"""information_schema.INNODB_METRICS rows, grouped the way mysqld_exporter groups them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from mysql_snmp.parsers.columns import MISSING, fold_row, pick
from mysql_snmp.parsers.status import sample_number
from mysql_snmp.parsers.values import text_of, typed

_BUFFER_POOL_PAGES = re.compile(r"^buffer_pool_pages_(.*)$")
_BUFFER_PAGE_IO = re.compile(r"^buffer_page_(read|written)_(.*)$")


@dataclass(frozen=True)
class InnodbMetric:
    subsystem: str
    name: str
    counter: bool  # a counter that went negative is a server bug (bugs.mysql.com 75966): not a counter
    comment: str
    value: float


@dataclass
class InnodbMetricGroups:
    page_read: dict[str, float] = field(default_factory=dict)  # page type -> pages read
    page_written: dict[str, float] = field(default_factory=dict)
    pool_pages: dict[str, float] = field(default_factory=dict)  # state -> pages (not the total)
    pool_dirty: float | None = None
    others: list[InnodbMetric] = field(default_factory=list)


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


def group_innodb_metrics(rows: Iterable[object]) -> InnodbMetricGroups:
    """Enabled counters: buffer page I/O by page type, buffer pool pages by state, the rest one by one."""
    groups = InnodbMetricGroups()
    for index, row in enumerate(rows):
        folded = fold_row(row, f"INNODB_METRICS row {index}")
        if not _enabled(folded):
            continue
        name, subsystem = _text(folded, "NAME"), _text(folded, "SUBSYSTEM")
        count = pick(folded, ("COUNT",))
        value = None if count is MISSING else sample_number(typed(count))
        if not name or value is None:
            continue
        if subsystem == "buffer_page_io":
            match = _BUFFER_PAGE_IO.match(name)
            if match:
                (groups.page_read if match.group(1) == "read" else groups.page_written)[match.group(2)] = value
            continue
        if subsystem == "buffer":
            match = _BUFFER_POOL_PAGES.match(name)
            if match:
                if match.group(1) == "dirty":
                    groups.pool_dirty = value
                elif match.group(1) != "total":  # the sum of the others
                    groups.pool_pages[match.group(1)] = value
                continue
        counter = _text(folded, "TYPE") in ("counter", "status_counter") and value >= 0
        groups.others.append(InnodbMetric(subsystem, name, counter, _text(folded, "COMMENT") or name, value))
    return groups
