"""Time the per-scrape parsers other than InnoDB: median microseconds per call.

Run: python tests/bench/bench_status_parsers.py [repeats]
Inputs: MariaDB 10.11 SHOW GLOBAL STATUS / VARIABLES captures (as pymysql tuples),
a 2-channel SHOW REPLICA STATUS, and a hand-built 500-thread processlist.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mysql_snmp.parsers.processlist import processlist_values  # noqa: E402
from mysql_snmp.parsers.replication import parse_replica_status, replica_values  # noqa: E402
from mysql_snmp.parsers.status import parse_status_rows  # noqa: E402
from mysql_snmp.parsers.tabular import parse_table_text  # noqa: E402

FIXTURES = ROOT / ".." / "shared" / "fixtures"
STATES = ("", "Sending data", "Waiting for table metadata lock", "statistics", "User lock", None)


def median_us(call, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def as_tuples(path: Path) -> list[tuple[str, str]]:
    return [(row["Variable_name"], row["Value"]) for row in parse_table_text(path.read_text())]


def main() -> int:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    live = FIXTURES / "live" / "mariadb-10.11"
    if not live.is_dir():
        print(f"../shared absent: {FIXTURES}")
        return 1
    status = as_tuples(live / "show-global-status.tsv")
    variables = as_tuples(live / "show-global-variables.tsv")
    replica_text = (FIXTURES / "status" / "netdata-go.d.plugin"
                    / "netdata-go.d.plugin-mysql-v8.0.30-replica_status_multi_source.txt").read_text()
    replica_rows = parse_table_text(replica_text)
    threads = [{"Id": i, "User": f"app{i % 7}", "Command": "Sleep" if i % 3 else "Query", "Time": i % 50,
                "State": STATES[i % len(STATES)]} for i in range(500)]
    cases = [
        (f"parse_status_rows, {len(status)} status rows", lambda: parse_status_rows(status)),
        (f"parse_status_rows, {len(variables)} variable rows", lambda: parse_status_rows(variables)),
        ("replica status, 2 channels -> catalog values", lambda: replica_values(parse_replica_status(replica_rows))),
        ("processlist, 500 threads -> catalog values", lambda: processlist_values(threads)),
        ("parse_table_text, 2-channel box table (CLI path)", lambda: parse_table_text(replica_text)),
    ]
    for label, call in cases:
        print(f"{median_us(call, repeats):9.1f} us  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
