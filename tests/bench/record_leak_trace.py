"""Record a real memory trace from a throwaway MariaDB, for the leak detector's tests.

    .venv/bin/python tests/bench/record_leak_trace.py --output trace.csv            # 36 min
    .venv/bin/python tests/bench/record_leak_trace.py --output t.csv --steady 60 --growth 60 --after 60

Starts a private MariaDB (``agents/demo/throwaway.py``) with a large ``table_definition_cache``
and runs three phases while sampling every ``--every`` seconds:

1. ``steady``: a light read/write mix (inserts, updates, point selects, deletes) on a few
   tables -- the dictionary should stay flat, AHI and RSS move with the workload;
2. ``growth``: the mix goes on while new tables are created and opened at a steady pace,
   so ``Open_table_definitions`` and the dictionary grow together (reason ``tables``);
3. ``dropped``: the tables are dropped and the mix goes on.

With ``--warmup`` (and optionally ``--settled``, ``--crash-warmup``, ``--rename``) it records a
restart trace instead: ``steady``, a clean restart of mariadbd on the same datadir (SIGTERM,
then start), ``warmup`` and ``settled`` under the same mix, a ``kill -9`` restart and
``crash-warmup``, then ``growth`` and ``dropped`` as above, then ``rename``: one table renamed
to a new name again and again (the production story of a dictionary that grew on a rename
loop).  ``--cold-tables`` adds tables the mix reads with a skewed choice (a few all the
time, the last ones every few minutes), so after a restart the dictionary refills as a
real server's does, table by table.  ``--big-rows`` adds a table the mix reads at random keys, larger than what the mix
touches in a minute, so the buffer pool and the AHI refill gradually after a restart
instead of in seconds.  The committed restart fixture
``tests/leak/fixtures/mariadb-restart-trace.csv`` was made with::

    .venv/bin/python tests/bench/record_leak_trace.py --output mariadb-restart-trace.csv \
        --steady 420 --warmup 900 --settled 300 --crash-warmup 600 --growth 420 --after 300 \
        --rename 420 --big-rows 400000 --cold-tables 2000

and ``tests/leak/fixtures/mariadb-restart-growth-trace.csv`` (tables opened soon after a restart)::

    .venv/bin/python tests/bench/record_leak_trace.py --output mariadb-restart-growth-trace.csv \
        --steady 240 --warmup 240 --growth 480 --after 120 --tables-per-sample 16 \
        --big-rows 100000 --cold-tables 600

The CSV is what ``mysql-snmp leak replay`` reads (``timestamp,value,open_table_definitions``,
``value`` being the dictionary bytes), plus ``phase``, ``ahi_bytes`` and ``rss_bytes``
columns (the replay ignores columns it does not know).  Timestamps are seconds since the
start.  The committed fixture ``tests/leak/fixtures/mariadb-tables-trace.csv`` was made
with the defaults.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import psutil  # noqa: E402
import pymysql  # noqa: E402

from mysql_snmp.agents.collection import Collector  # noqa: E402
from mysql_snmp.agents.config.settings import ConnectionSettings  # noqa: E402
from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB  # noqa: E402

WORK_TABLES = 8
PAGE_SIZE = 16384  # innodb_page_size of the throwaway server: one AHI node heap buffer
COLUMNS = ("timestamp", "phase", "value", "open_table_definitions", "ahi_bytes", "rss_bytes")


class ReadWriteMix(threading.Thread):
    """A light OLTP mix on its own connection until stopped (a few dozen statements a second).
    It reconnects when the server goes away, so it runs on across restarts."""

    def __init__(self, server: ThrowawayMariaDB, pause: float, big_rows: int = 0, cold_tables: int = 0):
        super().__init__(daemon=True)
        self.server, self.pause, self.big_rows, self.cold_tables = server, pause, big_rows, cold_tables
        self.stopping = threading.Event()
        self.statements = 0
        self.reconnects = 0
        self.random = random.Random(9)

    def run(self) -> None:
        step = 0
        while not self.stopping.is_set():
            try:
                conn = self.server.connect(autocommit=True, database="work")
            except (pymysql.MySQLError, OSError):
                self.stopping.wait(0.5)  # the server is restarting
                continue
            try:
                with conn.cursor() as cur:
                    while not self.stopping.is_set():
                        self._round(cur, step)
                        step += 1
                        self.stopping.wait(self.pause)
            except (pymysql.MySQLError, OSError):
                self.reconnects += 1
            finally:
                try:
                    conn.close()
                except (pymysql.MySQLError, OSError):
                    pass

    def _round(self, cur, step: int) -> None:
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
        if self.big_rows:
            for _ in range(2):
                cur.execute("SELECT pad FROM big WHERE id = %s", (self.random.randrange(self.big_rows),))
                cur.fetchall()
            cur.execute("UPDATE big SET hits = hits + 1 WHERE id = %s", (self.random.randrange(self.big_rows),))
            self.statements += 3
        if self.cold_tables and step % 4 == 0:
            # skewed: a few tables are read all the time, the last ones every few minutes, so
            # after a restart their definitions come back quickly at first, then slowly
            table = int(self.cold_tables * self.random.random() ** 4)
            cur.execute(f"SELECT COUNT(*) FROM c{table}")
            cur.fetchall()
            self.statements += 1


class Sampler:
    def __init__(self, server: ThrowawayMariaDB, writer: csv.writer):
        settings = ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")
        self.collector = Collector(settings, host_metrics="off")
        self.server = server
        self.process = psutil.Process(server.pid)
        self.writer = writer
        self.started = time.monotonic()

    def follow_restart(self) -> None:
        self.process = psutil.Process(self.server.pid)

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


def restart(server: ThrowawayMariaDB, sampler: Sampler, crash: bool) -> None:
    """Restart mariadbd on the same datadir and port: a clean shutdown, or SIGKILL (crash recovery)."""
    if crash:
        server.kill()
    else:
        server.stop()
    server.start()
    sampler.follow_restart()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--every", type=float, default=5.0, help="seconds between samples (5)")
    parser.add_argument("--steady", type=float, default=1200.0, help="seconds of the read/write mix alone (1200)")
    parser.add_argument("--warmup", type=float, default=0.0,
                        help="seconds after a clean restart (0: no restart)")
    parser.add_argument("--settled", type=float, default=0.0, help="seconds after the warm-up phase (0)")
    parser.add_argument("--crash-warmup", type=float, default=0.0,
                        help="seconds after a kill -9 restart (0: no crash)")
    parser.add_argument("--growth", type=float, default=600.0, help="seconds creating and opening tables (600)")
    parser.add_argument("--after", type=float, default=360.0, help="seconds after dropping them (360)")
    parser.add_argument("--rename", type=float, default=0.0, help="seconds of the rename loop at the end (0)")
    parser.add_argument("--tables-per-sample", type=int, default=8, help="tables created per sample interval (8)")
    parser.add_argument("--renames-per-sample", type=int, default=20, help="renames per sample interval (20)")
    parser.add_argument("--big-rows", type=int, default=0, help="rows of the randomly read table (0: none)")
    parser.add_argument("--cold-tables", type=int, default=0,
                        help="tables the mix reads with a skewed choice (0: none)")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between rounds of the mix (0.05)")
    args = parser.parse_args(argv)

    server = ThrowawayMariaDB(extra_args=("--table-definition-cache=20000", "--table-open-cache=20000"),
                              startup_timeout=120.0)
    with server:
        server.execute("CREATE DATABASE work", "CREATE DATABASE grown")
        for i in range(WORK_TABLES):
            server.execute(f"CREATE TABLE work.t{i} (id INT PRIMARY KEY, grp INT, note VARCHAR(80), KEY(grp))")
        if args.big_rows:
            server.execute("CREATE TABLE work.big (id INT PRIMARY KEY, hits INT, pad CHAR(100))",
                           f"INSERT INTO work.big SELECT seq - 1, 0, REPEAT('p', 100) FROM work.seq_1_to_{args.big_rows}")
        if args.cold_tables:
            conn = server.connect(autocommit=True, database="work")
            with conn.cursor() as cur:
                for i in range(args.cold_tables):
                    cur.execute(f"CREATE TABLE c{i} (id INT PRIMARY KEY, a VARCHAR(64), b INT, KEY(b))")
                    cur.execute(f"SELECT COUNT(*) FROM c{i}")  # open before the steady phase
            conn.close()
        mix = ReadWriteMix(server, args.pause, args.big_rows, args.cold_tables)
        mix.start()
        created = []

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

        renames = [0]

        def rename_table() -> None:
            # the same table under a new name each time: the table count stays flat
            due = int((time.monotonic() - rename_started) / args.every * args.renames_per_sample)
            with ddl.cursor() as cur:
                while renames[0] < due:
                    old, new = f"work.ren{renames[0]}", f"work.ren{renames[0] + 1}"
                    cur.execute(f"RENAME TABLE {old} TO {new}")
                    cur.execute(f"SELECT COUNT(*) FROM {new}")
                    cur.fetchall()
                    renames[0] += 1
            time.sleep(0.2)

        with args.output.open("w", newline="") as out:
            writer = csv.writer(out)
            out.write(f"# throwaway MariaDB, table_definition_cache=20000, sampled every {args.every:g} s; "
                      f"phases: steady {args.steady:g} s, "
                      + (f"clean restart + warmup {args.warmup:g} s, settled {args.settled:g} s, " if args.warmup else "")
                      + (f"kill -9 restart + crash-warmup {args.crash_warmup:g} s, " if args.crash_warmup else "")
                      + f"growth {args.growth:g} s ({args.tables_per_sample} tables per sample), "
                      f"dropped {args.after:g} s"
                      + (f", rename {args.rename:g} s ({args.renames_per_sample} renames per sample)" if args.rename else "")
                      + (f"; mix reads a {args.big_rows}-row table at random keys" if args.big_rows else "")
                      + (f" and {args.cold_tables} tables with a skewed choice" if args.cold_tables else "")
                      + "\n")
            writer.writerow(COLUMNS)
            sampler = Sampler(server, writer)
            run_phase(sampler, "steady", args.steady, args.every)
            out.flush()
            if args.warmup:
                restart(server, sampler, crash=False)
                run_phase(sampler, "warmup", args.warmup, args.every)
                run_phase(sampler, "settled", args.settled, args.every)
                out.flush()
            if args.crash_warmup:
                restart(server, sampler, crash=True)
                run_phase(sampler, "crash-warmup", args.crash_warmup, args.every)
                out.flush()
            ddl = server.connect(autocommit=True)  # after the restarts
            growth_started = time.monotonic()
            run_phase(sampler, "growth", args.growth, args.every, create_tables)
            out.flush()
            with ddl.cursor() as cur:
                for name in created:
                    cur.execute(f"DROP TABLE {name}")
            run_phase(sampler, "dropped", args.after, args.every)
            out.flush()
            if args.rename:
                ddl.cursor().execute("CREATE TABLE work.ren0 (id INT PRIMARY KEY, a VARCHAR(64), KEY(a))")
                rename_started = time.monotonic()
                run_phase(sampler, "rename", args.rename, args.every, rename_table)
        mix.stopping.set()
        mix.join(timeout=10)
        ddl.close()
        sampler.collector.close()
        print(f"{args.output}: {len(created)} tables created and dropped, {renames[0]} renames, "
              f"{mix.statements} mix statements, {mix.reconnects} mix reconnects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
