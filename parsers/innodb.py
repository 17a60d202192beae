"""Parser of SHOW ENGINE INNODB STATUS (MySQL 5.0 to 9.x, Percona Server/XtraDB, MariaDB 10/11).

One pass over the lines. A real section header is a known title between two lines of dashes
("------------\\nTRANSACTIONS\\n------------"); each section's lines go to its handler in
parsers/innodb_sections.py. Values are keyed by catalog name (see /work/handoff/catalog-innodb.yaml):
``innodb_<section>_<field>[_<unit>]`` with sections monitor, bg, sem, trx, io, ibuf, ahi, log, mem,
bp (buffer pool totals), pool (per instance), row, deadlock, fk_error, status; no name equals
``innodb_`` + a lowercased SHOW STATUS variable (``innodb_rows_read`` is ``innodb_row_ops_read`` here).
A value the text does not contain is absent, never 0.

Quoted SQL: LATEST DETECTED DEADLOCK and LATEST FOREIGN KEY ERROR print the statements of the
transactions involved, after the "MySQL thread id ..." line, verbatim. A statement can contain
lines that look exactly like a section header or "END OF INNODB MONITOR OUTPUT". Inside those two
sections the quoted statement runs until the server's next own line ("*** ..." in a deadlock,
"Foreign key constraint fails ..." etc. in a FK error); header-shaped lines inside it are ignored.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import innodb_sections as sections
from .innodb_numbers import has_hex_letters, parse_server_timestamp, to_int, trx_id
from .tabular import unescape_batch


@dataclass(frozen=True)
class InnodbStatus:
    """``values``: catalog name -> value (absent when the text lacks it); ``buffer_pools``: pool id
    ("0", "1", ...) -> ``innodb_pool_*`` values of INDIVIDUAL BUFFER POOL INFO; ``sections``: the real
    section titles in printed order; ``truncated``: no END OF INNODB MONITOR OUTPUT line, or the
    server's "... truncated..." marker (MariaDB/MySQL cut the middle of outputs over 1 MB)."""

    values: dict[str, int | float | str]
    buffer_pools: dict[str, dict[str, int | float]]
    sections: tuple[str, ...]
    truncated: bool


# Lines the server itself prints after a quoted statement in a deadlock / FK error block.
_QUOTE_ENDS = (
    "*** ", "Foreign key constraint fails", "Cannot ", "Trying to ", "But in ", "Error in ",
    "See ", "Please refer", "There is no index", "Some other",
)
_THREAD_LINES = ("MySQL thread id ", "MariaDB thread id ")
_END_TITLE = "END OF INNODB MONITOR OUTPUT"
# The server prints at most 3000 bytes of a statement in a deadlock block (600 in a FK error): a
# "quote" running longer than that was a wrong guess (an unknown block layout), not a statement.
_MAX_QUOTE_CHARS = 3100
# A text that ends inside a "quote" after skipping an END OF INNODB MONITOR OUTPUT frame is either
# complete (the guess was wrong) or cut right after a fake END; past this length, assume the former.
_MAX_QUOTE_CHARS_AT_END = 1024
_ROW_HEADER = "*************************** "
_AVERAGES = "Per second averages calculated from the last "
_QUOTING_SECTIONS = (sections.DEADLOCK, sections.FK_ERROR)

# Published only when at least one contributing line was seen (sums over lines)
_SUMMED = (
    "innodb_sem_spin_waits", "innodb_sem_spin_rounds", "innodb_sem_os_waits",
    "innodb_ahi_partitions", "innodb_ahi_hash_table_size_cells", "innodb_ahi_used_cells",
    "innodb_ahi_node_heap_buffers",
)
# Counted over the transaction list: 0 is a real answer once the list was printed.
_TRX_LIST_COUNTS = (
    "innodb_trx_current", "innodb_trx_active", "innodb_trx_lock_wait", "innodb_trx_read_views",
    "innodb_trx_lock_structs", "innodb_trx_row_locks", "innodb_trx_undo_log_entries",
    "innodb_trx_tables_in_use", "innodb_trx_tables_locked",
)


def _is_dashes(line: str) -> bool:
    return len(line) >= 3 and line[0] == "-" and line.strip("-") == ""


def _status_lines(text: str) -> list[str]:
    # ``mysql -e 'SHOW ENGINE INNODB STATUS'`` without ``-r`` prints the whole Status value on one
    # line, newlines and tabs escaped.
    if text.count("\n") < 4 and "INNODB MONITOR OUTPUT\\n" in text:
        text = unescape_batch(text)
    lines = text.splitlines()
    # A text not ending in a newline may end inside a line ("Trx id counter 12" of "...12345"):
    # drop that partial line rather than read a wrong number from it.
    if lines and text[-1:] not in ("\n", "\r"):
        lines.pop()
    # mysql client "\G" form: "*** 1. row ***", "  Type: InnoDB", "  Name: ", "Status: <first line>"
    for index, line in enumerate(lines[:6]):
        if line.startswith(_ROW_HEADER):
            for offset in range(index + 1, min(index + 5, len(lines))):
                if lines[offset].startswith("Status:"):
                    first = lines[offset][len("Status:"):].strip()
                    rest = lines[offset + 1:]
                    return ([first] if first else []) + rest
            break
    return lines


class _Parser:
    __slots__ = ("lines", "state", "sections", "section", "handler", "quoting", "quote_candidate",
                 "quoted_chars", "skipped_end", "ended", "cut_marker", "old_timestamps", "header_seen")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.state = sections.ScanState()
        self.sections: list[str] = []
        self.section = ""
        self.handler = None
        self.quoting = False
        self.quote_candidate = -1  # index of the first header-shaped line skipped while quoting
        self.quoted_chars = 0
        self.skipped_end = False  # an END OF INNODB MONITOR OUTPUT frame was skipped as quoted text
        self.ended = False
        self.cut_marker = False
        self.old_timestamps = False  # header printed as "yymmdd hh:mm:ss": a pre-5.6 server
        self.header_seen = False

    def run(self) -> None:
        lines = self.lines
        count = len(lines)
        index = 0
        allow_quoting = True
        while True:
            index = self._scan(index, count, allow_quoting)
            if index < 0:
                if not (self.quoting and self.skipped_end and self.quoted_chars > _MAX_QUOTE_CHARS_AT_END):
                    return
                index = self.quote_candidate
            # What was taken for a quoted statement was not one (see _MAX_QUOTE_CHARS*): parse again
            # from the first header it skipped, without quoting. A text merely cut inside a real
            # statement is not re-parsed, so a fake header in it never yields values.
            allow_quoting = False
            self.skipped_end = False
            self.quoting = False
            self.quote_candidate = -1

    def _scan(self, index: int, count: int, allow_quoting: bool) -> int:
        """Parse lines from ``index``; return -1 when done, or the index to restart from without quoting."""
        lines = self.lines
        state = self.state
        handler = self.handler
        quotable = False  # inside a deadlock / FK error block, where statements are quoted verbatim
        while index < count:
            line = lines[index]
            if not line:  # blank lines carry nothing (lock dumps are full of them)
                index += 1
                continue
            first = line[0]
            if first == "-" and index + 1 < count and _is_dashes(line):
                title = lines[index + 1].strip()
                # "END OF ..." needs no closing line: its "====" line may be the unterminated last one
                if title == _END_TITLE or (title in sections.HANDLERS and index + 2 < count
                                           and _is_dashes(lines[index + 2])):
                    if self.quoting:
                        if self.quote_candidate < 0:
                            self.quote_candidate = index
                        if title == _END_TITLE:
                            self.skipped_end = True
                    elif title == _END_TITLE:
                        self.ended = True
                        return -1
                    else:
                        self._enter(title)
                        handler = self.handler
                        quotable = allow_quoting and title in _QUOTING_SECTIONS
                        index += 3
                        continue
            if handler is not None:
                if quotable and self._quote_state(line):
                    return self.quote_candidate
                try:
                    handler(state, line)
                except (ValueError, IndexError, ZeroDivisionError):
                    pass  # a garbled line is skipped; it never stops the parse
            elif not self.header_seen and line.endswith("INNODB MONITOR OUTPUT"):
                self._monitor_header(line)
            elif line.startswith(_AVERAGES):
                number = to_int(line[len(_AVERAGES):].split(None, 1)[0])
                if number is not None:
                    state.values["innodb_monitor_averages_interval_seconds"] = number
            if first == "." and line.startswith("... truncated"):
                self.cut_marker = True
            index += 1
        return -1

    def _quote_state(self, line: str) -> bool:
        """Track quoted statements in a deadlock / FK block; True when the quote guess proved wrong.

        A statement follows the "MySQL thread id ..." line of each transaction printed in the block.
        (The DDL quoted by a FK *definition* error is not tracked: its end has no fixed marker.)
        """
        if self.quoting:
            if line.startswith(_QUOTE_ENDS):
                self.quoting = False
                self.quote_candidate = -1
                return False
            self.quoted_chars += len(line) + 1
            return self.quoted_chars > _MAX_QUOTE_CHARS and self.quote_candidate >= 0
        if line.startswith(_THREAD_LINES):
            self.quoting = True
            self.quoted_chars = 0
        return False

    def _enter(self, title: str) -> None:
        self.sections.append(title)
        self.section = title
        self.handler = sections.HANDLERS[title]
        self.quoting = False
        self.state.section_first_line = True
        self.state.pool = None

    def _monitor_header(self, line: str) -> None:
        self.header_seen = True
        seconds, old_form = parse_server_timestamp(line)
        if seconds is not None:
            self.state.values["innodb_monitor_timestamp_seconds"] = seconds
            self.old_timestamps = old_form

    def result(self) -> InnodbStatus:
        state = self.state
        values = state.values
        sums = state.sums
        for name in _SUMMED:
            if name in sums:
                values[name] = sums[name]
        if "innodb_sem_waiting_threads" in sums:
            values["innodb_sem_waiting_threads"] = sums["innodb_sem_waiting_threads"]
            values["innodb_sem_wait_time_milliseconds"] = sums.get("innodb_sem_wait_time_milliseconds", 0)
        elif sections.TRANSACTIONS in self.sections and "SEMAPHORES" in self.sections:
            # SEMAPHORES was printed in full (TRANSACTIONS follows it) with no waiting thread
            values["innodb_sem_waiting_threads"] = 0
            values["innodb_sem_wait_time_milliseconds"] = 0
        if state.in_trx_list:
            for name in _TRX_LIST_COUNTS:
                values[name] = sums.get(name, 0)
            if "innodb_trx_lock_wait_seconds_max" in sums:
                values["innodb_trx_lock_wait_seconds_max"] = sums["innodb_trx_lock_wait_seconds_max"]
                values["innodb_trx_lock_wait_seconds_sum"] = sums["innodb_trx_lock_wait_seconds_sum"]
            elif self._transaction_list_complete():
                # Every waiting transaction prints "TRX HAS BEEN WAITING": a whole list without
                # one means nothing waits, a real 0 (a list cut short by truncation proves nothing).
                values["innodb_trx_lock_wait_seconds_max"] = 0
                values["innodb_trx_lock_wait_seconds_sum"] = 0
        self._decode_trx_ids()
        self._derive_log()
        self._latest_event_flags()
        truncated = not self.ended or self.cut_marker
        if self.sections or self.header_seen:
            values["innodb_status_truncated"] = int(truncated)
        return InnodbStatus(values=values, buffer_pools=state.pools, sections=tuple(self.sections),
                            truncated=truncated)

    def _transaction_list_complete(self) -> bool:
        """TRANSACTIONS was followed by another section, or the output ended where it should."""
        position = self.sections.index(sections.TRANSACTIONS) if sections.TRANSACTIONS in self.sections else None
        if position is None:
            return False
        return position < len(self.sections) - 1 or (self.ended and not self.cut_marker)

    def _decode_trx_ids(self) -> None:
        raw = self.state.raw_trx
        if not raw:
            return
        # One-token ids are hex on 5.1-plugin/XtraDB/5.5 and decimal on 5.6+. Pre-5.6 signs: the header
        # timestamp form ("090707 13:18:38"), the old master-thread loop line, or hex letters in an id.
        hex_ids = (self.old_timestamps or self.state.pre56_loops
                   or any(has_hex_letters(" ".join(tokens)) for tokens in raw.values()))
        values = self.state.values
        for key, name in (("counter", "innodb_trx_id_counter"), ("purged", "innodb_trx_purged_up_to"),
                          ("undo", "innodb_trx_purge_undo_number")):
            tokens = raw.get(key)
            if tokens:
                number = trx_id(tokens, hex_ids)
                if number is not None:
                    values[name] = number
        if "innodb_trx_id_counter" in values and "innodb_trx_purged_up_to" in values:
            values["innodb_trx_unpurged"] = values["innodb_trx_id_counter"] - values["innodb_trx_purged_up_to"]

    def _derive_log(self) -> None:
        values = self.state.values
        printed_age = values.pop("innodb_log_printed_checkpoint_age", None)
        lsn = values.get("innodb_log_sequence_number_bytes")
        if lsn is None:
            return
        flushed = values.get("innodb_log_flushed_up_to_bytes")
        if flushed is not None:
            values["innodb_log_unflushed_bytes"] = lsn - flushed
        checkpoint = values.get("innodb_log_last_checkpoint_bytes")
        if checkpoint is not None:
            values["innodb_log_checkpoint_age_bytes"] = lsn - checkpoint
        elif printed_age is not None:
            values["innodb_log_checkpoint_age_bytes"] = printed_age

    def _latest_event_flags(self) -> None:
        # TRANSACTIONS always follows the FK error and deadlock blocks: once it is reached, a block
        # that was not printed means no such event since startup.
        values = self.state.values
        reached_transactions = sections.TRANSACTIONS in self.sections
        for title, name in ((sections.DEADLOCK, "innodb_deadlock_present"),
                            (sections.FK_ERROR, "innodb_fk_error_present")):
            if title in self.sections:
                values[name] = 1
            elif reached_transactions:
                values[name] = 0


def parse_innodb_status(text: str) -> InnodbStatus:
    """Parse the Status text of SHOW ENGINE INNODB STATUS: plain, the mysql client's ``\\G`` output, or
    its batch output (one line, escaped newlines)."""
    parser = _Parser(_status_lines(text))
    parser.run()
    return parser.result()
