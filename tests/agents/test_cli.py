"""The collect, parse and demo commands, run through the real ``mysql-snmp`` entry point."""

from __future__ import annotations

import io
import json
import re

import pytest

from mysql_snmp.agents.catalog import load_catalog
from mysql_snmp.agents.cli import main
from mysql_snmp.agents.demo.throwaway import free_loopback_port
from mysql_snmp.parsers.tabular import parse_table_text


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# ----------------------------------------------------------------- parse


def test_parse_innodb_status_by_catalog_name(capsys, shared_dir):
    path = shared_dir / "fixtures/live/mariadb-10.11/show-engine-innodb-status-fresh.txt"
    code, out, _ = cli(capsys, "parse", "innodb-status", str(path))
    assert code == 0
    values = json.loads(out)
    text = path.read_text()
    printed = int(re.search(r"Dictionary memory allocated (\d+)", text).group(1))
    assert values["innodb_mem_dictionary_bytes"] == printed
    history = int(re.search(r"History list length (\d+)", text).group(1))
    assert values["innodb_trx_history_list_length"] == history
    catalog = load_catalog()
    assert all(name.split("{")[0] in catalog for name in values)


def test_parse_innodb_status_with_legacy_names(capsys, shared_dir):
    path = shared_dir / "fixtures/live/mariadb-10.11/show-engine-innodb-status-fresh.G.txt"
    code, out, _ = cli(capsys, "parse", "innodb-status", "--legacy-names", str(path))
    assert code == 0
    values = json.loads(out)
    text = path.read_text()
    assert values["history_list"] == int(re.search(r"History list length (\d+)", text).group(1))
    assert values["pool_size"] == int(re.search(r"Buffer pool size\s+(\d+)", text).group(1))


def test_parse_global_status_tsv_and_stdin(capsys, shared_dir, monkeypatch):
    path = shared_dir / "fixtures/live/mariadb-10.11/show-global-status.tsv"
    printed = {row["Variable_name"]: row["Value"] for row in parse_table_text(path.read_text())}
    code, out, _ = cli(capsys, "parse", "global-status", "--json", str(path))
    assert code == 0
    values = json.loads(out)
    assert values["status_uptime"] == int(printed["Uptime"])
    assert values["status_innodb_buffer_pool_pages_total"] == int(printed["Innodb_buffer_pool_pages_total"])

    box = "+---------------+-------+\n| Variable_name | Value |\n+---------------+-------+\n" \
          "| Uptime        | 4242  |\n| Com_select    | 17    |\n+---------------+-------+\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(box))
    code, out, _ = cli(capsys, "parse", "global-status", "-")
    assert code == 0
    lines = dict(line.split() for line in out.splitlines())
    assert lines == {"status_com_select": "17", "status_uptime": "4242"}


def test_parse_multi_source_replica_status(capsys, shared_dir):
    path = shared_dir / "fixtures/status/netdata-go.d.plugin/netdata-go.d.plugin-mariadb-v10.8.4-all_slaves_status_multi_source.txt"
    rows = parse_table_text(path.read_text())
    code, out, _ = cli(capsys, "parse", "replica-status", "--json", str(path))
    assert code == 0
    values = json.loads(out)
    assert values["replica_channels"] == len(rows) == 2
    for row in rows:
        channel = row["Connection_name"]
        assert values[f'replica_seconds_behind_source{{channel="{channel}"}}'] == int(row["Seconds_Behind_Master"])
        assert values[f'replica_relay_log_space_bytes{{channel="{channel}"}}'] == int(row["Relay_Log_Space"])
    assert values["replica_slave_relay_log_space_bytes"] == sum(int(r["Relay_Log_Space"]) for r in rows)


def test_parse_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    code, _, err = cli(capsys, "parse", "innodb-status", str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt: No such file or directory" in one_line(err)
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("this is not a monitor output\n")
    code, _, err = cli(capsys, "parse", "innodb-status", str(garbage))
    assert code == 2 and "not SHOW ENGINE INNODB STATUS output" in one_line(err)
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    code, _, err = cli(capsys, "parse", "global-status", str(empty))
    assert code == 2 and "no Variable_name/Value rows" in one_line(err)
    code, _, err = cli(capsys, "parse", "global-status", "--legacy-names", str(empty))
    assert code == 2 and "innodb-status only" in one_line(err)


def test_parse_replica_status_refuses_a_file_without_replica_columns(capsys, tmp_path):
    # Any text reads as a batch table; without a single replica status column it must not
    # come out as one "channel" per line with made-up running/stopped values.
    unrelated = tmp_path / "processlist.tsv"
    unrelated.write_text("Id\tUser\tCommand\n1\troot\tQuery\n2\tmonitor\tSleep\n")
    code, out, err = cli(capsys, "parse", "replica-status", str(unrelated))
    assert code == 2 and out == ""
    assert "processlist.tsv: no replica status columns" in one_line(err)


# ----------------------------------------------------------------- collect


@pytest.mark.live
def test_collect_json_from_a_my_cnf(capsys, mariadb, monitoring_user):
    code, out, err = cli(capsys, "collect", "--my-cnf", str(monitoring_user.my_cnf), "--json", "--raw",
                         "--host-metrics", "off")
    assert code == 0, err
    document = json.loads(out)
    assert document["up"] is True and document["server"]["flavour"] == "mariadb"
    assert document["values"]["status_uptime"] == document["raw"]["global_status"]["Uptime"]
    assert document["values"]["variable_server_id"] == mariadb.server_id
    assert document["values"]["variable_max_connections"] == 200  # as agents/demo/throwaway.py starts it
    assert {name for name, s in document["sources"].items() if not s["ok"]} == set()
    assert monitoring_user.password not in out and monitoring_user.password not in err


@pytest.mark.live
def test_collect_table_with_flags_overriding_the_file(capsys, mariadb, tmp_path):
    my_cnf = tmp_path / "root.cnf"
    my_cnf.write_text("[client]\nhost = 127.0.0.1\nport = 1\nuser = root\npassword =\n")
    my_cnf.chmod(0o600)
    code, out, err = cli(capsys, "collect", "--config.my-cnf", str(my_cnf), "--port", str(mariadb.port),
                         "--sources", "global_status,global_variables")
    assert code == 0, err
    assert out.startswith(f"127.0.0.1:{mariadb.port}: mariadb ")
    assert re.search(r"^status_uptime +\d+$", out, re.M)
    assert re.search(r"^global_status +yes ", out, re.M)


def test_collect_unreachable_server_is_one_line_exit_1(capsys, tmp_path):
    my_cnf = tmp_path / "my.cnf"
    port = free_loopback_port()
    my_cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {port}\nuser = monitor\npassword = pw\n")
    my_cnf.chmod(0o600)
    code, out, err = cli(capsys, "collect", "--my-cnf", str(my_cnf))
    assert code == 1 and out == ""
    assert f"mysql-snmp collect: 127.0.0.1:{port}: Can't connect to MySQL server" in one_line(err)


def test_collect_broken_config_names_file_and_key(capsys, tmp_path):
    my_cnf = tmp_path / "my.cnf"
    my_cnf.write_text("[client]\nport = three-three-oh-six\n")
    my_cnf.chmod(0o600)
    code, _, err = cli(capsys, "collect", "--my-cnf", str(my_cnf))
    assert code == 2
    assert str(my_cnf) in one_line(err) and "port" in err
    code, _, err = cli(capsys, "collect", "--my-cnf", str(tmp_path / "absent.cnf"))
    assert code == 2 and "absent.cnf: no such file" in one_line(err)


def test_list_sources_and_help_teach(capsys):
    code, out, _ = cli(capsys, "collect", "--list-sources")
    assert code == 0
    assert re.search(r"^replication +default ", out, re.M) and re.search(r"^heartbeat +opt-in ", out, re.M)
    for command in ("collect", "parse", "demo"):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--help"])
        assert exit_info.value.code == 0
        assert "examples:" in capsys.readouterr().out


def test_collect_and_exporter_help_state_the_password_rule(capsys):
    from mysql_snmp.agents.config.settings import PASSWORD_RULE

    for command in ("collect", "exporter"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        assert "the file's password wins and the variable is used when the file gives none" in help_text
        assert " ".join(PASSWORD_RULE.split()) in help_text


# ----------------------------------------------------------------- demo


@pytest.mark.live
def test_demo_prints_one_collection_of_its_workload(capsys):
    code, out, err = cli(capsys, "demo", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["up"] is True
    values = document["values"]
    # The workload inserts 5000 rows with one INSERT ... SELECT and flushes the binary log once.
    assert values["status_handler_write"] >= 5000
    # MariaDB 10.11 prints neither Innodb_rows_inserted nor the monitor's "Number of rows
    # inserted" line: the value is absent, where the original answered 0.
    assert "status_innodb_rows_inserted" not in values and "innodb_row_ops_inserted" not in values
    assert values["status_com_insert_select"] == 1
    assert values["binlog_files"] == 2


# ----------------------------------------------------------------- mistyped flags


@pytest.mark.parametrize("argv, expected", [
    (["exporter", "--collect.global_statuz"],
     "mysql-snmp exporter: unrecognized argument(s): --collect.global_statuz "
     "(did you mean --collect.global_status?); 'mysql-snmp exporter --help' lists the options"),
    (["exporter", "--collect.info_schema.tablez=true", "extra"],
     "mysql-snmp exporter: unrecognized argument(s): --collect.info_schema.tablez=true "
     "(did you mean --collect.info_schema.tables?), extra; 'mysql-snmp exporter --help' lists the options"),
    (["collect", "--jsn"],
     "mysql-snmp collect: unrecognized argument(s): --jsn (did you mean --json?); "
     "'mysql-snmp collect --help' lists the options"),
    (["leak", "replay", "--input", "-", "--limit-bites", "5"],
     "mysql-snmp leak replay: unrecognized argument(s): --limit-bites (did you mean --limit-bytes?), 5; "
     "'mysql-snmp leak replay --help' lists the options"),
    (["collect", "--zzzz"],
     "mysql-snmp collect: unrecognized argument(s): --zzzz; 'mysql-snmp collect --help' lists the options"),
])
def test_a_mistyped_flag_is_one_line_naming_the_command_and_the_nearest_flag(capsys, argv, expected):
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert one_line(err) == expected


def test_a_bad_exporter_flag_value_is_not_buried_under_sixty_flags_of_usage(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["exporter", "--collect.global_status=maybe"])
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("usage: mysql-snmp exporter [--web.listen-address")
    assert lines[1] == ("mysql-snmp exporter: error: argument --collect.global_status: "
                        "'maybe' is not a boolean (true/false)")


def test_leak_replay_config_that_is_not_yaml_is_one_line(capsys, tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text("timestamp,value\n0,100\n60,100\n")
    config = tmp_path / "agent.yml"
    config.write_text("leak:\n  bin_seconds: [60\n")
    code, out, err = cli(capsys, "leak", "replay", "--input", str(trace), "--config", str(config))
    assert code == 2 and out == ""
    assert one_line(err) == (f"mysql-snmp leak replay: {config}: line 3, column 1: expected ',' or ']', "
                             "but got '<stream end>' (while parsing a flow sequence)")


def test_list_sources_keeps_its_columns_with_the_long_table_source_names(capsys):
    code, out, _ = cli(capsys, "collect", "--list-sources")
    assert code == 0
    columns = {line.index(" default  ") if " default  " in line else line.index(" opt-in   ")
               for line in out.splitlines()}
    assert columns == {len("perf_schema_events_statements_sum")}


def test_collect_without_an_option_file_says_none_was_read(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.my.cnf
    port = free_loopback_port()
    code, out, err = cli(capsys, "collect", "--host", "127.0.0.1", "--port", str(port), "--user", "monitor")
    assert code == 1 and out == ""
    line = one_line(err)
    assert line.startswith(f"mysql-snmp collect: 127.0.0.1:{port}: Can't connect to MySQL server")
    assert line.endswith("(no option file was read: give --my-cnf FILE, or create ~/.my.cnf with a [client] section)")
    (tmp_path / ".my.cnf").write_text(f"[client]\nhost = 127.0.0.1\nport = {port}\nuser = monitor\n")
    (tmp_path / ".my.cnf").chmod(0o600)
    code, _, err = cli(capsys, "collect")
    assert code == 1 and "no option file was read" not in one_line(err)


@pytest.mark.parametrize("command", [["collect"], ["agentx", "--agentx-socket", "/nonexistent/agentx"]])
def test_a_mistyped_source_is_one_line_with_the_nearest_name_and_every_valid_one(capsys, command):
    code, out, err = cli(capsys, *command, "--sources", "global_status,proceslist")
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"mysql-snmp {command[0]}: unknown source(s) proceslist (did you mean processlist?); "
                           "known: global_status, global_variables, innodb_status,")
    assert line.endswith(", host, process")


@pytest.mark.parametrize("command", ["collect", "exporter", "agentx", "rules"])
def test_the_examples_of_each_help_parse_with_the_commands_own_flags(capsys, command):
    """Every ``mysql-snmp COMMAND ...`` line under ``examples:`` is a command line its parser accepts,
    so a renamed flag cannot leave a stale example behind."""
    import shlex

    from mysql_snmp.agents.cli import build_parser

    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    after_usage = text[text.index("\n\n"):]  # the usage line names the command too
    examples = [line[line.index(f"mysql-snmp {command}"):].split("#")[0].split("|")[0].split(">")[0]
                for line in after_usage.splitlines() if f"mysql-snmp {command} " in line]
    assert examples, text
    for example in examples:
        words = shlex.split(example.rstrip("\\").strip())[1:]
        args, extras = build_parser().parse_known_args(words)
        assert extras == [] and args.command == command, example


@pytest.mark.parametrize("argv, error", [
    (["parse", "innodb-statu", "-"], "mysql-snmp parse: error: argument kind: invalid choice: 'innodb-statu' "
     "(choose from 'innodb-status', 'global-status', 'replica-status') (did you mean innodb-status?)"),
    (["collec"], "mysql-snmp: error: argument COMMAND: invalid choice: 'collec' (choose from 'demo', 'collect', "
     "'parse', 'exporter', 'agentx', 'leak', 'generate', 'rules') (did you mean collect?)"),
    (["exporter", "--log.format", "jsn"], "mysql-snmp exporter: error: argument --log.format: invalid choice: "
     "'jsn' (choose from 'logfmt', 'json') (did you mean json?)"),
    (["collect", "--host-metrics", "xyz"], "mysql-snmp collect: error: argument --host-metrics: invalid choice: "
     "'xyz' (choose from 'auto', 'on', 'off')"),
])
def test_a_mistyped_choice_names_the_nearest_valid_one(capsys, argv, error):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == error
