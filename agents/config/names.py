"""Telling a user which name they meant: one line naming what was not understood, the nearest
valid name (difflib) and, for short lists, every valid one."""

from __future__ import annotations

from typing import Iterable


def did_you_mean(word: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` for the closest of ``known``, or "" when none is close."""
    import difflib  # only for this message: a running agent never needs it

    known = list(known)
    # A name cut short (min_rate for min_rate_bytes_per_hour) is further from it than difflib allows.
    extended = [name for name in known if len(word) >= 3 and name.startswith(word)]
    close = extended if len(extended) == 1 else difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_names_message(what: str, unknown: Iterable[str], known: Iterable[str]) -> str:
    """``unknown source(s) a (did you mean b?); known: b, c``: one line for a list option."""
    known = list(known)
    words = ", ".join(f"{name}{did_you_mean(name, known)}" for name in unknown)
    return f"unknown {what}(s) {words}; known: {', '.join(known)}"
