"""One place that guards what a log record can write, for both agents.

A log message often carries text the server sent (an error, a value that failed to parse, a
version string): a hostile or broken server can make that megabytes long, or put a newline and
a forged ``level=error`` line, or a terminal escape, in it; and an exception's text can carry a
configured password.  Every record made after ``install_log_guards()`` is formatted once, at
creation, with its traceback: every configured secret removed (``agents/config/redact.py``), then its
message's control characters escaped (``\\n`` as ``\\\\n``) and the whole text cut to
``MAX_LOG_RECORD_CHARS``.  Scrubbing comes first, so a cut never leaves part of a password.
"""

from __future__ import annotations

import logging
import re

from ..config.redact import redact

MAX_LOG_RECORD_CHARS = 8192
# C0 controls but tab, DEL, and C1 controls (a terminal takes \x9b as an escape, too).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _escape(match: re.Match) -> str:
    return repr(match.group())[1:-1]


def escape_controls(text: str) -> str:
    return _CONTROL.sub(_escape, text)


def cap_text(text: str, limit: int = MAX_LOG_RECORD_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}... [{cut} more characters cut]"


def guarded_record_text(record: logging.LogRecord) -> str:
    try:
        message = record.getMessage()
    except Exception:  # a logging call with wrong arguments must not fail its caller
        message = f"{record.msg!s} (unformattable arguments)"
    # Scrub the whole text, then cut (escaping 50 MB would cost seconds), escape, and cut what the
    # escapes added.
    text = escape_controls(cap_text(redact(message)))
    if record.exc_info and record.exc_info[1] is not None:
        text = f"{text}\n{redact(logging.Formatter().formatException(record.exc_info))}"
    return cap_text(text)


_base_factory = logging.getLogRecordFactory()


def _make_guarded_record(*args, **kwargs) -> logging.LogRecord:
    # Called only for a record some logger will handle: formatting it here, once, costs nothing
    # a handler would not spend anyway, and no formatter can then write the raw arguments.
    record = _base_factory(*args, **kwargs)
    record.msg, record.args = guarded_record_text(record), None
    record.exc_info, record.exc_text = None, None
    return record


def install_log_guards() -> None:
    """Every log record made from now on is scrubbed, escaped and cut (idempotent)."""
    global _base_factory
    if logging.getLogRecordFactory() is not _make_guarded_record:
        _base_factory = logging.getLogRecordFactory()
        logging.setLogRecordFactory(_make_guarded_record)
