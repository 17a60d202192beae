"""The value types every parser returns, and the Snapshot carries.

They live here, below both, so ``parsers/`` stands alone: the agents import
these types from the parsers, never the other way round.
"""

from __future__ import annotations

from typing import Union

# What a catalog value can be.  None is a real value ("NULL", e.g. replication lag
# while the SQL thread is stopped); a value that is simply unknown is *absent*.
Value = Union[int, float, str, None]

# Label sets are sorted tuples of (name, value) so they hash and compare.
Labels = tuple[tuple[str, str], ...]


def labels_of(**labels: str) -> Labels:
    return tuple(sorted((k, str(v)) for k, v in labels.items()))
