"""Run the leak detector over a recorded trace (CSV) and report its state changes.

Trace format: a header row, then one sample per row::

    timestamp,value,open_table_definitions
    1700000000,314572800,390
    1700000015,314580912,390

``timestamp`` in seconds (``time`` and ``t`` are accepted too), ``value`` in bytes
(``bytes`` accepted), ``open_table_definitions`` optional (a cell may be empty).  Rows may
come in any order (they are sorted); gaps are allowed; a row repeated identically is
read once.  Blank lines and lines starting with ``#`` are skipped.  Anything else that is not a number is a TraceError naming its line.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable, Iterator, TextIO

from .config import LeakConfig, SeriesConfig
from .forecast import forecast
from .series_detector import STATE_NAMES, SeriesDetector

TIME_COLUMNS = ("timestamp", "time", "t")
VALUE_COLUMNS = ("value", "bytes")
AUX_COLUMNS = ("open_table_definitions",)
TABLES_SERIES = "status_open_table_definitions"


class TraceError(ValueError):
    """A trace that cannot be replayed; the message names the line."""


@dataclass(frozen=True)
class Sample:
    line: int
    t: float
    value: float
    aux: float | None


def _column(header: list[str], names: tuple[str, ...], required: bool, where: str) -> int | None:
    for name in names:
        if name in header:
            return header.index(name)
    if required:
        raise TraceError(f"{where}: header {header} has no column {' or '.join(names)}")
    return None


def _number(cell: str, what: str, where: str, allow_empty: bool = False) -> float | None:
    cell = cell.strip()
    if cell == "" and allow_empty:
        return None
    try:
        number = float(cell)
    except ValueError:
        raise TraceError(f"{where}: {what} {cell!r} is not a number") from None
    if not math.isfinite(number):
        raise TraceError(f"{where}: {what} {cell!r} is not a finite number")
    return number


def _csv_rows(stream: TextIO, source: str) -> Iterator[tuple[int, list[str]]]:
    """(line the row starts on, cells): a quoted cell may span lines, so rows are not lines.
    The csv module's own refusals (a field over its size limit) become TraceErrors."""
    reader = csv.reader(stream)
    while True:
        first_line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TraceError(f"{source}:{first_line}: {exc}") from None
        yield first_line, row


def read_trace(stream: TextIO, source: str = "trace") -> list[Sample]:
    """Parse and sort a trace; raises TraceError on the first bad line."""
    header: list[str] | None = None
    samples: list[Sample] = []
    for line_number, row in _csv_rows(stream, source):
        if not row or all(not cell.strip() for cell in row) or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            where = f"{source}:{line_number}"  # comment lines may come before the header
            t_col = _column(header, TIME_COLUMNS, True, where)
            v_col = _column(header, VALUE_COLUMNS, True, where)
            a_col = _column(header, AUX_COLUMNS, False, where)
            if len(set(header)) != len(header):
                raise TraceError(f"{source}:{line_number}: header {header} repeats a column")
            continue
        where = f"{source}:{line_number}"
        if len(row) != len(header):
            raise TraceError(f"{where}: {len(row)} fields, the header has {len(header)}")
        t = _number(row[t_col], "timestamp", where)
        value = _number(row[v_col], "value", where)
        if value < 0:
            raise TraceError(f"{where}: value {row[v_col].strip()!r} is negative (bytes cannot be)")
        aux = _number(row[a_col], "open_table_definitions", where, allow_empty=True) if a_col is not None else None
        samples.append(Sample(line_number, t, value, aux))
    if header is None:
        raise TraceError(f"{source}: empty trace (no header row)")
    if not samples:
        raise TraceError(f"{source}: no samples after the header")
    samples.sort(key=lambda s: (s.t, s.line))
    unique = samples[:1]
    for current in samples[1:]:
        previous = unique[-1]
        if current.t != previous.t:
            unique.append(current)
        elif (current.value, current.aux) != (previous.value, previous.aux):
            raise TraceError(
                f"{source}:{current.line}: timestamp {current.t:g} repeats line {previous.line} with another value"
            )
        # an identical repeated row (a trace concatenated twice) carries nothing new
    return unique


@dataclass(frozen=True)
class ReplayChange:
    t: float
    state: str
    rate_bytes_per_hour: float | None
    reason: str
    time_to_limit_seconds: float | None

    def as_dict(self, with_forecast: bool = False) -> dict:
        record = {
            "t": int(self.t) if float(self.t).is_integer() else self.t,
            "state": self.state,
            "rate_bytes_per_hour": None if self.rate_bytes_per_hour is None else round(self.rate_bytes_per_hour, 1),
            "reason": self.reason,
        }
        if with_forecast:
            record["time_to_limit_seconds"] = (
                None if self.time_to_limit_seconds is None else round(self.time_to_limit_seconds)
            )
        return record


def replay(samples: Iterable[Sample], series_id: str, series: SeriesConfig, config: LeakConfig) -> Iterator[ReplayChange]:
    """Feed the samples in order; yield one ReplayChange per state change."""
    samples = list(samples)
    if series.explained_by is None and any(s.aux is not None for s in samples):
        # the trace's own open_table_definitions column says what explains the growth
        series = dataclasses.replace(series, explained_by=TABLES_SERIES)
    detector = SeriesDetector(series_id, series, config)
    use_aux = series.explained_by is not None
    for sample in samples:
        change = detector.feed(sample.t, sample.value, sample.aux if use_aux else None)
        if change is None:
            continue
        reading = detector.reading()
        seconds, _ = forecast(reading, series, {})
        yield ReplayChange(sample.t, STATE_NAMES[change[1]], reading.rate_bytes_per_hour, reading.reason, seconds)
