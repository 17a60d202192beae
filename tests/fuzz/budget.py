"""The fuzz tests' budget: a few seconds each in CI, as long as asked on demand.

``MYSQL_SNMP_FUZZ_EXAMPLES`` sets the examples per fuzz test (default 200, a few seconds each);
``tests/bench/bench_fuzz.py --examples N`` runs the suite with a larger one.  Every example also
runs under an alarm (``no_hang``): a parser that loops for ever fails the example that made it
loop instead of stalling the suite.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager

from hypothesis import HealthCheck, settings

ENV = "MYSQL_SNMP_FUZZ_EXAMPLES"
DEFAULT_EXAMPLES = 200
HANG_SECONDS = 5.0


def examples() -> int:
    text = os.environ.get(ENV, "")
    return int(text) if text.strip() else DEFAULT_EXAMPLES


def fuzz_settings(share: float = 1.0) -> settings:
    """Hypothesis settings for one fuzz test: ``share`` of the budget's examples, no per-example
    deadline (a loaded CI machine is slow, the alarm catches hangs), no database of failures kept
    in the worktree (a found failure is written down as an explicit regression test instead)."""
    return settings(max_examples=max(10, int(examples() * share)), deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Hang(Exception):
    pass


@contextmanager
def no_hang(seconds: float = HANG_SECONDS):
    def expired(_signum, _frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
