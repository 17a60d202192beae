"""``mysql-snmp demo``: the whole product on a private MariaDB: a collection, the Prometheus
exporter scraped over HTTP, and the AgentX subagent read through a private snmpd."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from contextlib import ExitStack
from pathlib import Path

EPILOG = """\
examples:
  mysql-snmp demo           # MariaDB + workload, exporter scraped, subagent read with snmpget, all stopped
  mysql-snmp demo --serve   # the same, then keep everything running until Ctrl-C
  mysql-snmp demo --json    # only the collection, as JSON

Everything lives in temporary directories on free loopback ports and is removed when the
command ends; a MariaDB or snmpd already running on this machine is never touched.
Needs Debian's mariadb-server; the SNMP part needs snmpd and snmp (skipped without them).
"""

WORKLOAD = (
    "CREATE DATABASE IF NOT EXISTS demo",
    "CREATE TABLE IF NOT EXISTS demo.orders (id INT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(40),"
    " amount DECIMAL(10,2), KEY (customer)) ENGINE=InnoDB",
    "INSERT INTO demo.orders (customer, amount) SELECT CONCAT('customer', seq % 50), seq / 7"
    " FROM demo.seq_1_to_5000",  # MariaDB's Sequence engine: rows 1..5000 without a loop
    "UPDATE demo.orders SET amount = amount * 1.1 WHERE customer = 'customer7'",
    "DELETE FROM demo.orders WHERE id % 100 = 0",
    "SELECT customer, SUM(amount) FROM demo.orders GROUP BY customer",
    "SELECT COUNT(*) FROM demo.orders WHERE customer LIKE 'customer1%'",
    "FLUSH BINARY LOGS",
)

# Original mysql-snmp objects (same OIDs as the Perl agent) and one of the new tree.
SNMP_SCALARS = ("myKeyBufferSize", "myHistoryList", "myComSelect", "myComUpdate", "myComDelete",
                "myThreadsConnected", "myInnodbMemDictionaryBytes")
# The row printed in full; the others get their state only.
LEAK_ROW_SHOWN = "innodb_mem_dictionary_bytes"
LEAK_STATES = {"0": "ok", "1": "suspect", "2": "leaking"}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the whole product against a throwaway MariaDB: collection, exporter, SNMP subagent",
        description="See mysql-snmp working without configuring anything: a private MariaDB is started "
        "and loaded with a small workload, the Prometheus exporter is scraped once, the AgentX subagent "
        "is read through a private snmpd, and everything is stopped and removed.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--serve", action="store_true",
                        help="keep MariaDB, the exporter, snmpd and the subagent running until Ctrl-C")
    parser.add_argument("--json", action="store_true",
                        help="print only the collection, as JSON (no exporter, no SNMP)")
    parser.set_defaults(handler=run)


def say(text: str = "") -> None:
    print(text, flush=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    import pymysql

    from ..demo.stack import DemoError
    from ..demo.netsnmp_sandbox import NetSnmpError
    from ..demo.throwaway import ThrowawayError

    # SIGTERM unwinds like Ctrl-C, so the finally clauses stop every child process.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _run(args)
    except (ThrowawayError, pymysql.err.Error, DemoError, NetSnmpError, OSError) as exc:
        print(f"mysql-snmp demo: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args) -> int:
    from ..collection import Collector
    from .collect import snapshot_document
    from ..config.settings import ConnectionSettings
    from ..demo.stack import write_root_my_cnf
    from ..demo.throwaway import ThrowawayMariaDB

    with ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mysql-snmp-demo-")))
        print("starting a throwaway MariaDB ...", file=sys.stderr, flush=True)  # stdout may be --json
        server = stack.enter_context(ThrowawayMariaDB())
        pids = {"mariadbd": server.pid}
        server.execute(*WORKLOAD)
        ((key_buffer_size,),) = server.execute("SELECT @@GLOBAL.key_buffer_size")
        settings = ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")
        with Collector(settings) as collector:
            snapshot = collector.collect()
        if args.json:
            say(json.dumps(snapshot_document(snapshot), indent=2, default=str))
            return 0 if snapshot.up else 1
        show_server(server, snapshot, key_buffer_size)
        my_cnf = write_root_my_cnf(directory, server)
        endpoints = [f"MariaDB      127.0.0.1:{server.port} (user root, no password; socket {server.socket_path})"]
        endpoints += show_exporter(stack, directory, my_cnf, pids)
        endpoints += show_snmp(stack, directory, my_cnf, pids)

        say("\n== where everything is ==")
        for line in endpoints:
            say(f"  {line}")
        say("  pids: " + ", ".join(f"{name} {pid}" for name, pid in pids.items()))
        if args.serve:
            wait_for_interrupt()
        say("stopping everything ...")
    say("stopped: " + ", ".join(f"{name} {pid}" for name, pid in pids.items()) + "; temp dirs removed")
    return 0 if snapshot.up else 1


def show_server(server, snapshot, key_buffer_size: int) -> None:
    info = snapshot.server
    identity = f"{info.flavour} {info.version_string}" if info else "unknown server"
    failed = [name for name, status in snapshot.sources.items() if not status.ok]
    say(f"{identity} on {server.address} (pid {server.pid}); workload: 5000 orders inserted, updated, "
        "deleted, summed")
    say(f"server variable key_buffer_size = {key_buffer_size}")
    say(f"one collection: up={int(snapshot.up)}, {len(snapshot.values)} values and "
        f"{sum(len(points) for points in snapshot.series.values())} series points from "
        f"{len(snapshot.sources)} sources" + (f" (failed: {', '.join(failed)})" if failed else "")
        + "; `mysql-snmp collect` prints them all")


def show_exporter(stack: ExitStack, directory: Path, my_cnf: Path, pids: dict) -> list[str]:
    from ..demo.stack import metrics_excerpt, scrape, start_exporter

    say("\n== Prometheus exporter (mysql-snmp exporter) ==")
    exporter = start_exporter(stack, directory, my_cnf)
    pids["exporter"] = exporter.process.pid
    excerpt, count = metrics_excerpt(scrape(exporter.url))
    say(f"GET {exporter.url}: {count} samples; excerpt:")
    for line in excerpt:
        say(f"  {line}")
    return [f"exporter     {exporter.url}   (curl -s {exporter.url} | grep mysql_leak)"]


def show_snmp(stack: ExitStack, directory: Path, my_cnf: Path, pids: dict) -> list[str]:
    from ..catalog import format_oid, load_catalog
    from ..demo.stack import (MIB_DIR, MIB_MODULE, OidNames, mib_names_resolve, scalar_oid, start_subagent,
                                   table_rows)
    from ..demo.netsnmp_sandbox import INSTALL_HINT, Snmpd, missing_net_snmp_tools

    say("\n== SNMP (mysql-snmp agentx under a private snmpd) ==")
    missing = missing_net_snmp_tools("snmpd", "snmpget", "snmpbulkwalk", "snmptranslate")
    if missing:
        say(f"skipped: {', '.join(missing)} not found; {INSTALL_HINT}")
        return []
    snmpd = Snmpd(directory / "snmpd")
    stack.callback(snmpd.stop)  # before start(): a start that times out leaves snmpd running
    snmpd.start()
    pids["snmpd"] = snmpd.process.pid
    agent = start_subagent(stack, snmpd, directory, my_cnf)
    pids["agentx"] = agent.pid
    say(f"snmpd on udp:{snmpd.address}, AgentX master socket {snmpd.agentx_socket}; subagent serving")

    catalog = load_catalog()
    names = OidNames(catalog)
    oids = [scalar_oid(catalog, name) for name in SNMP_SCALARS]
    mib_options = ("-M", f"+{MIB_DIR}", "-m", MIB_MODULE)
    say(f"snmpget -v2c -c public {snmpd.address} <{len(oids)} objects>:")
    if mib_names_resolve(snmpd.env):
        for line in snmpd.run("snmpget", *oids, options=mib_options).stdout.splitlines():
            say(f"  {line}")
    else:
        for var in snmpd.get(*oids):
            say(f"  {names.name(var.oid):32} = {var.type}: {var.value}")
        say("  (names from the catalog: MYSQL-SERVER-MIB imports the IETF SNMPv2 MIBs, which Debian "
            "does not ship; with them, add -M +mibs -m MYSQL-SERVER-MIB)")

    table = catalog.tables["myLeakTable"]
    table_oid = format_oid(table.oid)
    rows = table_rows(catalog, "myLeakTable", snmpd.bulkwalk(table_oid))
    verdicts = {index: leak_verdict(columns) for index, columns in rows.items()}
    tally = ", ".join(f"{sum(v == verdict for v in verdicts.values())} {verdict}"
                      for verdict in sorted(set(verdicts.values())))
    say(f"snmpbulkwalk -v2c -c public {snmpd.address} {table_oid} (myLeakTable): {len(rows)} rows, "
        f"one per watched memory series: {tally or 'none yet'}")
    for index, columns in rows.items():
        series = columns["myLeakSeriesName"].text if "myLeakSeriesName" in columns else index
        if series == LEAK_ROW_SHOWN or verdicts[index] != "ok":
            say(f"  row {series!r} (index {index}):")
            for name, var in columns.items():
                say(f"      {name:26} = {var.type}: {var.value}")
    root = format_oid(catalog.legacy_root[:-1])
    return [f"snmpd        udp:{snmpd.address}   (snmpbulkwalk -v2c -c public {snmpd.address} {root})",
            f"AgentX       {snmpd.agentx_socket}"]


def leak_verdict(columns: dict) -> str:
    state = columns.get("myLeakState")
    return LEAK_STATES.get(state.value, state.value) if state else "no state"


def wait_for_interrupt() -> None:
    """Block until Ctrl-C or SIGTERM; the handlers are in place before the prompt is printed,
    so a signal sent as soon as it appears still ends the wait (and not the program)."""
    stop = threading.Event()
    previous = {signum: signal.signal(signum, lambda *_: stop.set()) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        say("\nserving until Ctrl-C ...")
        while not stop.wait(1.0):
            pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
