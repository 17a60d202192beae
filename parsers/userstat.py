"""information_schema.USER_STATISTICS and CLIENT_STATISTICS (userstat=1, MariaDB and Percona).

Both tables have the same columns after the first (USER or CLIENT).  Every numeric column
is one series keyed by its lower-cased name (``busy_time``), labelled by that first column:
the catalog entries name the columns they know (``source: {from: user_statistics, key:
busy_time}``), and the catalog's ``prometheus_families.named`` rule serves any other as
mysqld_exporter does (``mysql_info_schema_user_statistics_<column>``, untyped).  No column
list here: a column a newer server adds is served without a change.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .columns import fold_row
from .table_rows import Series, label_text, number


def columns_series(rows: Iterable[Mapping], label: str) -> Series:
    """``{column: {((label, value),): number}}`` for every numeric column but ``label``'s."""
    series: Series = {}
    for row in rows:
        folded = fold_row(row)
        labels = ((label, label_text(folded.get(label))),)
        for column, raw in folded.items():
            value = None if column == label else number(raw)
            if value is not None:
                series.setdefault(column, {})[labels] = value
    return series


def user_statistics_series(rows: Iterable[Mapping]) -> Series:
    return columns_series(rows, "user")


def client_statistics_series(rows: Iterable[Mapping]) -> Series:
    return columns_series(rows, "client")
