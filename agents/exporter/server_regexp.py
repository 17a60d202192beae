"""Checking, at start, a regular expression the server will run (``FILE_NAME REGEXP ...``).

The server's engine decides (PCRE2 on MariaDB, ICU on MySQL 8), and both know escapes and
groups Python's ``re`` does not (``\\p{L}``, ``(?<name>...)``, ``\\Q...\\E``, inline flags
anywhere).  So only the mistakes every engine rejects fail the start; anything else is left to
the server, whose error then fails that collector's scrapes with the reason.
"""

from __future__ import annotations

import re
import warnings

# Python's messages for structural errors, which PCRE2, ICU and Henry Spencer's engine
# (MySQL 5.7) reject as well.
_ERRORS_EVERYWHERE = ("missing ), unterminated subpattern", "unbalanced parenthesis", "unterminated character set",
                      "nothing to repeat", "bad character range", "min repeat greater than max repeat")


def regexp_problem(pattern: str) -> str | None:
    """Why no server would accept ``pattern`` as a regular expression, or None."""
    try:
        with warnings.catch_warnings():  # POSIX classes such as [[:alpha:]] are "possible nested sets" to Python
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except re.error as exc:
        if exc.msg.startswith(_ERRORS_EVERYWHERE):
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            return f"{exc.msg}{where}"
    return None
