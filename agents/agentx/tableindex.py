"""How a label value becomes part of a table row's OID (RFC 2578 7.7), shared by the view and the MIB.

Numeric labels (a buffer pool number) index as one INTEGER sub-identifier; every other label
(a processlist state, a replication channel, a leak series, a memory event name) indexes as a
non-IMPLIED OCTET STRING: its length, then one sub-identifier per byte.  Rows therefore sort
shorter strings first, then byte by byte, which is the order a walk returns them in.
"""

from __future__ import annotations

from typing import Iterable

from agents.snapshot import Labels

# Labels whose values are small non-negative integers assigned by the server.
INTEGER_INDEX_LABELS = frozenset({"pool"})
# RFC 2578 7.7 bounds the OID at 128 sub-identifiers; the string index gets what the column leaves.
MAX_OID_LENGTH = 128
INTEGER_INDEX_MAX = 2**31 - 1


class UnindexableRow(ValueError):
    """A label value that cannot be expressed as an index (negative pool, overlong name)."""


def is_integer_index(label: str) -> bool:
    return label in INTEGER_INDEX_LABELS


def encode_index(index_labels: Iterable[str], labels: Labels) -> tuple[int, ...]:
    """Sub-identifiers of one row: one part per index label, in the table's index order."""
    values = dict(labels)
    parts: list[int] = []
    for label in index_labels:
        if label not in values:
            raise UnindexableRow(f"row {labels!r} has no value for index label {label!r}")
        text = values[label]
        if is_integer_index(label):
            try:
                number = int(text)
            except ValueError:
                raise UnindexableRow(f"index label {label}={text!r} is not an integer") from None
            if not 0 <= number <= INTEGER_INDEX_MAX:
                raise UnindexableRow(f"index label {label}={number} is outside 0..{INTEGER_INDEX_MAX}")
            parts.append(number)
        else:
            data = str(text).encode("utf-8")
            parts.append(len(data))
            parts.extend(data)
    return tuple(parts)
