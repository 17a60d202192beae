"""Where to connect and how: my.cnf / flags / env -> ConnectionSettings; one live connection.

``MySQLConnection`` keeps one persistent pymysql connection per target.  It
reconnects with exponential backoff, detects the server flavour and version once
per connection (so sources pick statements that exist on that server instead of
failing by design), bounds every statement in time, and turns pymysql errors into
``QueryError`` with a reason code the collector counts.
"""

from __future__ import annotations

import functools
import getpass
import logging
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from mysql_snmp.agents.mysql_auth import auth_plugin_map
from mysql_snmp.agents.option_file import OptionFileError, read_option_file
from mysql_snmp.agents.redact import describe_exception, exception_text, redact, remember_secret
from mysql_snmp.agents.snapshot import ServerInfo
from mysql_snmp.parsers.columns import FoldedRow

log = logging.getLogger(__name__)

DEFAULT_MY_CNF = Path("~/.my.cnf")
PASSWORD_ENV = "MYSQLD_EXPORTER_PASSWORD"
DEFAULT_PORT = 3306
SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")


class ConfigError(ValueError):
    """A broken connection configuration; the message names the file and key."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class ConnectionSettings:
    host: str | None = None
    port: int = DEFAULT_PORT
    socket: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    ssl_mode: str | None = None  # one of SSL_MODES; None = the client default (no TLS)
    ssl_verify_server_cert: bool = False
    # enable-cleartext-plugin: the server may ask for the password in clear text (TLS only, see
    # agents/mysql_auth.py); server-public-key-path: the RSA key caching_sha2/sha256 full
    # authentication encrypts with, instead of one the server hands over.
    allow_cleartext: bool = False
    server_public_key: bytes | None = field(default=None, repr=False)
    connect_timeout: float = 5.0
    origin: str = "defaults"  # where the settings came from, for error messages

    def __post_init__(self):
        remember_secret(self.password)  # however the settings were made (file, variable, DSN)

    def __repr__(self) -> str:
        password = "<set>" if self.password else "<none>"
        return (
            f"ConnectionSettings(target={self.target!r}, user={self.user!r}, password={password}, "
            f"ssl_mode={self.ssl_mode!r}, origin={self.origin!r})"
        )

    __str__ = __repr__

    @property
    def uses_socket(self) -> bool:
        # As the mysql client: "localhost" (or no host) with a socket means the Unix socket.
        return bool(self.socket) and self.host in (None, "", "localhost")

    @property
    def target(self) -> str:
        if self.uses_socket:
            return f"unix:{self.socket}"
        return f"{self.host or 'localhost'}:{self.port}"

    def pymysql_kwargs(self) -> dict:
        kwargs: dict = {
            "user": self.user if self.user is not None else getpass.getuser(),
            # As libmysqlclient sends it: the option file's bytes (UTF-8); pymysql would encode a
            # str as Latin-1, failing on "€" and sending "é" as a byte the server does not hash.
            "password": (self.password or "").encode("utf-8"),
            "connect_timeout": self.connect_timeout,
            "auth_plugin_map": auth_plugin_map(self.allow_cleartext),
        }
        if self.server_public_key:
            kwargs["server_public_key"] = self.server_public_key
        if self.uses_socket:
            kwargs["unix_socket"] = self.socket
        else:
            kwargs["host"] = self.host or "localhost"
            kwargs["port"] = self.port
        mode = (self.ssl_mode or "").upper()
        if mode == "DISABLED":
            kwargs["ssl_disabled"] = True
            return kwargs
        verify_identity = mode == "VERIFY_IDENTITY" or self.ssl_verify_server_cert
        verify_cert = verify_identity or mode == "VERIFY_CA"
        for key in ("ssl_ca", "ssl_cert", "ssl_key"):
            if getattr(self, key):
                kwargs[key] = getattr(self, key)
        if verify_cert:
            kwargs["ssl_verify_cert"] = True
            kwargs["ssl_verify_identity"] = verify_identity
        elif mode == "REQUIRED" and not any(kwargs.get(k) for k in ("ssl_ca", "ssl_cert", "ssl_key")):
            # TLS without verification: pymysql only starts TLS when given some ssl setting.
            import ssl

            kwargs["ssl"] = {"check_hostname": False, "verify_mode": ssl.CERT_NONE}
        return kwargs


def read_server_public_key(path: str, where: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where} server-public-key-path: {path}: cannot read: {exc.strerror}") from None


def _boolean(value: str | None) -> bool:
    return value is None or value.strip().lower() in ("1", "on", "true", "yes")


def settings_from_my_cnf(path: str | Path, section: str = "client") -> ConnectionSettings:
    """Read one ``[client]`` (or ``[client.<name>]``) section of a my.cnf file and its includes.

    ``[client.<name>]`` inherits every option of ``[client]`` and overrides some
    (mysqld_exporter's auth_module).  Every password the file holds, in any group, is handed
    to the scrubber (agents/redact.py) first.  Raises ConfigError naming the file and key.
    """
    path = Path(path).expanduser()
    try:
        option_file = read_option_file(path)
    except OptionFileError as exc:
        if not (path.exists() or path.is_symlink()):
            raise ConfigError(f"{path}: no such file (give --my-cnf or create it with a [client] section)") from None
        raise ConfigError(str(exc)) from None
    for options in option_file.groups.values():
        remember_secret(options.get("password"))
    section = section.lower()
    options: dict[str, str | None] = dict(option_file.group("client") or {})
    if section != "client":
        if option_file.group(section) is None:
            raise ConfigError(f"{path}: no [{section}] section")
        options.update(option_file.group(section))
    elif option_file.group("client") is None:
        raise ConfigError(f"{path}: no [client] section")
    return _settings_from_options(options, f"{path} [{section}]")


def require_user(settings: ConnectionSettings) -> ConnectionSettings:
    """An option file that names no user is an error, as in mysqld_exporter: the clients would log
    in as the operating-system user (often root) with whatever password the file gives."""
    if not settings.user and settings.origin not in ("defaults", "flags"):
        raise ConfigError(f"{settings.origin}: no user (set user = NAME in that section, "
                          "or give --user / --mysqld.username)")
    return settings


def _settings_from_options(options: Mapping[str, str | None], where: str) -> ConnectionSettings:
    kwargs: dict = {"origin": where}
    for key in ("host", "socket", "user", "password", "ssl_ca", "ssl_cert", "ssl_key"):
        if options.get(key) is not None:
            kwargs[key] = options[key]
    if options.get("port") is not None:
        kwargs["port"] = parse_port(options["port"], f"{where} port")
    if "ssl_mode" in options:
        mode = (options["ssl_mode"] or "").upper()
        if mode not in SSL_MODES:
            raise ConfigError(f"{where} ssl-mode: {options['ssl_mode']!r} is not one of {', '.join(SSL_MODES)}")
        kwargs["ssl_mode"] = mode
    if "ssl_verify_server_cert" in options:
        kwargs["ssl_verify_server_cert"] = _boolean(options["ssl_verify_server_cert"])
    if options.get("server_public_key_path"):
        kwargs["server_public_key"] = read_server_public_key(options["server_public_key_path"], where)
    if "enable_cleartext_plugin" in options:
        kwargs["allow_cleartext"] = _boolean(options["enable_cleartext_plugin"])
    if "skip_ssl" in options and _boolean(options["skip_ssl"]):
        kwargs["ssl_mode"] = "DISABLED"
    if options.get("connect_timeout") is not None:
        kwargs["connect_timeout"] = _connect_timeout(options["connect_timeout"], f"{where} connect-timeout")
    return ConnectionSettings(**kwargs)


# pymysql.connect refuses other values, but only when connecting: checked here so a bad
# file is a configuration error naming the key, not an "unreachable server".
MAX_CONNECT_TIMEOUT = 31536000


def _connect_timeout(value: str, where: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT:  # also false for nan
        raise ConfigError(f"{where}: {value!r} is not a number of seconds in (0, {MAX_CONNECT_TIMEOUT}]")
    return seconds


def parse_port(value: object, where: str) -> int:
    try:
        port = int(str(value).strip())
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise ConfigError(f"{where}: {value!r} is not a TCP port (1-65535)")
    return port


PASSWORD_RULE = (
    f"The password comes only from the option file or the {PASSWORD_ENV} environment variable, "
    "never from a flag (flags show in ps); the file's password wins and the variable is used "
    "when the file gives none, as in mysqld_exporter."
)


def with_env_password(settings: ConnectionSettings, environ: Mapping[str, str]) -> ConnectionSettings:
    """The one password rule of every command: the option file's password wins;
    MYSQLD_EXPORTER_PASSWORD is the password only when the file gives none.

    mysqld_exporter (config/config.go, ReloadConfig) loads "[client] password =
    ${MYSQLD_EXPORTER_PASSWORD}" as a first source that the option file then overrides, and
    [client.NAME] sections inherit it from [client]: the variable is a default, not an override.
    """
    remember_secret(environ.get(PASSWORD_ENV))  # a secret even when the file's password wins
    if not settings.password and environ.get(PASSWORD_ENV):
        return replace(settings, password=environ[PASSWORD_ENV])
    return settings


def resolve_settings(
    my_cnf: str | Path | None = None,
    *,
    section: str = "client",
    host: str | None = None,
    port: int | str | None = None,
    socket: str | None = None,
    user: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ConnectionSettings:
    """my.cnf, then --host/--port/--socket/--user flags, then ``with_env_password``.

    A missing default ~/.my.cnf is fine; a missing file that was asked for is an error.
    """
    environ = os.environ if environ is None else environ
    if my_cnf is not None or DEFAULT_MY_CNF.expanduser().exists():
        settings = settings_from_my_cnf(my_cnf if my_cnf is not None else DEFAULT_MY_CNF, section)
    else:
        settings = ConnectionSettings(host="localhost")
    overrides: dict = {}
    if host:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = parse_port(port, "--port")
    if socket:
        overrides["socket"] = socket
    if user:
        overrides["user"] = user
    return with_env_password(require_user(replace(settings, **overrides)), environ)


# --------------------------------------------------------------------------- server identity


def server_info_from_version(version: str, comment: str = "") -> ServerInfo:
    """``SELECT @@version, @@version_comment`` -> flavour and numeric version.

    MariaDB says so in @@version ("10.11.19-MariaDB-0+deb12u1-log"); Percona Server
    only in @@version_comment ("Percona Server (GPL), Release 33, ...").
    """
    numbers = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    parts = tuple(int(n) for n in numbers.groups()) if numbers else (0, 0, 0)
    if "mariadb" in (version or "").lower():
        flavour = "mariadb"
    elif "percona" in (comment or "").lower() or "percona" in (version or "").lower():
        flavour = "percona"
    else:
        flavour = "mysql"
    return ServerInfo(flavour=flavour, version=parts, version_string=version, version_comment=comment or "")


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

    from mysql_snmp.agents.answer_limits import ReadStopped

    if isinstance(exc, ReadStopped):  # our own bound on the answer (agents/answer_limits.py)
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
        # Every answer is bounded in rows, bytes and time (agents/answer_limits.py); the collector
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
        from mysql_snmp.agents.answer_limits import ReadGuard

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
            from mysql_snmp.agents.tls_on_demand import load_for_secure_login

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


def limited_statement(server: ServerInfo, statement: str, seconds: float | None) -> str | None:
    """``statement`` bounded by the server to ``seconds`` (None: no limit, or none this server takes
    per statement).  MariaDB bounds any statement (SET STATEMENT ... FOR), MySQL 5.7.8+ a SELECT (hint)."""
    if seconds is None:
        return None
    seconds = max(0.001, seconds)
    if server.flavour == "mariadb":
        return f"SET STATEMENT max_statement_time = {seconds:.3f} FOR {statement}" if server.version >= (10, 1, 2) else None
    if server.version >= (5, 7, 8) and statement[:7].upper() == "SELECT ":
        return f"SELECT /*+ MAX_EXECUTION_TIME({max(1, int(seconds * 1000))}) */ {statement[7:]}"
    return None


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
    from mysql_snmp.agents.answer_limits import GuardedConnection

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


# mysqld_exporter's --exporter.log_slow_filter: keep the scrapes' temporary tables and sorts on
# disk out of the slow query log.  The variable exists on MariaDB and Percona Server only.
LOG_SLOW_FILTER = "SET SESSION log_slow_filter = 'tmp_table_on_disk,filesort_on_disk'"


def session_setup_statements(server: ServerInfo, statement_timeout: float, lock_wait_timeout: int,
                             log_slow_filter: bool = False) -> list[str]:
    """Per-session limits so a monitoring statement never hangs or blocks DDL for long."""
    statements = [f"SET SESSION lock_wait_timeout = {int(lock_wait_timeout)}"]
    if log_slow_filter and server.flavour in ("mariadb", "percona"):
        statements.append(LOG_SLOW_FILTER)
    if server.flavour == "mariadb":
        if server.version >= (10, 1, 1):
            statements.append(f"SET SESSION max_statement_time = {statement_timeout:g}")
    elif server.version >= (5, 7, 8):
        statements.append(f"SET SESSION max_execution_time = {int(statement_timeout * 1000)}")
    return statements


# --------------------------------------------------------------------------- command-line flags


def _positive(number: type) -> Callable[[str], float]:
    """An argparse type: ``number(text)`` greater than 0 (timeouts of 0 or less mean nothing here)."""
    import argparse

    def convert(text: str):
        try:
            value = number(text)
        except ValueError:
            value = 0
        if not value > 0:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds greater than 0")
        return value

    convert.__name__ = number.__name__  # argparse names the type in its own messages
    return convert


def add_connection_arguments(parser) -> None:
    """The connection flags every command that talks to MySQL shares (argparse)."""
    group = parser.add_argument_group("connection", f"Where to connect. {PASSWORD_RULE}")
    group.add_argument("--my-cnf", "--config.my-cnf", dest="my_cnf", metavar="FILE",
                       help=f"MySQL option file with a [client] section (default: {DEFAULT_MY_CNF}, if it exists)")
    group.add_argument("--my-cnf-section", default="client", metavar="SECTION",
                       help="section of the file to read; [client.NAME] inherits from [client] (default: client)")
    group.add_argument("--host", help="server host name or address (overrides the file)")
    group.add_argument("--port", help=f"server TCP port (overrides the file; default {DEFAULT_PORT})")
    group.add_argument("--socket", help="server Unix socket, used when the host is localhost (overrides the file)")
    group.add_argument("--user", help="MySQL user (overrides the file)")
    group.add_argument("--statement-timeout", type=_positive(float), default=5.0, metavar="SECONDS",
                       help="limit for each statement (default: 5). The server aborts it (MariaDB max_statement_time, "
                       "MySQL 5.7.8+ max_execution_time, SELECTs only); otherwise the connection is "
                       "dropped one second later")
    group.add_argument("--lock-wait-timeout", "--exporter.lock_wait_timeout", dest="lock_wait_timeout", type=_positive(int),
                       default=1, metavar="SECONDS",
                       help="session lock_wait_timeout, so monitoring never queues behind DDL for long (default: 1)")


def settings_from_args(args) -> ConnectionSettings:
    return resolve_settings(
        args.my_cnf, section=args.my_cnf_section, host=args.host, port=args.port, socket=args.socket, user=args.user
    )
