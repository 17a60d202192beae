"""How a label value becomes part of a table row's OID (RFC 2578 7.7), shared by the view and the MIB.

Labels the catalog lists in a table's ``integer_index`` (a buffer pool number) index as one
INTEGER sub-identifier; every other label (a processlist state, a replication channel, a leak
series, a memory event name) indexes as a non-IMPLIED OCTET STRING: its length, then one
sub-identifier per byte.  Rows therefore sort
shorter strings first, then byte by byte, which is the order a walk returns them in.
"""

from __future__ import annotations

from ..catalog import Table
from ..snapshot import Labels

# RFC 2578 7.7 bounds the OID at 128 sub-identifiers; the string index gets what the column leaves.
MAX_OID_LENGTH = 128
INTEGER_INDEX_MAX = 2**31 - 1


# A table's row-name column (catalog ROW_NAME_SOURCE) joins a row's index labels with this.
ROW_NAME_SEPARATOR = " / "
# The default replication channel's name is empty; a manager that names a file or directory
# after the text needs something there.
EMPTY_ROW_NAME = "(default)"


def row_name(table: Table, labels: Labels) -> str:
    """The row's index labels as one text, in the table's index order (``Binlog Dump / init``)."""
    values = dict(labels)
    text = ROW_NAME_SEPARATOR.join(str(values.get(label, "")) for label in table.index)
    return text or EMPTY_ROW_NAME


class UnindexableRow(ValueError):
    """A label value that cannot be expressed as an index (negative pool, overlong name)."""


def encode_index(table: Table, labels: Labels) -> tuple[int, ...]:
    """Sub-identifiers of one row: one part per index label, in the table's index order."""
    values = dict(labels)
    parts: list[int] = []
    for label in table.index:
        if label not in values:
            raise UnindexableRow(f"row {labels!r} has no value for index label {label!r}")
        text = values[label]
        if label in table.integer_index:
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
