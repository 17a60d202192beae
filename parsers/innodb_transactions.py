"""TRANSACTIONS section of SHOW ENGINE INNODB STATUS: trx id counter, purge, history, and sums over the list."""
from __future__ import annotations

from .innodb_numbers import to_int
from .innodb_scan import ScanState, ints_after, ints_before


def transactions(state: ScanState, line: str) -> None:
    if state.in_trx_list:
        _transaction_list_line(state, line)
        return
    # The scalar lines come before the list; a query quoted in the list may repeat them, so they
    # are only read before "LIST OF TRANSACTIONS" / the first "---TRANSACTION", and only once.
    if line.startswith("Trx id counter "):
        state.raw_trx.setdefault("counter", line[len("Trx id counter "):].split())
    elif line.startswith("Purge done for trx's n:o < "):
        rest = line[len("Purge done for trx's n:o < "):]
        trx_part, _, undo_part = rest.partition(" undo n:o < ")
        undo_part, _, purge_state = undo_part.partition(" state:")
        state.raw_trx.setdefault("purged", trx_part.split())
        state.raw_trx.setdefault("undo", undo_part.split())
        purge_state = purge_state.strip()
        if purge_state and "innodb_trx_purge_state" not in state.values:
            state.values["innodb_trx_purge_state"] = purge_state
    elif line.startswith("History list length "):
        number = to_int(line[len("History list length "):].strip())
        if number is not None:
            state.values.setdefault("innodb_trx_history_list_length", number)
    elif line.startswith("Total number of lock structs in row lock hash table "):
        number = to_int(line.rsplit(None, 1)[-1])
        if number is not None:
            state.values.setdefault("innodb_trx_lock_hash_structs", number)
    elif line.startswith("LIST OF TRANSACTIONS FOR EACH SESSION"):
        state.in_trx_list = True
    elif line.startswith("---TRANSACTION"):
        # "LIST OF TRANSACTIONS" can be lost when the server truncates the middle of the output
        state.in_trx_list = True
        _transaction_list_line(state, line)


def _transaction_list_line(state: ScanState, line: str) -> None:
    first = line[:1]
    if first == "-":
        if line.startswith("---TRANSACTION"):
            state.add("innodb_trx_current", 1)
            if "ACTIVE" in line:
                state.add("innodb_trx_active", 1)
        elif line.startswith("------- TRX HAS BEEN WAITING "):
            # "... WAITING 32 SEC FOR THIS LOCK" (MySQL) or "... WAITING 4007707 us FOR" (MariaDB 10.6+)
            words = line[len("------- TRX HAS BEEN WAITING "):].split(None, 2)
            if len(words) >= 2:
                number = to_int(words[0])
                if number is not None:
                    seconds = number / 1_000_000 if words[1] == "us" else number
                    state.add("innodb_trx_lock_wait_seconds_sum", seconds)
                    if seconds >= state.sums.get("innodb_trx_lock_wait_seconds_max", -1):
                        state.sums["innodb_trx_lock_wait_seconds_max"] = seconds
    elif first.isdigit() or line.startswith("LOCK WAIT "):
        if " lock struct(s)" not in line:
            return
        # "LOCK WAIT 2 lock struct(s), heap size 368, 1 row lock(s), undo log entries 5"
        waiting = line.startswith("LOCK WAIT ")
        body = line[len("LOCK WAIT "):] if waiting else line
        structs, row_locks = ints_before(body, (" lock struct(s)", " row lock(s)"))
        if structs is None:
            return
        if waiting:
            state.add("innodb_trx_lock_wait", 1)
        state.add("innodb_trx_lock_structs", structs)
        if row_locks is not None:
            state.add("innodb_trx_row_locks", row_locks)
        if "undo log entries " in body:
            undo = to_int(body.rsplit(None, 1)[-1])
            if undo is not None:
                state.add("innodb_trx_undo_log_entries", undo)
    elif first == "m":
        if line.startswith("mysql tables in use "):
            in_use, locked = ints_after(line, ("in use", "locked"))
            if in_use is not None and locked is not None:
                state.add("innodb_trx_tables_in_use", in_use)
                state.add("innodb_trx_tables_locked", locked)
    elif first == "T":
        if line.startswith("Trx read view will not see trx"):
            state.add("innodb_trx_read_views", 1)
