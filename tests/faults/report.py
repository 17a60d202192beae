"""The fault suite's table: each fault test records what it injected, what it saw and how long recovery took.

The table is printed at the end of the pytest run (``conftest.py``), so a CI log shows every fault with
its outcome, not only pass/fail.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FaultRow:
    fault: str
    agent: str
    observed: str
    recovery_seconds: float | None
    go: str | None = None  # what mysqld_exporter did against the same fault, where it has the feature


ROWS: list[FaultRow] = []


def record_fault(fault: str, agent: str, observed: str, recovery_seconds: float | None = None,
                 go: str | None = None) -> None:
    """Add one row: the fault injected, the agent under test (exporter / agentx / both), what was observed,
    the seconds from the end of the fault to the first fresh, correct value (None: nothing to recover),
    and what Go's mysqld_exporter did in the same run (None: not run, or no such feature)."""
    ROWS.append(FaultRow(fault, agent, observed, recovery_seconds, go))


def format_table(rows: list[FaultRow]) -> list[str]:
    headers = ("fault", "agent", "observed", "recovery", "mysqld_exporter")
    cells = [
        (row.fault, row.agent, row.observed, "-" if row.recovery_seconds is None else f"{row.recovery_seconds:.1f} s",
         row.go or "-")
        for row in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths))
    lines = [line, "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(cell, widths)) for cell in cells]
    return lines
