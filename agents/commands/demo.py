"""``mysql-snmp demo``: a private MariaDB, a little workload, one collection printed."""

from __future__ import annotations

import argparse
import json
import sys

EPILOG = """\
examples:
  mysql-snmp demo           # start a throwaway MariaDB, run a workload, print one collection
  mysql-snmp demo --json    # the same collection as JSON

The server lives in a temporary directory on a free loopback port and is removed
when the command ends; a MariaDB already running on this machine is never touched.
Needs Debian's mariadb-server package (mariadbd, mariadb-install-db).
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


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="start a throwaway MariaDB, run a small workload and print one collection",
        description="See what mysql-snmp collects without configuring anything: a private MariaDB "
        "is started, loaded with a small workload, collected once, and removed.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the collection as JSON")
    parser.set_defaults(handler=run)


def run(args) -> int:
    import pymysql

    from agents.collection import Collector
    from agents.commands.collect import format_snapshot, snapshot_document
    from agents.connection import ConnectionSettings
    from agents.throwaway import ThrowawayError, ThrowawayMariaDB

    print("starting a throwaway MariaDB ...", file=sys.stderr)
    try:
        with ThrowawayMariaDB() as server:
            print(f"MariaDB on {server.address}, running a workload ...", file=sys.stderr)
            server.execute(*WORKLOAD)
            settings = ConnectionSettings(host="127.0.0.1", port=server.port, user="root", password="")
            with Collector(settings) as collector:
                snapshot = collector.collect()
    except (ThrowawayError, pymysql.err.Error) as exc:
        print(f"mysql-snmp demo: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(snapshot_document(snapshot), indent=2, default=str))
    else:
        print(format_snapshot(snapshot))
    return 0 if snapshot.up else 1
