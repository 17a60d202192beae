"""``mysql-snmp generate``: write (or check) the files generated from the catalog."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EPILOG = """\
The MIB (mibs/), the OpenNMS data collection, graph reports, thresholds and events
(opennms/), the Grafana dashboards (grafana/dashboards/, built with the 'generate' extra) and
the Prometheus rules with their promtool tests (grafana/rules/) are generated from
agents/catalog.yaml and committed.  After editing the catalog:

  mysql-snmp generate            # rewrite what changed, list it
  mysql-snmp generate --check    # exit 1 and list the stale files (what CI runs)

Exit status: 0 when written (or current), 1 when --check finds stale files, 2 when a file
cannot be read or written.
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generate",
        help="regenerate the MIB, OpenNMS, Grafana and Prometheus files from the catalog",
        description="Write every file derived from the metric catalog, or check that the committed ones are current.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    parser.add_argument("--root", type=Path, default=None,
                        help="repository root to write into (default: this checkout)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    from ..catalog import load_catalog
    from ..generate import REPO_ROOT, stale_files, write_all

    root = args.root or REPO_ROOT
    catalog = load_catalog()
    try:
        if args.check:
            stale = stale_files(catalog, root)
        else:
            written = write_all(catalog, root)
    except OSError as exc:  # --root not writable, a file where a directory should be
        print(f"mysql-snmp generate: {exc.filename or root}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # the dashboards' builder is the optional extra "generate"
        package = (exc.name or "").split(".")[0]
        if package != "grafana_foundation_sdk":
            raise
        print(f"mysql-snmp generate: {package} is not installed; pip install 'mysql-snmp[generate]'",
              file=sys.stderr)
        return 2
    if args.check:
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        if stale:
            print("run 'mysql-snmp generate' and commit the result", file=sys.stderr)
        else:
            print("every generated file is current")
        return 1 if stale else 0
    for path in written:
        print(f"wrote {path}")
    if not written:
        print("nothing to write: every generated file is current")
    return 0
