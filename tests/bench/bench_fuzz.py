"""The fuzz tests (tests/fuzz/) with a long budget, on demand.

    .venv/bin/python tests/bench/bench_fuzz.py [--examples 20000] [pytest args...]

CI runs them with MYSQL_SNMP_FUZZ_EXAMPLES' default (200 examples each, a few seconds); this
runs the same properties with --examples each and prints pytest's summary and the time taken.
A failure found here is to be kept as an explicit regression test next to the fuzz test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=20_000, help="examples per fuzz test (default 20000)")
    options, pytest_args = parser.parse_known_args()
    environment = {**os.environ, "MYSQL_SNMP_FUZZ_EXAMPLES": str(options.examples)}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "tests/fuzz", "-q", "--durations=0", *pytest_args],
                            cwd=REPO, env=environment)
    print(f"fuzz suite with {options.examples} examples per test: exit {result.returncode} "
          f"in {time.monotonic() - started:.0f} s")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
