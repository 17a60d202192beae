"""Rows read with lowercased column names are folded once: the parsers take them as they are."""

from __future__ import annotations

from mysql_snmp.agents.mysql.connection import QueryResult
from mysql_snmp.parsers.columns import FoldedRow, fold_row
from mysql_snmp.parsers.perf_schema_files import file_instances_series
from mysql_snmp.parsers.table_rows import folded_rows


def test_lowercased_rows_are_folded_rows_unless_two_columns_fold_to_one_name():
    result = QueryResult(("FILE_NAME", "EVENT_NAME", "COUNT_READ"), [("/d/a.ibd", "wait/io/file/x", 3)])
    (row,) = result.dicts(lowercase=True)
    assert type(row) is FoldedRow and row == {"file_name": "/d/a.ibd", "event_name": "wait/io/file/x", "count_read": 3}
    assert fold_row(row) is row
    (printed,) = result.dicts()
    assert type(printed) is dict and "FILE_NAME" in printed
    # Two columns folding to one name: a plain dict, which the parsers fold as any other row.
    (clash,) = QueryResult(("Value", "VALUE"), [(1, 2)]).dicts(lowercase=True)
    assert type(clash) is dict


def test_a_parser_adjusting_folded_rows_works_on_its_own_copies():
    rows = QueryResult(("FILE_NAME", "EVENT_NAME", "COUNT_READ", "COUNT_WRITE"),
                       [("/var/lib/mysql/db/t.ibd", "wait/io/file/innodb/innodb_data_file", 3, 4)]).dicts(lowercase=True)
    copies = folded_rows(rows)
    assert copies[0] == rows[0] and copies[0] is not rows[0]
    series = file_instances_series(rows, remove_prefix="/var/lib/mysql/")
    assert rows[0]["file_name"] == "/var/lib/mysql/db/t.ibd"  # the caller's row is untouched
    labels = (("event_name", "wait/io/file/innodb/innodb_data_file"), ("file_name", "db/t.ibd"), ("mode", "read"))
    assert series["perf_schema_file_instances"][labels] == 3
