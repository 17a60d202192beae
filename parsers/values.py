"""Typed conversion of the text servers print, and the shape parsers hand back.

MySQL answers SHOW statements with text.  Counters can exceed 2**64 on
long-lived servers (``Innodb_*`` after wrap-around arithmetic, some MariaDB
counters), so integers stay Python ints: exact, unbounded.  Booleans are printed
in several spellings (ON/OFF for variables, Yes/No for replication threads,
TRUE/FALSE in some plugins); all become 1/0 so they can be exported as numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from .types import Labels, Value

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
# Plain decimals and exponent forms; "inf"/"nan" deliberately stay strings.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][+-]?[0-9]+)?", re.ASCII)
_TRUE = frozenset({"on", "yes", "true"})
_FALSE = frozenset({"off", "no", "false"})


def text_of(value: object) -> str | None:
    """The value as text (bytes decoded as UTF-8, bad bytes replaced); None stays None."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def typed(value: object) -> Value:
    """Turn one printed server value into int, float, str or None (NULL).

    Accepts what pymysql returns too (int, float, Decimal, datetime): numbers
    pass through, anything else is kept as its text.  Never raises.
    """
    if type(value) is str:
        text = value  # what pymysql returns for SHOW rows: skip the type checks below
    elif value is None:
        return None
    elif isinstance(value, bool):
        return int(value)
    elif isinstance(value, (int, float)):
        return value
    else:
        text = text_of(str(value) if isinstance(value, Decimal) else value)
    assert text is not None
    if text.isdigit() and text.isascii():  # most status values: skip the regexes
        try:
            return int(text)
        except ValueError:  # more digits than int() accepts (sys.get_int_max_str_digits)
            return text
    if text == "NULL":  # how the mysql client prints SQL NULL
        return None
    candidate = text.strip()
    if _INTEGER.fullmatch(candidate):
        try:
            return int(candidate)
        except ValueError:  # more digits than int() accepts (sys.get_int_max_str_digits)
            return text
    if _DECIMAL.fullmatch(candidate):
        number = float(candidate)
        # An overflowing exponent ("1e999") is not a measurement: keep the text.
        return number if number not in (float("inf"), float("-inf")) else text
    folded = candidate.lower()
    if folded in _TRUE:
        return 1
    if folded in _FALSE:
        return 0
    return text


def typed_int(value: object) -> int | None:
    """typed() when the result is an integer (or an integral float), else None."""
    result = typed(value)
    if isinstance(result, int):
        return result
    if isinstance(result, float) and result.is_integer():
        return int(result)
    return None


@dataclass
class CatalogValues:
    """What a parser hands to the collection layer: values keyed by catalog name.

    ``values`` holds scalars, ``series`` labelled values (the Snapshot shape).
    A name missing from both is *absent*; a value of None is an explicit NULL.
    """

    values: dict[str, Value] = field(default_factory=dict)
    series: dict[str, dict[Labels, Value]] = field(default_factory=dict)

    def add_series(self, name: str, labels: Labels, value: Value) -> None:
        self.series.setdefault(name, {})[labels] = value

    def apply_to(self, snapshot) -> None:
        """Copy into an mysql_snmp.agents.snapshot.Snapshot (or anything with update/add_series)."""
        snapshot.update(self.values)
        for name, points in self.series.items():
            for labels, value in points.items():
                snapshot.add_series(name, labels, value)
