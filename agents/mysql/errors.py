"""A pymysql error -> ``QueryError`` with the reason a collector counts it under
(privileges, timeout, deadline, unsupported, connection lost)."""

from __future__ import annotations

from ..config.redact import (
    describe_exception,
    exception_text,
    redact,
)

# --------------------------------------------------------------------------- errors

# Server error codes grouped by what the collector does about them.
PRIVILEGE_ERRORS = frozenset({1044, 1045, 1142, 1143, 1227, 1370})
TIMEOUT_ERRORS = frozenset({1205, 1969, 3024})  # lock wait, MariaDB max_statement_time, MySQL max_execution_time
QUERY_INTERRUPTED = 1317  # KILL QUERY (the exporter's own, at a scrape deadline)
# 1286: unknown storage engine (SHOW ENGINE TOKUDB STATUS where TokuDB is not built in).
UNSUPPORTED_ERRORS = frozenset({1064, 1109, 1146, 1193, 1054, 1286})
CONNECTION_ERRORS = frozenset({2002, 2003, 2006, 2013, 2014, 2055, 1053, 1927})


class QueryError(Exception):
    """A statement failed; ``reason`` is one of privilege, timeout, unsupported, connection, error."""

    def __init__(self, message: str, *, reason: str, statement: str | None = None, code: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.statement = statement
        self.code = code


class MySQLUnavailable(QueryError):
    """No connection to the server (refused, lost, or waiting for the next reconnect attempt)."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message, reason="connection", code=code)


def classify_error(exc: BaseException, statement: str | None = None) -> QueryError:
    """A QueryError for what pymysql (or anything under it) raised; its text has passed the scrubber."""
    import pymysql
    from .answer_limits import ReadStopped

    if isinstance(exc, ReadStopped):  # our own bound on the answer (agents/mysql/answer_limits.py)
        return QueryError(redact(str(exc)), reason=exc.reason, statement=statement)

    # pymysql's errors are (code, message); anything else is only its text, never its arguments.
    code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args and isinstance(exc.args[0], int) else None
    text = redact(str(exc.args[1])) if code is not None and len(exc.args) > 1 else exception_text(exc)
    if code in (2002, 2003):  # pymysql's text already says "Can't connect to MySQL server on ..."
        return MySQLUnavailable(text, code=code)
    if code == 2013 and text.endswith("(timed out)"):
        # Our read_timeout fired: the statement outlived the server-side limit (MySQL applies
        # max_execution_time to SELECT only), the server did not go away.  pymysql has closed
        # the socket, so MySQLConnection._run drops the connection.
        return QueryError(f"statement timed out: {text}", reason="timeout", statement=statement, code=code)
    if isinstance(exc, pymysql.err.InterfaceError) or code in CONNECTION_ERRORS:
        return MySQLUnavailable(f"connection lost: {text}", code=code)
    if code in PRIVILEGE_ERRORS:
        reason = "privilege"
    elif code in TIMEOUT_ERRORS:
        reason = "timeout"
    elif code in UNSUPPORTED_ERRORS:
        reason = "unsupported"
    else:
        reason = "error"
    # "ERROR 1045: ..." as the mysql client prints it; an error without a server code is its text.
    message = f"ERROR {code}: {text}" if code is not None else describe_exception(exc)
    return QueryError(message, reason=reason, statement=statement, code=code)
