"""SHOW PROCESSLIST / information_schema.PROCESSLIST rows to thread counts.

State labels are normalised so they are stable label values and match the
original mysql-snmp's keys: lowercase, every run of characters other than
a-z/0-9 becomes one underscore ("Waiting for table metadata lock" ->
``waiting_for_table_metadata_lock``), an empty or NULL State is ``none``.

The original (a port of Baron Schwartz's Cacti templates) counted 16 legacy
buckets State_<state> for 14 named states, ``none`` and ``other`` (any state not
named).  Its code meant that normalisation, but as shipped it looked the State
up under a lowercased key that never matched, so with --procs (off by default)
every thread landed in State_none; and it replaced only the first space.  We
count what it intended.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from .types import NamedRow, labels_of
from .columns import MISSING, fold_row, pick
from .values import CatalogValues, text_of, typed_int

LEGACY_STATES = (
    "closing_tables",
    "copying_to_tmp_table",
    "end",
    "freeing_items",
    "init",
    "locked",
    "login",
    "preparing",
    "reading_from_net",
    "sending_data",
    "sorting_result",
    "statistics",
    "updating",
    "writing_to_net",
)
_NOT_LABEL_CHARS = re.compile(r"[^a-z0-9]+")
_STATEMENT_COMMANDS = frozenset({"query", "execute"})


def normalise_state(state: object) -> str:
    text = text_of(state)
    return "none" if text is None else _state_label(text)


@functools.lru_cache(maxsize=1024)  # a server has a few dozen distinct states
def _state_label(text: str) -> str:
    return _NOT_LABEL_CHARS.sub("_", text.lower()).strip("_") or "none"


def legacy_bucket(normalised_state: str) -> str:
    """The original's key for a normalised state: State_<state>, State_none or State_other."""
    if normalised_state == "none" or normalised_state in LEGACY_STATES:
        return f"State_{normalised_state}"
    return "State_other"


@dataclass
class ProcesslistSummary:
    rows: int = 0
    by_state: Counter = field(default_factory=Counter)  # normalised state -> threads
    by_command_state: Counter = field(default_factory=Counter)  # (command, state) -> threads
    seconds_by_command_state: Counter = field(default_factory=Counter)  # (command, state) -> sum of Time
    by_command: Counter = field(default_factory=Counter)
    by_user: Counter = field(default_factory=Counter)
    longest_query_seconds: int = 0

    @property
    def legacy(self) -> dict[str, int]:
        """The 16 State_* counts of the original, every key present."""
        counts = {legacy_bucket(state): 0 for state in LEGACY_STATES + ("none",)}
        counts["State_other"] = 0
        for state, threads in self.by_state.items():
            counts[legacy_bucket(state)] += threads
        return counts


@dataclass(frozen=True)
class _Threads:
    """Threads alike in command, state, user and client host: one row of SHOW PROCESSLIST, or a
    group the server counted (columns Threads, Time summed, Max_time, Threads_from_min_time,
    Time_from_min_time: agents/sources/processlist.py): at 2,000 connections the server's GROUP BY
    costs it less than sending 2,000 rows costs us to read and count."""

    command: str
    state: object  # as printed (None: NULL)
    user: str
    host: str
    count: int
    seconds: int  # their Time summed
    longest: int  # the largest Time among them
    # Threads whose Time is at least the statement's minimum, and their Time summed (grouped rows only).
    count_from_min_time: int | None = None
    seconds_from_min_time: int | None = None


def _threads(rows: Iterable[object], exclude_id: int | None) -> Iterable[_Threads]:
    """The rows as threads; ``exclude_id`` drops one thread (the monitor's own) from per-thread rows
    (grouped rows leave it out on the server)."""
    for index, row in enumerate(rows):
        folded = fold_row(row, f"processlist row {index}")
        if exclude_id is not None and typed_int(_or_none(pick(folded, ("Id",)))) == exclude_id:
            continue
        # Time is NULL for some system threads on MySQL 8; it then adds nothing.
        seconds = typed_int(_or_none(pick(folded, ("Time",)))) or 0
        grouped = pick(folded, ("Threads",))
        common = dict(
            command=text_of(_or_none(pick(folded, ("Command",)))) or "",
            state=_or_none(pick(folded, ("State",))),
            user=text_of(_or_none(pick(folded, ("User",)))) or "",
            host=text_of(_or_none(pick(folded, ("Host",)))) or "",
            seconds=seconds,
        )
        if grouped is MISSING:
            yield _Threads(count=1, longest=seconds, **common)
            continue
        yield _Threads(
            count=typed_int(grouped) or 0,
            longest=typed_int(_or_none(pick(folded, ("Max_time",)))) or 0,
            count_from_min_time=typed_int(_or_none(pick(folded, ("Threads_from_min_time",)))) or 0,
            seconds_from_min_time=typed_int(_or_none(pick(folded, ("Time_from_min_time",)))) or 0,
            **common,
        )


def summarise_processlist(rows: Iterable[object], exclude_id: int | None = None) -> ProcesslistSummary:
    """Counts per state, command, user; ``exclude_id`` drops one thread (the monitor's own)."""
    summary = ProcesslistSummary()
    for threads in _threads(rows, exclude_id):
        state = normalise_state(threads.state)
        command, count = threads.command, threads.count
        summary.rows += count
        summary.by_state[state] += count
        summary.by_command_state[(command, state)] += count
        summary.seconds_by_command_state[(command, state)] += threads.seconds
        summary.by_command[command] += count
        summary.by_user[threads.user] += count
        if command.lower() in _STATEMENT_COMMANDS:
            summary.longest_query_seconds = max(summary.longest_query_seconds, threads.longest)
    return summary


# mysqld_exporter's label rule for command and state: lower case, these characters dropped,
# spaces and dashes to '_', an empty one "unknown" (collector/info_schema_processlist.go).
_UPSTREAM_LABEL_CHARS = str.maketrans({";": "", ",": "", ":": "", ".": "", "(": "", ")": "", " ": "_", "-": "_"})


def upstream_thread_label(text: str | None) -> str:
    return (text or "unknown").lower().translate(_UPSTREAM_LABEL_CHARS)


@dataclass
class UpstreamThreadGroups:
    """Threads grouped as mysqld_exporter's info_schema.processlist groups them."""

    threads: Counter = field(default_factory=Counter)  # (command, state) -> threads
    seconds: Counter = field(default_factory=Counter)  # (command, state) -> sum of Time
    by_host: Counter = field(default_factory=Counter)  # client host without port -> threads
    by_user: Counter = field(default_factory=Counter)


def group_threads_as_upstream(rows: Iterable[object], exclude_id: int | None = None,
                              min_time: int = 0) -> UpstreamThreadGroups:
    """Threads in their state for at least ``min_time`` s, by upstream's labels.  Grouped rows carry
    that count from the server, for the minimum their statement was given: the same ``min_time``."""
    groups = UpstreamThreadGroups()
    for threads in _threads(rows, exclude_id):
        if threads.count_from_min_time is not None:
            count, seconds = threads.count_from_min_time, threads.seconds_from_min_time
        elif threads.seconds >= min_time:
            count, seconds = threads.count, threads.seconds
        else:
            continue
        if not count:
            continue
        key = (upstream_thread_label(threads.command), upstream_thread_label(text_of(threads.state)))
        groups.threads[key] += count
        groups.seconds[key] += seconds
        groups.by_host[threads.host.split(":", 1)[0] or "unknown"] += count
        groups.by_user[threads.user] += count
    return groups


def upstream_processlist_rows(rows: Iterable[object], exclude_id: int | None = None, min_time: int = 0,
                              by_user: bool = True, by_host: bool = True) -> list[NamedRow]:
    """The upstream groups as named values: ``threads`` and ``seconds`` per (command, state),
    ``processes_by_host`` per client host, ``processes_by_user`` per user (each when asked for)."""
    groups = group_threads_as_upstream(rows, exclude_id, min_time)
    named = []
    for (command, state) in sorted(groups.threads):
        labels = (("command", command), ("state", state))
        named.append(NamedRow("threads", groups.threads[(command, state)], labels))
        named.append(NamedRow("seconds", groups.seconds[(command, state)], labels))
    if by_host:
        named.extend(NamedRow("processes_by_host", n, (("client_host", host),))
                     for host, n in sorted(groups.by_host.items()))
    if by_user:
        named.extend(NamedRow("processes_by_user", n, (("mysql_user", user),))
                     for user, n in sorted(groups.by_user.items()))
    return named


def _or_none(value: object) -> object:
    return None if value is MISSING else value


def processlist_values(rows: Iterable[object], exclude_id: int | None = None) -> CatalogValues:
    summary = summarise_processlist(rows, exclude_id)
    reading = CatalogValues(
        values={
            "processlist_rows": summary.rows,
            "processlist_longest_query_seconds": summary.longest_query_seconds,
        }
    )
    for key, threads in summary.legacy.items():
        reading.values["processlist_state_" + key.removeprefix("State_")] = threads
    reading.series["processlist_state_threads"] = {labels_of(state=s): n for s, n in summary.by_state.items()}
    reading.series["processlist_threads"] = {
        labels_of(command=c, state=s): n for (c, s), n in summary.by_command_state.items()
    }
    reading.series["processlist_seconds"] = {
        labels_of(command=c, state=s): n for (c, s), n in summary.seconds_by_command_state.items()
    }
    reading.series["processlist_command_threads"] = {labels_of(command=c): n for c, n in summary.by_command.items()}
    reading.series["processlist_user_threads"] = {labels_of(user=u): n for u, n in summary.by_user.items()}
    return reading
