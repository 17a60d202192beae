"""The one scrubber: text that came from an exception leaves the process without any configured secret.

Every password the agent is given (each ``password`` of every option-file group it reads, the
``MYSQLD_EXPORTER_PASSWORD`` variable, the DSN's) is remembered here, and every path that turns an
exception into text a person or a client can see runs it through ``redact``: the error a source
records (served as ``myAgentLastError`` and ``mysql_exporter_*`` messages, printed by ``collect``),
and, through ``agents/bounds/log_lines.py``, every log record with its traceback.  A library that puts
its argument in its message (pymysql's ``UnicodeEncodeError`` carried the password as
``exc.args[1]``) then shows ``<password>`` instead.

A secret is removed in each form a message may carry it: as given, as Python's ``repr`` escapes it
(``'caf\\xe9'``) and as the repr of its UTF-8 and Latin-1 bytes.
"""

from __future__ import annotations

import threading

MASK = "<password>"

_lock = threading.Lock()
_secrets: set[str] = set()
_forms: tuple[str, ...] = ()  # every form of every secret, longest first


def _forms_of(secret: str) -> set[str]:
    forms = {secret, repr(secret)[1:-1], repr(secret.encode("utf-8"))[2:-1]}
    try:
        forms.add(repr(secret.encode("latin-1"))[2:-1])
    except UnicodeEncodeError:
        pass
    return {form for form in forms if form}


def remember_secret(secret: str | bytes | None) -> None:
    """From now on ``redact`` removes ``secret``."""
    if isinstance(secret, bytes):
        secret = secret.decode("utf-8", "surrogateescape")
    if not secret or secret in _secrets:
        return
    global _forms
    with _lock:
        _secrets.add(secret)
        forms = {form for known in _secrets for form in _forms_of(known)}
        _forms = tuple(sorted(forms, key=len, reverse=True))


def redact(text: str) -> str:
    for form in _forms:
        if form in text:
            text = text.replace(form, MASK)
    return text


def exception_text(exc: BaseException) -> str:
    """``str(exc)`` without secrets; for an encoding error, not even a character of its input."""
    if isinstance(exc, UnicodeError):
        # Its message quotes the offending character and its position in the input: a password's.
        encoding = getattr(exc, "encoding", "") or "the expected encoding"
        return f"a setting cannot be converted to {encoding}"
    return redact(str(exc))


def describe_exception(exc: BaseException) -> str:
    """``Type: text`` of an exception no code of ours raised on purpose, without secrets."""
    return f"{type(exc).__name__}: {exception_text(exc)}"


