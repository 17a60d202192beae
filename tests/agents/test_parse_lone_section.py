"""`mysql-snmp parse innodb-status` on one section saved alone (pt-deadlock-logger's block):
parsed for what it holds instead of refused."""

from __future__ import annotations

import json

from mysql_snmp.agents.cli import main
from mysql_snmp.parsers.innodb import parse_innodb_status

LIVE_STATUS = "fixtures/live/mariadb-10.11/show-engine-innodb-status-deadlock-fkerror-lockwait.txt"
PT_DEADLOCK_LOGGER = "fixtures/innodb/percona-toolkit/percona-toolkit-pt-deadlock-logger-bug_1195034.txt"


def parse_cli(capsys, path) -> tuple[int, dict, str]:
    code = main(["parse", "innodb-status", str(path)])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else {}), err


def section(text: str, title: str) -> str:
    """The block of ``title`` as the server framed it, up to the next section's header."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip() == title) - 1
    end = next(i for i in range(start + 3, len(lines) - 1)
               if set(lines[i].strip()) == {"-"} and lines[i + 1].strip().isupper())
    return "".join(lines[start:end])


def test_a_deadlock_block_cut_from_a_real_status_gives_the_same_deadlock_values(capsys, tmp_path, shared_dir):
    full = (shared_dir / LIVE_STATUS).read_text()
    block = section(full, "LATEST DETECTED DEADLOCK")
    assert "TRANSACTIONS\n" not in block and "INNODB MONITOR OUTPUT" not in block
    saved = tmp_path / "deadlock.txt"
    saved.write_text(block)
    code, values, err = parse_cli(capsys, saved)
    assert code == 0, err
    whole = parse_innodb_status(full).values
    deadlock = {k: v for k, v in whole.items() if k.startswith("innodb_deadlock_")}
    assert deadlock and values["innodb_deadlock_present"] == 1
    assert {k: values[k] for k in deadlock} == deadlock
    # Nothing from the sections that were not saved.
    assert not any(k.startswith(("innodb_bp_", "innodb_trx_", "innodb_log_", "innodb_row_")) for k in values)


def test_pt_deadlock_logger_output_is_parsed(capsys, shared_dir):
    code, values, err = parse_cli(capsys, shared_dir / PT_DEADLOCK_LOGGER)
    assert code == 0, err
    assert values["innodb_deadlock_present"] == 1
    assert "innodb_deadlock_latest_timestamp_seconds" in values
