"""Property tests: cut or garbled InnoDB status text never raises and never yields invented values."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mysql_snmp.parsers.innodb import parse_innodb_status
from mysql_snmp.parsers.innodb_sections import HANDLERS
from tests.parsers.test_innodb import corpus_files

FILES = [path for path in corpus_files() if path.stat().st_size < 100_000]
TEXTS = {path.name: path.read_text(encoding="utf-8", errors="replace") for path in FILES}
FULL = {name: parse_innodb_status(text) for name, text in TEXTS.items()}

# Sums and counts over many lines: a prefix sees fewer lines, so its value is at most the full one.
AGGREGATES = {
    "innodb_sem_spin_waits", "innodb_sem_spin_rounds", "innodb_sem_os_waits", "innodb_sem_waiting_threads",
    "innodb_sem_wait_time_milliseconds", "innodb_ahi_partitions", "innodb_ahi_hash_table_size_cells",
    "innodb_ahi_used_cells", "innodb_ahi_node_heap_buffers", "innodb_trx_current", "innodb_trx_active",
    "innodb_trx_lock_wait", "innodb_trx_read_views", "innodb_trx_lock_structs", "innodb_trx_row_locks",
    "innodb_trx_undo_log_entries", "innodb_trx_tables_in_use", "innodb_trx_tables_locked",
    "innodb_trx_lock_wait_seconds_max", "innodb_trx_lock_wait_seconds_sum",
}
# Not printed as one decimal token: ids (hex or two words), positions (two words), derived values.
NOT_VERBATIM = re.compile(
    r"innodb_(trx_(id_counter|purged_up_to|purge_undo_number|unpurged)|log_.*_bytes|.*timestamp_seconds"
    r"|.*_present|status_truncated|mem_dictionary_cache_(constant|variable)_bytes|ibuf_ops_merged_all)$")

needs_corpus = pytest.mark.skipif(not FILES, reason="../shared absent: no InnoDB status corpus")


def assert_prefix_consistent(name: str, cut: int) -> None:
    text = TEXTS[name]
    prefix = parse_innodb_status(text[:cut])
    full = FULL[name]
    for key, value in prefix.values.items():
        if key == "innodb_status_truncated":
            continue
        assert key in full.values, (cut, key)
        if key in AGGREGATES:
            assert value <= full.values[key], key
        else:
            assert value == full.values[key], key
    for pool_id, pool in prefix.buffer_pools.items():
        for key, value in pool.items():
            assert full.buffer_pools[pool_id][key] == value


@needs_corpus
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS)), cut=st.floats(min_value=0.0, max_value=1.0))
def test_any_prefix_gives_the_full_values_or_nothing(name, cut):
    assert_prefix_consistent(name, int(len(TEXTS[name]) * cut))


FAKE_HEADERS = "show-engine-innodb-status-deadlock-with-fake-section-headers-in-query.txt"


@pytest.mark.skipif(FAKE_HEADERS not in TEXTS, reason="../shared absent: no InnoDB status corpus")
def test_every_prefix_of_the_fake_header_capture():
    text = TEXTS[FAKE_HEADERS]
    start, end = text.index("LATEST DETECTED DEADLOCK"), text.index("*** WAITING FOR THIS LOCK")
    line_ends = [i + 1 for i, char in enumerate(text) if char == "\n"]
    for cut in sorted(set(range(start, end)) | set(line_ends)):  # every character of the quoted statement
        assert_prefix_consistent(FAKE_HEADERS, cut)


def garble(text: str, data) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(data.draw(st.integers(min_value=1, max_value=8), label="edits")):
        if not lines:
            break
        index = data.draw(st.integers(min_value=0, max_value=len(lines) - 1), label="line")
        action = data.draw(st.sampled_from(["delete", "duplicate", "flip"]), label="action")
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif lines[index]:
            line = lines[index]
            pos = data.draw(st.integers(min_value=0, max_value=len(line) - 1), label="pos")
            byte = data.draw(st.integers(min_value=0, max_value=255), label="byte")
            lines[index] = line[:pos] + chr(byte) + line[pos + 1:]
    return "".join(lines)


@needs_corpus
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS)), data=st.data())
def test_garbled_text_never_raises_nor_invents_numbers(name, data):
    text = garble(TEXTS[name], data)
    status = parse_innodb_status(text)
    assert set(status.sections) <= set(HANDLERS)
    tokens = set(re.findall(r"\d+", text))
    for key, value in status.values.items():
        assert isinstance(value, (int, float, str)), key
        if isinstance(value, int) and key not in AGGREGATES and not NOT_VERBATIM.match(key):
            assert str(value) in tokens, (key, value)  # the number is printed somewhere in the text


@needs_corpus
@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(raw):
    parse_innodb_status(raw.decode("utf-8", errors="replace"))
