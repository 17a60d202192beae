"""Text from the server, bounded before it is served (agents/bounds/served_text.py), and one cap on log records
for both agents (agents/bounds/log_lines.py)."""

from __future__ import annotations

import logging

from mysql_snmp.agents.bounds import log_lines
from mysql_snmp.agents.bounds.served_text import MAX_LABEL_VALUE_CHARS, MAX_SNMP_STRING_BYTES, label_value, snmp_string


def test_ordinary_values_pass_unchanged():
    for text in ("10.11.6-MariaDB-0+deb12u1-log", "mariadb.org binary distribution", "café", "a\nb", ""):
        assert label_value(text) == text
    assert snmp_string("10.11.6-MariaDB") == b"10.11.6-MariaDB"
    assert snmp_string("café") == "café".encode()


def test_control_characters_are_dropped_and_newline_kept_for_the_escaping():
    assert label_value("red\x1b[31m\tx\x00\x9b") == "red[31mx"
    assert label_value("a\nlevel=error") == "a\nlevel=error"  # the exposition writes it as \n
    assert snmp_string("a\nb\x1b") == b"ab"


def test_long_values_are_cut_and_stay_distinct():
    first, second = "x" * 70_000 + "1", "x" * 70_000 + "2"
    assert len(label_value(first)) == MAX_LABEL_VALUE_CHARS
    assert label_value(first) != label_value(second)
    assert label_value(first).startswith("x" * 1000) and label_value(first)[-9] == "~"
    cut = snmp_string("é" * 1000)
    assert len(cut) <= MAX_SNMP_STRING_BYTES
    cut.decode("utf-8")  # never half a character
    assert snmp_string("é" * 1000) != snmp_string("é" * 1001)


def test_a_huge_log_record_is_cut_and_cannot_forge_a_line(caplog):
    previous = logging.getLogRecordFactory()
    log_lines.install_log_guards()
    try:
        with caplog.at_level(logging.WARNING):
            logging.getLogger("hostile").warning("version %s", "1.0\nlevel=error msg=forged\x1b[2J")
            logging.getLogger("hostile").warning("value %r", "\xff" * 55_000_000)
            try:
                raise ValueError("x" * 100_000)
            except ValueError:
                logging.getLogger("hostile").exception("parse failed")
    finally:
        logging.setLogRecordFactory(previous)
    forged, huge, failure = (record.getMessage() for record in caplog.records[-3:])
    assert forged == "version 1.0\\nlevel=error msg=forged\\x1b[2J"  # one line, no terminal escape
    assert len(huge) < log_lines.MAX_LOG_RECORD_CHARS + 100 and huge.endswith("more characters cut]")
    assert failure.startswith("parse failed\nTraceback") and len(failure) < log_lines.MAX_LOG_RECORD_CHARS + 100
