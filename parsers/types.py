"""The value types every parser returns, and the Snapshot carries.

They live here, below both, so ``parsers/`` stands alone: the agents import
these types from the parsers, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

# What a catalog value can be.  None is a real value ("NULL", e.g. replication lag
# while the SQL thread is stopped); a value that is simply unknown is *absent*.
Value = Union[int, float, str, None]

# Label sets are sorted tuples of (name, value) so they hash and compare.
Labels = tuple[tuple[str, str], ...]


def labels_of(**labels: str) -> Labels:
    return tuple(sorted((k, str(v)) for k, v in labels.items()))


@dataclass(frozen=True, slots=True)
class NamedRow:
    """A value the server names itself: one column of a replica status row, one INNODB_METRICS
    counter, one TokuDB status line, one processlist group.

    The catalog's ``prometheus_families.named`` rules turn ``key`` into a family name; the
    parser that makes the row composes the key as mysqld_exporter composes the end of its name.
    """

    key: str
    value: float
    labels: Labels = ()  # (label, value) pairs of the row the value came from
    counter: bool = False  # the row says it counts (INNODB_METRICS TYPE), for a rule of type "row"
    help: str = ""  # the row's own description (INNODB_METRICS COMMENT), for a generic rule
