"""RSS of N remembered /probe targets against a real MariaDB (the budget docs/security.md states).

One exporter, one MariaDB, N auth modules ([client.mN], each the same monitoring user and
address), each probed twice with the default collectors; RSS before the first probe and after.

    .venv/bin/python tests/bench/bench_probe_targets.py --targets 500
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mysql_snmp.agents.demo.throwaway import ThrowawayMariaDB  # noqa: E402
from tests.faults.hostile_kit import MB, remembered_targets_rss  # noqa: E402
from tests.support import create_monitoring_user  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, \
            ThrowawayMariaDB(extra_args=(f"--max-connections={args.targets + 50}",)) as server:
        user = create_monitoring_user(server, Path(directory))
        measured = remembered_targets_rss(user.my_cnf, server.port, args.targets, Path(directory))
    print(f"{measured.count} targets ({measured.body_bytes} bytes a probe body): RSS {measured.alone / MB:.1f} MB "
          f"alone, +{measured.grown / MB:.1f} MB with the targets, {measured.per_target / 1024:.0f} KiB a target; "
          f"{measured.threads} threads, {measured.descriptors} fds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
