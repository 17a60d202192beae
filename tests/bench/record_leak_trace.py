"""Record a real memory trace from a throwaway MariaDB, for the leak detector's tests.

    .venv/bin/python tests/bench/record_leak_trace.py --output trace.csv            # 36 min
    .venv/bin/python tests/bench/record_leak_trace.py --output t.csv --steady 60 --growth 60 --after 60

Starts a private MariaDB (``agents/throwaway.py``) with a large ``table_definition_cache``
and runs three phases while sampling every ``--every`` seconds:

1. ``steady``: a light read/write mix (inserts, updates, point selects, deletes) on a few
   tables -- the dictionary should stay flat, AHI and RSS move with the workload;
2. ``growth``: the mix goes on while new tables are created and opened at a steady pace,
   so ``Open_table_definitions`` and the dictionary grow together (reason ``tables``);
3. ``dropped``: the tables are dropped and the mix goes on.

The CSV is what ``mysql-snmp leak replay`` reads (``timestamp,value,open_table_definitions``,
``value`` being the dictionary bytes), plus ``phase``, ``ahi_bytes`` and ``rss_bytes``
columns (the replay ignores columns it does not know).  Timestamps are seconds since the
start.  The committed fixture ``tests/leak/fixtures/mariadb-tables-trace.csv`` was made
with the defaults.
"""

from __future__ import annotations

import argparse
import csv
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import psutil  # noqa: E402

from mysql_snmp.agents.collection import Collector  # noqa: E402
from mysql_snmp.agents.connection import ConnectionSettings  # noqa: E402
from mysql_snmp.agents.throwaway import ThrowawayMariaDB  # noqa: E402

WORK_TABLES = 8
PAGE_SIZE = 16384  # innodb_page_size of the throwaway server: one AHI node heap buffer
COLUMNS = ("timestamp", "phase", "value", "open_table_definitions", "ahi_bytes", "rss_bytes")


class ReadWriteMix(threading.Thread):
    """A light OLTP mix on its own connection until stopped (a few dozen statements a second)."""

    def __init__(self, server: ThrowawayMariaDB, pause: float):
        super().__init__(daemon=True)
        self.server, self.pause = server, pause
        self.stopping = threading.Event()
        self.statements = 0

    def run(self) -> None:
        conn = self.server.connect(autocommit=True, database="work")
        step = 0
        with conn.cursor() as cur:
            while not self.stopping.is_set():
                table = f"t{step % WORK_TABLES}"
                key = step % 5000
                cur.execute(f"INSERT INTO {table} (id, grp, note) VALUES (%s, %s, REPEAT('x', 64)) "
                            "ON DUPLICATE KEY UPDATE grp = grp + 1", (key, step % 97))
                cur.execute(f"SELECT note FROM {table} WHERE id = %s", (key // 2,))
                cur.fetchall()
                cur.execute(f"SELECT COUNT(*) FROM {table} WHERE grp = %s", (step % 97,))
                cur.fetchall()
                if step % 10 == 0:
                    cur.execute(f"DELETE FROM {table} WHERE id = %s", ((key + 2500) % 5000,))
                self.statements += 4
                step += 1
                self.stopping.wait(self.pause)
        conn.close()


class Sampler:
    def __init__(self, server: ThrowawayMariaDB, writer: csv.writer):
        settings = ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")
        self.collector = Collector(settings, host_metrics="off")
        self.process = psutil.Process(server.pid)
        self.writer = writer
        self.started = time.monotonic()

    def sample(self, phase: str) -> None:
        snapshot = self.collector.collect(sources={"global_status", "innodb_status"})
        if not snapshot.up:
            print(f"sample skipped: {snapshot.error}", file=sys.stderr)
            return
        values = snapshot.values
        self.writer.writerow([
            round(time.monotonic() - self.started, 1), phase,
            values.get("innodb_mem_dictionary_bytes", ""), values.get("status_open_table_definitions", ""),
            _ahi_bytes(values), self.process.memory_info().rss,
        ])


def _ahi_bytes(values: dict) -> float | str:
    """AHI memory: the XtraDB/Percona figure when printed, else MariaDB's node heap buffers x page size."""
    if values.get("innodb_mem_adaptive_hash_index_bytes") is not None:
        return values["innodb_mem_adaptive_hash_index_bytes"]
    buffers = values.get("innodb_ahi_node_heap_buffers")
    return "" if buffers is None else buffers * PAGE_SIZE


def run_phase(sampler: Sampler, phase: str, seconds: float, every: float, action=None) -> None:
    """Sample every ``every`` s for ``seconds``; ``action()`` runs between samples."""
    end = time.monotonic() + seconds
    next_sample = time.monotonic()
    while time.monotonic() < end:
        if time.monotonic() >= next_sample:
            sampler.sample(phase)
            next_sample += every
        if action is not None:
            action()
        time.sleep(max(0.0, min(next_sample, end) - time.monotonic()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples (5)")
    parser.add_argument("--steady", type=float, default=1200.0, help="seconds of the read/write mix alone (1200)")
    parser.add_argument("--growth", type=float, default=600.0, help="seconds creating and opening tables (600)")
    parser.add_argument("--after", type=float, default=360.0, help="seconds after dropping them (360)")
    parser.add_argument("--tables-per-sample", type=int, default=8, help="tables created per sample interval (8)")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between rounds of the mix (0.05)")
    args = parser.parse_args(argv)

    server = ThrowawayMariaDB(extra_args=("--table-definition-cache=20000", "--table-open-cache=20000"))
    with server:
        server.execute("CREATE DATABASE work", "CREATE DATABASE grown")
        for i in range(WORK_TABLES):
            server.execute(f"CREATE TABLE work.t{i} (id INT PRIMARY KEY, grp INT, note VARCHAR(80), KEY(grp))")
        mix = ReadWriteMix(server, args.pause)
        mix.start()
        created = []
        ddl = server.connect(autocommit=True)

        def create_tables() -> None:
            # spread over the interval: a few tables, then wait for the next slot
            due = int((time.monotonic() - growth_started) / args.every * args.tables_per_sample)
            with ddl.cursor() as cur:
                while len(created) < due:
                    name = f"grown.g{len(created)}"
                    cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, a VARCHAR(64), b INT, KEY(b), KEY(a))")
                    cur.execute(f"SELECT COUNT(*) FROM {name}")  # open its definition
                    cur.fetchall()
                    created.append(name)
            time.sleep(0.2)

        with args.output.open("w", newline="") as out:
            writer = csv.writer(out)
            out.write(f"# throwaway MariaDB, table_definition_cache=20000, sampled every {args.every:g} s; "
                      f"phases: steady {args.steady:g} s, growth {args.growth:g} s "
                      f"({args.tables_per_sample} tables per sample), dropped {args.after:g} s\n")
            writer.writerow(COLUMNS)
            sampler = Sampler(server, writer)
            run_phase(sampler, "steady", args.steady, args.every)
            out.flush()
            growth_started = time.monotonic()
            run_phase(sampler, "growth", args.growth, args.every, create_tables)
            out.flush()
            with ddl.cursor() as cur:
                for name in created:
                    cur.execute(f"DROP TABLE {name}")
            run_phase(sampler, "dropped", args.after, args.every)
        mix.stopping.set()
        mix.join(timeout=10)
        ddl.close()
        sampler.collector.close()
        print(f"{args.output}: {len(created)} tables created and dropped, {mix.statements} mix statements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
