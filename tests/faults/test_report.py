from tests.faults.report import FaultRow, format_table


def test_table_aligns_columns_and_marks_missing_recovery():
    lines = format_table([FaultRow("mysqld SIGKILL", "exporter", "up=0, no values", 3.5),
                          FaultRow("FIFO history", "agentx", "warning, fresh start", None, "no history file")])
    assert lines[0].startswith("fault ")
    assert lines[2].split(" | ")[3].strip() == "3.5 s"
    assert lines[3].split(" | ")[3].strip() == "-"
    assert [line.split(" | ")[4].strip() for line in lines[2:]] == ["-", "no history file"]
    assert len({len(line) for line in lines}) == 1
