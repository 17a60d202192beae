"""Number and timestamp forms of SHOW ENGINE INNODB STATUS, shared by the InnoDB parsers.

Pure helpers: every function returns None (never a guessed 0) when the text is not the expected form.
"""
from __future__ import annotations

import calendar

_HEX_LETTERS = frozenset("abcdefABCDEF")


def to_int(token: str) -> int | None:
    """A decimal integer token, tolerating a trailing ',' or ';' (``"45,"``)."""
    token = token.rstrip(",;")
    # isdigit() alone accepts "¹" (int() raises) and "٣" (int() reads 3); the server prints ASCII.
    if token.isascii() and token.isdigit():
        return int(token)
    return None


def to_float(token: str) -> float | None:
    """A decimal number token such as ``0.57`` or ``12``, tolerating trailing punctuation."""
    token = token.rstrip(",;")
    # float() reads "1٢" as 12.0 and "1_000" as 1000.0: neither is a number the server printed.
    if not token.isascii() or "_" in token:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    # float() also accepts "nan", "inf" and "1e5"; the server prints none of these.
    if value != value or token[:1] not in "0123456789-":
        return None
    return value


def two_word(tokens: list[str]) -> int | None:
    """A LSN/position printed either as one decimal token or, before InnoDB 5.1-plugin, as ``hi lo``.

    Two tokens are the high and low 32-bit halves: value = hi * 2**32 + lo.
    """
    if len(tokens) >= 2:
        hi, lo = to_int(tokens[0]), to_int(tokens[1])
        if hi is None or lo is None:
            return None
        return (hi << 32) + lo
    if len(tokens) == 1:
        return to_int(tokens[0])
    return None


def has_hex_letters(token: str) -> bool:
    return not _HEX_LETTERS.isdisjoint(token)


def trx_id(tokens: list[str], hex_ids: bool) -> int | None:
    """A transaction id as printed on `Trx id counter` / `Purge done` lines.

    5.0 and the 5.1 built-in InnoDB print two decimal words (``0 769`` = hi*2**32+lo). The 5.1 plugin,
    XtraDB and 5.5 print one HEXADECIMAL token (``2804F389``, but also ``908``, which is 0x908);
    5.6+ and MariaDB 10 print one decimal token. ``hex_ids`` says which one-token form the server uses.
    """
    if len(tokens) >= 2:
        return two_word(tokens[:2])
    if len(tokens) != 1:
        return None
    token = tokens[0]
    if hex_ids or has_hex_letters(token):
        try:
            return int(token, 16)
        except ValueError:
            return None
    return to_int(token)


def parse_server_timestamp(line: str) -> tuple[int | None, bool]:
    """Unix seconds of the timestamp a line starts with, and whether it is the pre-5.6 form.

    5.6+ / MariaDB 10 print ``2014-10-17 09:51:31``; up to 5.5 ``090707 13:18:38`` (yymmdd, hour
    space-padded: ``100831  8:56:28``), sometimes glued to the text after it (``17:39:24TOO DEEP``).
    The server prints local time without a zone; it is read as UTC here (documented in the catalog).
    Returns (None, False) when the line does not start with a timestamp.
    """
    parts = line.split(None, 2)
    if len(parts) < 2:
        return None, False
    date, clock = parts[0], parts[1][:8]
    old_form = False
    if len(date) == 10 and date[4] == "-" and date[7] == "-":
        year, month, day = to_int(date[:4]), to_int(date[5:7]), to_int(date[8:])
    elif len(date) == 6 and date.isascii() and date.isdigit():
        old_form = True
        yy, month, day = to_int(date[:2]), to_int(date[2:4]), to_int(date[4:])
        year = 2000 + yy if yy < 70 else 1900 + yy
    else:
        return None, False
    clock_parts = clock.split(":")
    if len(clock_parts) != 3:
        return None, False
    hour, minute = to_int(clock_parts[0]), to_int(clock_parts[1])
    second = to_int(clock_parts[2][:2])
    if None in (year, month, day, hour, minute, second):
        return None, False
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None, False
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)), old_form


def bracket_sum(text: str) -> int | None:
    """Sum of a per-thread list such as ``[0, 2, 0, 1]``; None when there is no complete list."""
    start = text.find("[")
    end = text.find("]", start + 1)
    if start < 0 or end < 0:
        return None
    total = 0
    for item in text[start + 1:end].split(","):
        value = to_int(item.strip())
        if value is None:
            return None
        total += value
    return total
