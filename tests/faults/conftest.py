from tests.agentx.conftest import private_snmpd  # noqa: F401  (the AgentX fault tests' own snmpd)
from tests.faults.report import ROWS, format_table


def pytest_terminal_summary(terminalreporter):
    if not ROWS:
        return
    terminalreporter.section("fault suite")
    for line in format_table(ROWS):
        terminalreporter.write_line(line)
