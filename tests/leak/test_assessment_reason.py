"""The reason of a growing window compares the value with the table count on each side of the places
its trend split it (one-off jumps such as a restart's drop, gaps): the trend hands those over
(``Trend.split``) instead of the reason finding the jumps again.  Replayed here on the leak families
and the real MariaDB traces, every reason is what finding the jumps again gave."""

from __future__ import annotations

import csv
import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from mysql_snmp.agents.leak import assessment
from mysql_snmp.agents.leak.config import LeakConfig, series_config
from mysql_snmp.agents.leak.series_detector import SeriesDetector
from mysql_snmp.agents.leak.trend import find_steps
from tests.leak import families

FIXTURES = Path(__file__).parent / "fixtures"
DICTIONARY = "innodb_mem_dictionary_bytes"


@pytest.fixture
def reasons_both_ways(monkeypatch):
    """Every reason the detector works out, with the one the window's jumps found again give:
    (reason, reason from the jumps found again, the trend's split)."""
    judged = []
    reason = assessment._reason

    def both_ways(trend, times, values, aux, series, config):
        answer = reason(trend, times, values, aux, series, config)
        jumps = tuple(find_steps(values, config.step_factor, series.resolution_bytes))
        judged.append((answer, reason(dataclasses.replace(trend, split=jumps), times, values, aux, series, config),
                       trend.split))
        return answer

    monkeypatch.setattr(assessment, "_reason", both_ways)
    return judged


def replay(series_id, rows, config=None, limit=None):
    detector = SeriesDetector(series_id, series_config(series_id, limit_bytes=limit),
                              config or LeakConfig(state_file=None))
    for t, value, aux in rows:
        detector.feed(t, value, aux)


def recorded(name: str, stretch: float) -> list[tuple[float, float, float]]:
    """A real trace's dictionary bytes and table count, its times stretched (a slower server)."""
    with (FIXTURES / name).open() as stream:
        rows = csv.DictReader(line for line in stream if not line.startswith("#"))
        return [(float(r["timestamp"]) * stretch, float(r["value"]), float(r["open_table_definitions"]))
                for r in rows]


# table growth at both ends of its sweep and in the middle, a leak across a restart's drop, and
# table churn with a nightly FLUSH TABLES (steps in the value and the count together)
LEAKS = [(families.table_growth, 1), (families.table_growth, 3), (families.table_growth, 5),
         (families.seed_leak_after_restart, 4), (families.churn_and_flush, 1)]


@pytest.mark.parametrize("make, seed", LEAKS, ids=[f"{m.__name__}-{s}" for m, s in LEAKS])
def test_reasons_on_the_families_are_those_of_the_jumps_found_again(reasons_both_ways, make, seed):
    trace = make(seed, 2.0)
    replay(trace.series, trace.rows(), limit=trace.limit_bytes)
    assert reasons_both_ways, trace.notes  # the trace has growing windows to give a reason for
    assert [(now, before) for now, before, _ in reasons_both_ways if now != before] == []


def test_reasons_on_the_real_traces_are_those_of_the_jumps_found_again(reasons_both_ways):
    # each recording at its own pace and 4 and 12 times slower, day one shortened so that
    # the warm-ups after the restarts are judged against a fitted curve as well
    short_day = LeakConfig(state_file=None, mature_baseline_seconds=1800)
    for name in sorted(path.name for path in FIXTURES.glob("mariadb-*.csv")):
        for stretch in (1, 4, 12):
            replay(DICTIONARY, recorded(name, stretch), short_day)
    reasons = Counter(now for now, _, _ in reasons_both_ways)
    # the replays reach both reasons, and windows with a restart's drop in them
    assert reasons["tables"] > 0 and reasons["unexplained"] > 0, reasons
    assert any(split for _, _, split in reasons_both_ways)
    assert [(now, before) for now, before, _ in reasons_both_ways if now != before] == []
