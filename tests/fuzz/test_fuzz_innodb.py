"""Fuzzing parse_innodb_status with texts recombined from the real captures of ../shared: lines of
every server version and section shuffled together, their numbers replaced by any number (huge,
negative, decimal, hex-looking), junk lines in between.  No exception, no hang, and every
verbatim value the parser returns is printed in the text it was given."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.parsers.innodb import parse_innodb_status
from mysql_snmp.parsers.innodb_sections import HANDLERS
from tests.fuzz.budget import fuzz_settings, no_hang
from tests.parsers.test_innodb_properties import AGGREGATES, NOT_VERBATIM, TEXTS

LINES = sorted({line for text in TEXTS.values() for line in text.splitlines() if line.strip()})
NUMBER = re.compile(r"\d+")
REPLACEMENTS = ("0", "00", "-", "", "-1", "18446744073709551615", "99999999999999999999999", "3.14", "1e999",
                "FFFFFFFF", "0x10", "12,345")


def replacement(rng) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return str(rng.randrange(2**70))
    if kind == 1:
        return f"{rng.uniform(0, 1e12):.2f}"
    if kind == 2:
        return format(rng.randrange(2**64), "X")
    return rng.choice(REPLACEMENTS)


def recombined(rng) -> str:
    """Up to 60 corpus lines in any order, some numbers replaced, some junk lines between them."""
    lines = []
    for _ in range(rng.randint(1, 60)):
        if rng.randrange(10) == 0:
            lines.append("".join(chr(rng.randrange(32, 0x250)) for _ in range(rng.randrange(40))))
            continue
        line = rng.choice(LINES)
        lines.append(NUMBER.sub(lambda m: replacement(rng) if rng.randrange(2) else m.group(), line))
    return "\n".join(lines) + "\n"


@pytest.mark.skipif(not LINES, reason="../shared absent: no InnoDB status corpus to take lines from")
@fuzz_settings()
@given(rng=st.randoms(use_true_random=False))
def test_recombined_lines_never_raise_nor_invent_numbers(rng):
    text = recombined(rng)
    with no_hang():
        status = parse_innodb_status(text)
    assert set(status.sections) <= set(HANDLERS)
    tokens = set(NUMBER.findall(text))
    for key, value in status.values.items():
        assert isinstance(value, (int, float, str)), key
        if isinstance(value, float):
            assert value == value and abs(value) != float("inf"), key
        if isinstance(value, int) and key not in AGGREGATES and not NOT_VERBATIM.match(key):
            assert str(abs(value)) in tokens, (key, value)
