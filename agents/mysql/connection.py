"""One live connection per target, bounded in time, that says why a statement failed.

``MySQLConnection`` keeps one persistent pymysql connection per target.  It
reconnects with exponential backoff, detects the server flavour and version once
per connection (so sources pick statements that exist on that server instead of
failing by design), bounds every statement in time, and turns pymysql errors into
``QueryError`` with a reason code the collector counts.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

from ..config.settings import ConnectionSettings
from .errors import (
    CONNECTION_ERRORS,
    MySQLUnavailable,
    QueryError,
    classify_error,
)
from .server_version import (
    limited_statement,
    server_info_from_version,
    session_setup_statements,
)
from ..snapshot import ServerInfo
from mysql_snmp.parsers.columns import FoldedRow

# The published logger name: log filters and tests name it, and the module that logs
# moved when connection.py was split by job.
log = logging.getLogger("mysql_snmp.agents.connection")


# --------------------------------------------------------------------------- connection


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: list[tuple]

    def dicts(self, lowercase: bool = False) -> list[dict]:
        """Rows as dicts keyed by column name (as printed, or lowercased: then FoldedRows, which the
        parsers take as they are, unless two columns fold to one name)."""
        if not lowercase:
            return [dict(zip(self.columns, row)) for row in self.rows]
        columns = tuple(c.lower() for c in self.columns)
        row_type = FoldedRow if len(set(columns)) == len(columns) else dict
        return [row_type(zip(columns, row)) for row in self.rows]


@dataclass
class _PipelinedAnswer:
    """What the server answered to one statement of a pipelined batch."""

    result: QueryResult | None = None
    error: QueryError | None = None


class MySQLConnection:
    """One persistent connection to one server.

    Not thread-safe: the collector runs one collection at a time on it.
    ``statements`` counts every statement sent (including session setup), so a
    caller can tell how many statements one collection cost.

    ``pipeline()`` sends several statements in one round trip (a multi-statement
    query) and returns: the server works on the answers while this process does
    what needs none (``batch_unread``) and reads the previous ones, which takes a
    quarter off a collection.  ``query()`` then answers those statements from what
    came back, each exactly as if it had been sent alone, errors included.
    """

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        statement_timeout: float = 5.0,
        lock_wait_timeout: int = 1,
        log_slow_filter: bool = False,
        backoff_initial: float = 0.5,
        backoff_max: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        connector: Callable | None = None,
    ):
        self.settings = settings
        # Every answer is bounded in rows, bytes and time (agents/mysql/answer_limits.py); the collector
        # sets ``read_deadline`` to stop reading a statement still answering after its deadline.
        self.read_deadline: float | None = None
        self._guard = None
        self._aborted = False
        self.statement_timeout = statement_timeout
        self.lock_wait_timeout = lock_wait_timeout
        self.log_slow_filter = log_slow_filter
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._clock = clock
        self._connector = connector
        self._conn = None
        self.server: ServerInfo | None = None
        self.statements = 0
        self.failed_statements = 0
        self._answers: dict[str, _PipelinedAnswer] = {}
        self._pending: deque[str] = deque()  # statements of the batch in flight not read yet
        self._batch_cursor = None
        self._batch_unread = False  # the batch is sent, its first answer not read yet
        # Multi-statement queries need a flag at connect time: only pymysql's own connect
        # gets it (an injected connector is a test double that answers one statement at a time).
        self.can_pipeline = connector is None
        self._failures = 0
        self._next_attempt = 0.0
        self._ever_connected = False
        # Sessions opened so far: a new session sees grants given since the last one.
        self.sessions = 0
        self.last_error: str | None = None
        # Seconds the next statements sent alone (not pipelined) may run, when shorter than the
        # session's statement_timeout: a collector's per-source budget (None: the session limit).
        self.statement_limit: float | None = None

    @property
    def connected(self) -> bool:
        return self._conn is not None

    @property
    def thread_id(self) -> int | None:
        """The server's id for this connection (CONNECTION_ID()), from the handshake."""
        # Read once: the exporter asks from its scrape thread (to KILL QUERY a late statement)
        # while the collecting thread may drop the connection.
        conn = self._conn
        return conn.thread_id() if conn is not None else None

    def _connect_raw(self):
        from .answer_limits import ReadGuard

        connector = self._connector
        if connector is None:
            if self._guard is None:
                self._guard = ReadGuard()
            connector = functools.partial(_shared_context_connection(), read_guard=self._guard)
        # The handshake and login are bounded too: a server may stream its greeting.
        self._start_reading(self.settings.connect_timeout + self.statement_timeout + 1.0)
        # read_timeout is the backstop when the server-side statement limit does not
        # apply (MySQL limits only SELECT); it drops the connection, so give the
        # server's own limit a head start.
        extra = {}
        if self.can_pipeline:
            from pymysql.constants import CLIENT

            extra["client_flag"] = CLIENT.MULTI_STATEMENTS
        def connect():
            return connector(
                **self.settings.pymysql_kwargs(),
                **extra,
                autocommit=True,
                read_timeout=self.statement_timeout + 1.0,
                write_timeout=self.statement_timeout + 1.0,
                charset="utf8mb4",
            )

        try:
            return connect()
        except RuntimeError as exc:
            from .tls_on_demand import load_for_secure_login

            # Only an exporter holds OpenSSL back (on its own host TLS protects nothing), but this
            # login must be encrypted: by cryptography's RSA, or over the TLS pymysql then prefers.
            if not load_for_secure_login(exc, self.settings):
                raise
            log.info("%s: the login needs a secure channel or RSA; loaded OpenSSL, retrying", self.settings.target)
            return connect()

    def ensure_connected(self) -> ServerInfo:
        if self._conn is not None and self.server is not None:
            return self.server
        if self._aborted:
            raise MySQLUnavailable(f"{self.settings.target}: not connecting: the agent is shutting down")
        now = self._clock()
        if now < self._next_attempt:
            raise MySQLUnavailable(
                f"{self.settings.target} unreachable ({self.last_error}); "
                f"next attempt in {self._next_attempt - now:.1f}s"
            )
        try:
            self._conn = self._connect_raw()
            version, comment = self._run("SELECT @@version, @@version_comment").rows[0]
            self.server = server_info_from_version(str(version), str(comment or ""))
            for statement in session_setup_statements(self.server, self.statement_timeout, self.lock_wait_timeout,
                                                      self.log_slow_filter):
                self._run(statement)
        except Exception as exc:  # pymysql raises several unrelated classes on connect
            self._drop()
            self._failures += 1
            delay = min(self.backoff_max, self.backoff_initial * 2 ** (self._failures - 1))
            self._next_attempt = self._clock() + delay
            error = exc if isinstance(exc, QueryError) else classify_error(exc)
            self.last_error = str(error)
            if self._failures == 1:
                # Once per outage, the first one at start-up included (the recovery is logged too).
                verb = "reconnect" if self._ever_connected else "connect"
                log.warning("cannot %s to %s: %s (retrying with backoff)", verb, self.settings.target, error)
            if error.reason == "privilege":  # e.g. 1045 bad password: not a server outage
                raise QueryError(f"{self.settings.target}: {error}", reason="privilege", code=error.code) from None
            raise MySQLUnavailable(f"{self.settings.target}: {error}", code=error.code) from None
        if self._failures:
            log.warning("%s to %s after %d failed attempt(s)",
                        "reconnected" if self._ever_connected else "connected", self.settings.target, self._failures)
        self._ever_connected = True
        self.sessions += 1
        self._failures = 0
        self._next_attempt = 0.0
        self.last_error = None
        log.debug("connected to %s: %s %s", self.settings.target, self.server.flavour, self.server.version_string)
        return self.server

    def _run(self, statement: str, sent: str | None = None) -> QueryResult:
        """Run ``statement`` (as ``sent``, when that is a rewritten form of it)."""
        self.statements += 1
        self._start_reading()
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(sent or statement)
                columns = tuple(d[0] for d in cursor.description or ())
                rows = list(cursor.fetchall())
        except Exception as exc:
            self.failed_statements += 1
            raise self._failure(exc, statement) from None
        return QueryResult(columns, rows)

    def _failure(self, exc: BaseException, statement: str) -> QueryError:
        error = classify_error(exc, statement)
        if self._aborted:
            error = MySQLUnavailable(f"{self.settings.target}: stopped reading: the agent is shutting down")
        if isinstance(error, MySQLUnavailable) or error.code in CONNECTION_ERRORS or self._unusable_after(exc):
            self._drop()  # a timed-out read (2013) closed the socket too; the next query reconnects
        return error

    def query(self, statement: str) -> QueryResult:
        # Answers arrive in the order the statements were sent; a statement not in the batch
        # waits for the whole batch, since the connection takes nothing else before it is read.
        while self._pending and statement not in self._answers:
            self._read_pipelined()
        answer = self._answers.pop(statement, None)
        if answer is not None:
            self.statements += 1
            if answer.error is not None:
                self.failed_statements += 1
                if isinstance(answer.error, MySQLUnavailable):
                    self.last_error = str(answer.error)
                raise answer.error
            return answer.result
        server = self.ensure_connected()
        try:
            return self._run(statement, limited_statement(server, statement, self.statement_limit))
        except MySQLUnavailable as exc:
            self.last_error = str(exc)
            raise

    def pipeline(self, statements: Sequence[str]) -> None:
        """Send ``statements`` in one round trip; each ``query()`` of one then reads its answer.

        The server runs them back to back and queues the answers, so it works on the
        next one while this process reads the previous one.  Answers are read in order,
        when asked for: a statement that hangs costs only the sources that wait for it.
        The answers are read by the first query() for one of them: until then the server
        works and this process is free (``batch_unread``).
        A failing statement ends the batch on the server (MySQL runs nothing after it):
        its error is kept for its own query(), and the statements after it are sent one
        by one when asked, as if never pipelined.  ``discard_pipelined()`` reads and
        drops what nobody asked for.  Fewer than two statements, or a connection without
        multi-statement support, pipeline nothing.
        """
        self.discard_pipelined()
        unique = list(dict.fromkeys(statements))
        if len(unique) < 2 or not self.can_pipeline or self._conn is None:
            return
        self._pending.extend(unique)
        self._batch_cursor = self._conn.cursor()
        try:
            self._conn.send_query(self._batch_cursor, ";\n".join(unique))
        except Exception as exc:  # the connection broke: the first statement carries the error
            self._answers[unique[0]] = _PipelinedAnswer(error=self._failure(exc, unique[0]))
            self._end_batch()
            return
        self._batch_unread = True

    @property
    def batch_unread(self) -> bool:
        """A pipelined batch is sent and none of its answers read: the server is at work."""
        return self._batch_unread

    def _read_pipelined(self) -> None:
        """Read the answer to the next statement of the batch in flight."""
        statement = self._pending.popleft()
        cursor = self._batch_cursor
        self._start_reading()
        try:
            if self._batch_unread:
                self._batch_unread = False
                self._conn.read_first_answer(cursor)
            elif not cursor.nextset():
                raise QueryError("the server sent fewer answers than statements", reason="error",
                                 statement=statement)
            columns = tuple(d[0] for d in cursor.description or ())
            answer = _PipelinedAnswer(QueryResult(columns, list(cursor.fetchall())))
        except QueryError as exc:
            answer = _PipelinedAnswer(error=exc)
        except Exception as exc:
            answer = _PipelinedAnswer(error=self._failure(exc, statement))
        self._answers[statement] = answer
        if answer.error is not None or not self._pending:
            self._end_batch()

    def _finish_batch(self) -> None:
        while self._pending:
            self._read_pipelined()

    def _end_batch(self) -> None:
        """No more answers to read: statements still pending were not run by the server."""
        self._pending.clear()
        self._batch_unread = False
        cursor, self._batch_cursor = self._batch_cursor, None
        if cursor is None or self._conn is None:
            return
        self._start_reading()
        try:
            cursor.close()  # reads whatever is still on the wire
        except Exception as exc:  # broken while draining: the next statement reconnects
            log.debug("%s: dropping the connection after a pipelined batch: %s", self.settings.target, exc)
            self._drop()

    def discard_pipelined(self) -> None:
        """Read the rest of the batch and forget the answers nobody asked for (they count as sent)."""
        self._finish_batch()
        self.statements += len(self._answers)
        self.failed_statements += sum(1 for answer in self._answers.values() if answer.error is not None)
        self._answers.clear()
        # pymysql keeps the last result's rows on the connection until the next statement: the
        # parsed values are all a collection needs of them once it is done.
        release = getattr(self._conn, "release_result", None)
        if release is not None:
            release()

    def _start_reading(self, seconds: float | None = None) -> None:
        """A fresh budget for the next answer: it must end within ``seconds`` (default: the
        statement timeout and the read timeout's second) and by ``read_deadline``."""
        if self._guard is None:
            return
        deadline = time.monotonic() + (self.statement_timeout + 1.0 if seconds is None else seconds)
        if self.read_deadline is not None:
            deadline = min(deadline, self.read_deadline)
        self._guard.start(deadline)

    def _unusable_after(self, exc: BaseException) -> bool:
        """Whether the connection is lost to a failure that was not the server's answer: a read cut
        off (pymysql closed the socket) or a value that failed to convert midway through a result
        (the rest of it is still on the wire)."""
        import pymysql

        conn = self._conn
        return not isinstance(exc, pymysql.err.MySQLError) or (conn is not None and getattr(conn, "_sock", True) is None)

    def abort(self) -> None:
        """From another thread (SIGTERM): stop the read in progress and connect no more."""
        self._aborted = True
        if self._guard is not None:
            self._guard.abort()

    def _drop(self) -> None:
        conn, self._conn, self.server = self._conn, None, None
        self._pending.clear()  # a batch in flight died with the connection
        self._batch_cursor = None
        self._batch_unread = False
        if conn is not None:
            try:
                conn.close()
            except Exception:  # already broken
                pass

    def close(self) -> None:
        self.discard_pipelined()
        self._drop()


# TLS contexts by their options: pymysql builds one per connection, and with no TLS option at all
# (it then prefers TLS when the server offers it), which loads the system's CA store: ~20 ms of CPU
# at each connect, the most of a /probe of a server off the exporter's host.
_ssl_contexts: dict[tuple, object] = {}
_ssl_contexts_lock = threading.Lock()
MAX_SSL_CONTEXTS = 16


def _ssl_context_key(options: dict) -> tuple:
    """The options, and the files they name as they are now (a renewed certificate is read again)."""
    files = []
    for name in ("ca", "capath", "cert", "key"):
        path = options.get(name)
        if path:
            try:
                info = os.stat(path)
                files.append((name, info.st_ino, info.st_mtime_ns, info.st_size))
            except OSError:
                files.append((name, None))
    return tuple(sorted((key, repr(value)) for key, value in options.items())), tuple(files)


@functools.cache
def _shared_context_connection():
    """The guarded connection class, sharing one TLS context among connections with the same options."""
    from .answer_limits import GuardedConnection

    class SharedContextConnection(GuardedConnection):
        def _create_ssl_ctx(self, options):
            if not isinstance(options, dict):
                return super()._create_ssl_ctx(options)
            key = _ssl_context_key(options)
            with _ssl_contexts_lock:
                context = _ssl_contexts.get(key)
            if context is None:
                context = super()._create_ssl_ctx(options)
                with _ssl_contexts_lock:
                    if len(_ssl_contexts) >= MAX_SSL_CONTEXTS:
                        _ssl_contexts.clear()
                    _ssl_contexts[key] = context
            return context

    return SharedContextConnection
