"""Finding columns in result rows whatever the server version called them.

Servers disagree on column spelling: SHOW PROCESSLIST prints ``State`` where
information_schema.PROCESSLIST prints ``STATE``; MySQL 8.0.22 renamed
``Master_Host`` to ``Source_Host``; MariaDB writes ``Retried_transactions``.
Rows arrive as mappings (pymysql DictCursor or mysql_snmp.parsers.tabular); this module
looks names up case-insensitively and tries the spellings in order.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

# A column that is not in the row at all (distinct from a NULL value).
MISSING = object()


class RowError(ValueError):
    """A row that is not a mapping of column name to value."""


class FoldedRow(dict):
    """A row whose column names are already lowercased, each once: fold_row hands it back as it is.

    For a reader that builds rows from a result's column names (agents/mysql/connection.py): the
    perf_schema tables give ~1,000 rows a scrape, each folded again by its parser otherwise.
    """

    __slots__ = ()


def fold_row(row: object, what: str = "row") -> dict[str, Any]:
    """The row with its column names lowercased (first spelling wins)."""
    if type(row) is FoldedRow:
        return row
    if not isinstance(row, (dict, Mapping)):  # dict first: the ABC check is slow
        raise RowError(f"{what}: expected a mapping of column name to value, got {type(row).__name__}")
    folded: dict[str, Any] = {}
    for name, value in row.items():
        folded.setdefault(str(name).lower(), value)
    return folded


def pick(folded: Mapping[str, Any], names: Sequence[str]) -> Any:
    """The value of the first of ``names`` present in a folded row, or MISSING."""
    return pick_named(folded, names)[1]


def pick_named(folded: Mapping[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    """(the spelling found, its value), or (None, MISSING)."""
    for name in names:
        value = folded.get(name.lower(), MISSING)
        if value is not MISSING:
            return name, value
    return None, MISSING
