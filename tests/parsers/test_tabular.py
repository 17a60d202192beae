from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.parsers.tabular import parse_table_text, read_table

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def shared_text(relative: str) -> str:
    path = SHARED / relative
    if not SHARED.is_dir():
        pytest.skip(f"../shared absent: {SHARED}")
    return path.read_text()


NETDATA = "fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-"
LIVE = "fixtures/live/mariadb-10.11/"


def test_box_table_global_status_mysql_8_0_30():
    table = read_table(shared_text(NETDATA + "mysql-v8.0.30-global_status.txt"))
    assert table.layout == "box"
    assert table.columns == ["Variable_name", "Value"]
    assert len(table.rows) == 486
    assert table.skipped_lines == 0
    by_name = {row["Variable_name"]: row["Value"] for row in table.rows}
    assert by_name["Uptime"] == "152"
    assert by_name["Bytes_received"] == "5584"
    assert by_name["Ssl_cipher_list"] == ""
    assert by_name["Ssl_server_not_after"] == "Aug 15 12:43:39 2032 GMT"
    assert by_name["Innodb_buffer_pool_dump_status"] == "Dumping of buffer pool not started"


def test_box_table_keeps_null_as_none_and_many_columns():
    rows = parse_table_text(shared_text(NETDATA + "mysql-v8.0.30-replica_status_multi_source.txt"))
    assert [row["Channel_Name"] for row in rows] == ["master1", "master2"]
    assert rows[0]["SQL_Remaining_Delay"] is None
    assert rows[0]["Replica_SQL_Running_State"] == "Replica has read all relay log; waiting for more updates"
    assert rows[1]["Read_Source_Log_Pos"] == "974"
    assert len(rows[0]) == 60


def test_box_table_value_containing_a_pipe_survives():
    text = (
        "+------+-------+\n"
        "| Name | Value |\n"
        "+------+-------+\n"
        "| a    | x|y   |\n"
        "| b    | NULL  |\n"
        "+------+-------+\n"
        "2 rows in set (0.00 sec)\n"
    )
    table = read_table(text)
    assert table.rows == [{"Name": "a", "Value": "x|y"}, {"Name": "b", "Value": None}]
    assert table.skipped_lines == 1  # the "rows in set" trailer


def test_box_table_value_spanning_lines():
    text = "+---+------+\n| k | v    |\n+---+------+\n| a | one\ntwo |\n+---+------+\n"
    assert parse_table_text(text) == [{"k": "a", "v": "one\ntwo"}]


def test_batch_output_with_header_mariadb_10_11():
    table = read_table(shared_text(LIVE + "show-global-variables.tsv"))
    assert table.layout == "batch"
    assert len(table.rows) == 656
    by_name = {row["Variable_name"]: row["Value"] for row in table.rows}
    assert by_name["max_connections"] == "151"
    assert by_name["init_connect"] == ""
    assert by_name["ft_boolean_syntax"] == '+ -><()~*:""&|'
    assert by_name["myisam_stats_method"] == "NULLS_UNEQUAL"


def test_batch_two_columns_with_header_is_not_name_value():
    table = read_table(shared_text(LIVE + "show-binary-logs.tsv"))
    assert table.layout == "batch"
    assert table.rows == [
        {"Log_name": "mysql-bin.000001", "File_size": "351"},
        {"Log_name": "mysql-bin.000002", "File_size": "328"},
    ]


def test_batch_master_status_empty_cells():
    rows = parse_table_text(shared_text(LIVE + "show-master-status.tsv"))
    assert rows == [{"File": "mysql-bin.000002", "Position": "328", "Binlog_Do_DB": "", "Binlog_Ignore_DB": ""}]


def test_batch_escapes_are_undone():
    rows = parse_table_text("Id\tInfo\n1\tSELECT 'a\\tb'\\nFROM t\\\\x\n")
    assert rows == [{"Id": "1", "Info": "SELECT 'a\tb'\nFROM t\\x"}]


def test_headerless_name_value_dump_percona_toolkit():
    table = read_table(shared_text("fixtures/status/percona-toolkit/percona-toolkit-pt-mysql-summary-temp002-mysql-status.tsv"))
    assert table.layout == "name-value"
    assert len(table.rows) == 370
    assert table.rows[0] == {"Variable_name": "Aborted_clients", "Value": "0"}
    by_name = {row["Variable_name"]: row["Value"] for row in table.rows}
    assert by_name["Uptime"] == "94521"
    assert by_name["Compression"] == "OFF"


def test_headerless_dump_starting_with_text_value():
    text = "alter_algorithm\tDEFAULT\nmax_connections\t151\nversion\t10.11.19-MariaDB\n"
    table = read_table(text)
    assert table.layout == "name-value"
    assert table.rows[0] == {"Variable_name": "alter_algorithm", "Value": "DEFAULT"}


def test_vertical_output_master_status():
    table = read_table(shared_text(LIVE + "show-master-status.G.txt"))
    assert table.layout == "vertical"
    assert table.rows == [{"File": "mysql-bin.000002", "Position": "328", "Binlog_Do_DB": "", "Binlog_Ignore_DB": ""}]


def test_vertical_output_multi_line_value_and_two_rows():
    text = (
        "*************************** 1. row ***************************\n"
        "  Type: InnoDB\n"
        "  Name: \n"
        "Status: \n"
        "=====\n"
        "Per second averages: 13 seconds\n"
        "*************************** 2. row ***************************\n"
        "  Type: x\n"
        "  Name: NULL\n"
        "Status: y\n"
    )
    rows = parse_table_text(text)
    assert rows[0] == {"Type": "InnoDB", "Name": "", "Status": "\n=====\nPer second averages: 13 seconds"}
    assert rows[1] == {"Type": "x", "Name": None, "Status": "y"}


def test_empty_file_has_no_rows():
    table = read_table(shared_text(LIVE + "show-slave-status-empty.G.txt"))
    assert table.rows == [] and table.layout == "empty"


@given(st.one_of(st.text(), st.binary()))
def test_garbage_never_raises(text):
    table = read_table(text)
    assert isinstance(table.rows, list)


@given(st.lists(st.sampled_from(["+--+--+", "| a | b |", "|x|", "*** 1. row ***", " k: v", "a\tb", "\t", ""]), max_size=12))
def test_fragments_of_every_layout_never_raise(lines):
    assert isinstance(parse_table_text("\n".join(lines)), list)


# --- round trips through the client's layouts ----------------------------------

_WORD = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="|:\\"), min_size=1, max_size=8)
# Values may hold what the layouts use as syntax: '|' (box), ':' (vertical), '\\' (batch escapes).
_VALUE = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)
_CELL = st.one_of(st.none(), _VALUE.filter(lambda s: s != "NULL"), st.just(""))


@st.composite
def result_sets(draw, min_columns=1):
    columns = draw(st.lists(_WORD.filter(lambda s: s != "NULL"), min_size=min_columns, max_size=5, unique=True))
    rows = draw(st.lists(st.lists(_CELL, min_size=len(columns), max_size=len(columns)), min_size=1, max_size=4))
    return columns, [dict(zip(columns, row)) for row in rows]


def _shown(value):
    return "NULL" if value is None else value


def render_box(columns, rows):
    widths = [max([len(c)] + [len(_shown(r[c])) for r in rows]) for c in columns]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells):
        return "|" + "|".join(f" {cell:<{w}} " for cell, w in zip(cells, widths)) + "|"

    body = [line([_shown(r[c]) for c in columns]) for r in rows]
    return "\n".join([border, line(columns), border, *body, border]) + "\n"


def render_vertical(columns, rows):
    width = max(len(c) for c in columns)
    out = []
    for number, row in enumerate(rows, 1):
        out.append(f"{'*' * 27} {number}. row {'*' * 27}")
        out.extend(f"{c:>{width}}: {_shown(row[c])}" for c in columns)
    return "\n".join(out) + "\n"


def render_batch(columns, rows):
    def escaped(value):
        return _shown(value).replace("\\", "\\\\")  # as mysql --batch prints a backslash

    return "\n".join(["\t".join(columns)] + ["\t".join(escaped(r[c]) for c in columns) for r in rows]) + "\n"


@given(result_sets())
def test_box_round_trip(result):
    columns, rows = result
    assert parse_table_text(render_box(columns, rows)) == rows


@given(result_sets())
def test_vertical_round_trip(result):
    columns, rows = result
    assert parse_table_text(render_vertical(columns, rows)) == rows


@given(result_sets(min_columns=3))
def test_batch_round_trip(result):
    # Two-column batch output is ambiguous ("a<TAB>b" may be a header or a name/value
    # dump); the heuristics for it are covered by the fixture tests above.
    columns, rows = result
    assert parse_table_text(render_batch(columns, rows)) == rows
