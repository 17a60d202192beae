"""``mysql-snmp leak replay``: output format, robustness to unsorted rows, gaps and bad rows."""

import argparse
import csv
import io
import json
from pathlib import Path

import pytest

from mysql_snmp.agents.commands import leak as leak_command
from tests.leak import synthetic
from mysql_snmp.agents.leak.replay import TraceError, read_trace

HOUR = synthetic.HOUR


def run_cli(capsys, *argv):
    parser = argparse.ArgumentParser(prog="mysql-snmp")
    leak_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["leak", "replay", *argv])
    code = args.handler(args)
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


@pytest.fixture
def short_day(tmp_path):
    """A config whose day one (only ``suspect``) lasts 3 h, so the leak traces stay short."""
    path = tmp_path / "short-day.yml"
    path.write_text("leak:\n  mature_baseline_seconds: 10800\n")
    return str(path)


def write_trace(path, trace, order=None, with_aux=True):
    rows = list(trace.rows())
    if order is not None:
        rows = [rows[i] for i in order(len(rows))]
    lines = ["timestamp,value,open_table_definitions" if with_aux else "timestamp,value"]
    for t, value, aux in rows:
        lines.append(f"{t:.0f},{value:.0f},{aux:.0f}" if with_aux else f"{t:.0f},{value:.0f}")
    path.write_text("\n".join(lines) + "\n")


def test_seed_leak_trace_prints_one_json_object_per_state_change(tmp_path, capsys, short_day):
    trace = synthetic.dictionary_leak(days=0.25, onset=4 * HOUR)
    path = tmp_path / "seed.csv"
    write_trace(path, trace)
    code, records, err = run_cli(capsys, "--input", str(path), "--series", "innodb_mem_dictionary_bytes",
                                 "--config", short_day)
    assert code == 0 and err == ""
    assert [r["state"] for r in records] == ["suspect", "leaking"]
    for record in records:
        assert set(record) == {"t", "state", "rate_bytes_per_hour", "reason"}
        assert isinstance(record["t"], int)
    leaking = records[-1]
    assert trace.onset < leaking["t"] <= trace.onset + 1800
    assert leaking["reason"] == "unexplained"
    assert 0.5 < leaking["rate_bytes_per_hour"] / trace.rate_bytes_per_hour < 1.5


def test_unsorted_rows_give_the_same_changes_as_sorted(tmp_path, capsys, short_day):
    trace = synthetic.dictionary_leak(days=0.25, onset=4 * HOUR)
    write_trace(tmp_path / "sorted.csv", trace)
    write_trace(tmp_path / "reversed.csv", trace, order=lambda n: range(n - 1, -1, -1))
    _, in_order, _ = run_cli(capsys, "--input", str(tmp_path / "sorted.csv"), "--config", short_day)
    _, reversed_order, _ = run_cli(capsys, "--input", str(tmp_path / "reversed.csv"), "--config", short_day)
    assert reversed_order == in_order and in_order


def test_table_growth_trace_reports_reason_tables_and_forecast_with_a_limit(tmp_path, capsys, short_day):
    trace = synthetic.table_growth(days=0.5, onset=4 * HOUR, hours=3)
    path = tmp_path / "tables.csv"
    write_trace(path, trace)
    code, records, _ = run_cli(capsys, "--input", str(path), "--limit-bytes", str(1024**3), "--config", short_day)
    assert code == 0
    leaking = next(r for r in records if r["state"] == "leaking")
    assert leaking["reason"] == "tables"
    assert leaking["time_to_limit_seconds"] > 0
    assert records[-1]["state"] == "ok" and records[-1]["reason"] == "none"


def test_a_gap_restarts_the_windows_without_an_error(tmp_path, capsys):
    trace = synthetic.steady_dictionary(days=0.3)
    keep = [i for i, t in enumerate(trace.times) if not (2 * HOUR < t < 5 * HOUR)]
    write_trace(tmp_path / "gap.csv", trace, order=lambda n: keep)
    code, records, _ = run_cli(capsys, "--input", str(tmp_path / "gap.csv"))
    assert code == 0
    assert "leaking" not in [r["state"] for r in records]


@pytest.mark.parametrize("content, message", [
    ("timestamp,value\n0,100\n15,abc\n", "bad.csv:3: value 'abc' is not a number"),
    ("timestamp,value\n0,100\n\n15,1,2\n", "bad.csv:4: 3 fields, the header has 2"),
    ("timestamp,value\n0,100\nx,5\n", "bad.csv:3: timestamp 'x' is not a number"),
    ("timestamp,value\n0,100\n15,-4\n", "bad.csv:3: value '-4' is negative"),
    ("timestamp,value\n0,100\n15,nan\n", "bad.csv:3: value 'nan' is not a finite number"),
    ("timestamp,value\n0,100\n15,1\n0,3\n", "bad.csv:4: timestamp 0 repeats line 2 with another value"),
    ("timestamp,value,value\n0,100,1\n", "bad.csv:1: header ['timestamp', 'value', 'value'] repeats a column"),
    ("time_s,bytes\n0,100\n", "bad.csv:1: header ['time_s', 'bytes'] has no column timestamp or time or t"),
    ("timestamp,value\n", "bad.csv: no samples after the header"),
    ("", "bad.csv: empty trace"),
    ("# exported by hand\ntime_s,bytes\n0,100\n", "bad.csv:2: header ['time_s', 'bytes'] has no column"),
    # A quoted cell spanning two lines: the error names the file's line, not the row number.
    ('timestamp,value,open_table_definitions\n0,100,"\n"\n15,abc,\n', "bad.csv:4: value 'abc' is not a number"),
    # csv refuses a field over 128 KiB (csv.Error, not ValueError): still one line naming the line.
    ('timestamp,value\n0,100\n15,"' + "9" * 200_000 + '"\n', "bad.csv:3: field larger than field limit"),
])
def test_bad_traces_exit_2_naming_the_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    code, records, err = run_cli(capsys, "--input", str(path))
    assert code == 2 and records == []
    assert message in err
    assert err.count("\n") == 1  # one line, no traceback


def test_missing_input_file_exits_2(tmp_path, capsys):
    code, _, err = run_cli(capsys, "--input", str(tmp_path / "absent.csv"))
    assert code == 2 and "cannot read" in err


def test_read_trace_accepts_comments_blank_lines_and_empty_optional_cells():
    samples = read_trace(io.StringIO("# recorded on db1\nTimestamp, Value, Open_Table_Definitions\n"
                                     "30,200,\n\n15,100,7\n"), "t.csv")
    assert [(s.t, s.value, s.aux, s.line) for s in samples] == [(15.0, 100.0, 7.0, 5), (30.0, 200.0, None, 3)]
    with pytest.raises(TraceError):
        read_trace(io.StringIO("timestamp,value\n1,inf\n"))
    repeated = read_trace(io.StringIO("timestamp,value\n0,5\n15,6\n0,5\n15,6\n"))
    assert [(s.t, s.value) for s in repeated] == [(0.0, 5.0), (15.0, 6.0)]


def test_config_file_thresholds_apply(tmp_path, capsys):
    trace = synthetic.dictionary_leak(days=0.25, onset=4 * HOUR)
    write_trace(tmp_path / "seed.csv", trace)
    (tmp_path / "agent.yml").write_text(
        "leak:\n  series:\n    - name: innodb_mem_dictionary_bytes\n      min_rate_bytes_per_hour: 104857600\n"
        "      relative_min_rate_per_hour: 1\n")
    code, records, _ = run_cli(capsys, "--input", str(tmp_path / "seed.csv"), "--config", str(tmp_path / "agent.yml"))
    # 100 MiB/h minimum (and 100 %/h of the level, so the relative minimum is no lower): the seed's
    # 5.6 MiB/h is no leak
    assert code == 0 and records == []
    (tmp_path / "bad.yml").write_text("leak:\n  windows_seconds: []\n")
    code, _, err = run_cli(capsys, "--input", str(tmp_path / "seed.csv"), "--config", str(tmp_path / "bad.yml"))
    assert code == 2 and "windows_seconds" in err


def test_console_command_end_to_end(tmp_path, short_day):
    import subprocess
    import sys
    from pathlib import Path

    trace = synthetic.dictionary_leak(days=0.2, onset=3 * HOUR)
    write_trace(tmp_path / "seed.csv", trace)
    (tmp_path / "bad.csv").write_text("timestamp,value\n0,1\n15,x\n")
    repo = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "mysql_snmp.agents.cli", "leak", "replay", "--series", "innodb_mem_dictionary_bytes",
               "--config", short_day]
    good = subprocess.run([*command, "--input", str(tmp_path / "seed.csv")], capture_output=True, text=True,
                          cwd=repo, timeout=120)
    assert good.returncode == 0, good.stderr
    assert [json.loads(line)["state"] for line in good.stdout.splitlines()] == ["suspect", "leaking"]
    bad = subprocess.run([*command, "--input", str(tmp_path / "bad.csv")], capture_output=True, text=True,
                         cwd=repo, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == f"mysql-snmp leak replay: {tmp_path / 'bad.csv'}:3: value 'x' is not a number"


def test_series_aliases_and_unknown_series(tmp_path, capsys, short_day):
    trace = synthetic.table_growth(days=0.5, onset=4 * HOUR, hours=3)
    write_trace(tmp_path / "tables.csv", trace)
    _, canonical, _ = run_cli(capsys, "--input", str(tmp_path / "tables.csv"), "--series", "innodb_mem_dictionary_bytes",
                              "--config", short_day)
    code, alias, err = run_cli(capsys, "--input", str(tmp_path / "tables.csv"),
                               "--series", "innodb_dictionary_memory_bytes", "--config", short_day)
    assert code == 0 and err == "" and alias == canonical
    # a series the config lists gets generic thresholds and still uses the trace's table counts
    faster = synthetic.table_growth(days=0.5, onset=4 * HOUR, hours=3, tables_per_hour=1000)  # 2.1 MiB/h
    write_trace(tmp_path / "faster.csv", faster)
    listed = tmp_path / "listed.yml"
    listed.write_text("leak:\n  mature_baseline_seconds: 10800\n  series:\n    - name: my_gauge_bytes\n")
    code, generic, err = run_cli(capsys, "--input", str(tmp_path / "faster.csv"), "--series", "my_gauge_bytes",
                                 "--config", str(listed))
    assert code == 0 and err == ""
    assert next(r for r in generic if r["state"] == "leaking")["reason"] == "tables"


@pytest.mark.parametrize("name, hint", [
    ("innodb_mem_dictionary_byte", " (did you mean innodb_mem_dictionary_bytes?)"),
    ("process_rss", " (did you mean process_rss_bytes?)"),  # an alias, cut short
    ("my_gauge_bytes", ""),
])
def test_an_unknown_series_is_a_one_line_error_not_generic_thresholds(tmp_path, capsys, name, hint):
    trace = synthetic.table_growth(days=0.5, onset=4 * HOUR, hours=3, tables_per_hour=1000)
    write_trace(tmp_path / "faster.csv", trace)
    code, records, err = run_cli(capsys, "--input", str(tmp_path / "faster.csv"), "--series", name)
    assert code == 2 and records == []
    assert err.count("\n") == 1
    assert err.startswith(f"mysql-snmp leak replay: --series {name} is not a watched memory series{hint}; known: "
                          "innodb_mem_dictionary_bytes, ")
    assert "process_resident_memory_bytes" in err and "leak.series in the --config file" in err


FIXTURE = Path(__file__).parent / "fixtures" / "mariadb-tables-trace.csv"


def _phases(path):
    """First and last timestamp of each phase of a trace recorded by tests/bench/record_leak_trace.py."""
    spans = {}
    with path.open() as stream:
        for row in csv.DictReader(line for line in stream if not line.startswith("#")):
            t = float(row["timestamp"])
            first, _ = spans.get(row["phase"], (t, t))
            spans[row["phase"]] = (first, t)
    return spans


def test_recorded_mariadb_trace_is_ok_while_steady_and_tables_while_tables_are_opened(capsys):
    # 36 minutes of a real MariaDB 10.11 (tests/bench/record_leak_trace.py): a read/write mix,
    # then 952 tables created and opened with table_definition_cache=20000, then dropped.
    # Less than a day of history, so the growth is suspect at most.
    phases = _phases(FIXTURE)
    assert set(phases) == {"steady", "growth", "dropped"}
    code, records, err = run_cli(capsys, "--input", str(FIXTURE), "--series", "innodb_mem_dictionary_bytes")
    assert code == 0 and err == ""
    growth_start, growth_end = phases["growth"]
    assert records, "the growth phase went unnoticed"
    assert all(r["t"] > growth_start for r in records)  # the whole steady phase stays ok
    first = records[0]
    assert first["state"] == "suspect" and first["reason"] == "tables"
    assert first["t"] <= growth_end
    assert all(r["state"] != "leaking" for r in records)
    # the rate is that of the tables (2,248 bytes each, 96 a minute); at the first suspect
    # the 15-min window still holds minutes of the flat past before the growth
    assert 0.3 < first["rate_bytes_per_hour"] / (2248 * 96 * 60) < 1.1
