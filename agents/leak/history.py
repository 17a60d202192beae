"""Bounded history of one watched series: what the trend windows and the baseline read.

Two tiers keep memory and the state file small whatever the sampling rate:
- bins: the median of the samples of each ``bin_seconds`` (one minute by default), for
  as long as the longest trend window; the median already shrugs off single odd samples;
- buckets: min / max / mean per ``baseline_bucket_seconds`` (15 minutes), for the whole
  baseline (a week by default), enough to know the series' normal range and its high-water mark,
  plus ``extra_seconds`` more that only the seasonal judgement reads (three days: the daily mean
  of the same day a week before and the spread of such week-over-week differences,
  agents/leak/seasonal.py); the baseline never reads them.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from .trend import median


@dataclass(frozen=True)
class Bin:
    start: float
    value: float
    aux: float | None  # the explanatory series (e.g. Open_table_definitions), when sampled


@dataclass
class Bucket:
    start: float
    low: float
    high: float
    total: float
    count: int

    @property
    def mean(self) -> float:
        return self.total / self.count


@dataclass(frozen=True)
class Baseline:
    """The history before a trend window: how high the series went and how much it varies."""

    span_seconds: float
    high: float
    # How far the series wanders on its own: the larger of the robust spread (1.4826 x MAD)
    # of the bucket means around that trend and the typical half-range inside a bucket.
    noise: float = 0.0


@dataclass(frozen=True)
class WindowPoints:
    times: list[float]
    values: list[float]
    aux: list[float] | None  # None unless every point has the explanatory value
    coverage: float  # share of the window's points that hold data


@dataclass
class _Group:
    """Consecutive bins that make one point of a trend window."""

    key: int  # start of the group / its width
    members: list[Bin]
    cached: tuple[float, float, float | None] | None = None

    def point(self, bin_seconds: float) -> tuple[float, float, float | None]:
        if self.cached is None:
            members = self.members
            member_aux = [m.aux for m in members if m.aux is not None]
            self.cached = (
                sum(m.start for m in members) / len(members) + bin_seconds / 2,
                median([m.value for m in members]),
                median(member_aux) if len(member_aux) == len(members) else None,
            )
        return self.cached


def _add_to_groups(groups: deque[_Group], width: float, closed: Bin) -> None:
    key = math.floor(closed.start / width)
    if groups and groups[-1].key == key:
        groups[-1].members.append(closed)
        groups[-1].cached = None
    else:
        groups.append(_Group(key, [closed]))


class SeriesHistory:
    def __init__(self, bin_seconds: float, bins_kept: float, bucket_seconds: float, baseline_seconds: float,
                 extra_seconds: float = 0.0):
        self.bin_seconds = bin_seconds
        self.extra_seconds = extra_seconds
        self.bins_kept_seconds = bins_kept
        self.bucket_seconds = bucket_seconds
        self.baseline_seconds = baseline_seconds
        self.bins: deque[Bin] = deque()
        self.buckets: deque[Bucket] = deque()
        self.last_time: float | None = None
        self._pending_start: float | None = None
        self._pending_values: list[float] = []
        self._pending_aux: list[float] = []
        # memo(): what is worked out from the ended buckets, until a bucket opens
        self._memo: dict[tuple, Any] = {}
        # width -> groups of consecutive bins, kept up to date as bins close, so a window
        # does not regroup hours of bins on every evaluation
        self._groups: dict[float, deque[_Group]] = {}

    # -- feeding -----------------------------------------------------------------------

    def add(self, t: float, value: float, aux: float | None = None) -> Bin | None:
        """Record one sample; returns the bin it completed, if any.  Times must increase."""
        if self.last_time is not None and t <= self.last_time:
            raise ValueError(f"sample at {t} is not after the previous one at {self.last_time}")
        self.last_time = t
        completed = None
        bin_start = math.floor(t / self.bin_seconds) * self.bin_seconds
        if self._pending_start is not None and bin_start != self._pending_start:
            completed = self._close_pending()
        if self._pending_start is None:
            self._pending_start = bin_start
        self._pending_values.append(float(value))
        if aux is not None:
            self._pending_aux.append(float(aux))
        self._add_to_bucket(t, float(value))
        return completed

    def restart_trend(self) -> None:
        """Forget the trend bins (after a long gap); the baseline is kept."""
        self.bins.clear()
        self._groups.clear()
        self._pending_start = None
        self._pending_values = []
        self._pending_aux = []

    def move_before(self, t: float) -> float:
        """Move the whole history back in time so that it ends just before ``t``; returns the
        shift of the bins (seconds, negative).

        For a wall clock that stepped back past the last sample (``t`` before ``last_time``):
        the history keeps its shape and the samples from ``t`` on carry on from it.  Bins move
        by whole bins, buckets by whole buckets (at least as far), so both stay on their grid
        and the next sample's bin and bucket come after them.
        """
        if self.last_time is None:
            return 0.0
        shift = -(math.floor((self.last_time - t) / self.bin_seconds) + 1) * self.bin_seconds
        self.move_by(shift)
        return shift

    def move_by(self, shift: float) -> None:
        """Move the whole history by ``shift`` seconds, a whole number of bins (either way); buckets
        by whole buckets, no further forward and no less far back, so they stay on their grid, in
        order, and before the next sample."""
        bucket_shift = math.floor(shift / self.bucket_seconds) * self.bucket_seconds
        self.bins = deque(Bin(b.start + shift, b.value, b.aux) for b in self.bins)
        for bucket in self.buckets:
            bucket.start += bucket_shift
        if self.last_time is not None:
            self.last_time += shift
        if self._pending_start is not None:
            self._pending_start += shift
        self._groups.clear()
        self._memo.clear()

    def _close_pending(self) -> Bin:
        aux = median(self._pending_aux) if len(self._pending_aux) == len(self._pending_values) else None
        closed = Bin(self._pending_start, median(self._pending_values), aux)
        self.bins.append(closed)
        while self.bins and self.bins[0].start < closed.start - self.bins_kept_seconds:
            self.bins.popleft()
        for width, groups in self._groups.items():
            _add_to_groups(groups, width, closed)
            while groups and (groups[0].key + 1) * width <= closed.start - self.bins_kept_seconds:
                groups.popleft()
        self._pending_start = None
        self._pending_values = []
        self._pending_aux = []
        return closed

    def _add_to_bucket(self, t: float, value: float) -> None:
        start = math.floor(t / self.bucket_seconds) * self.bucket_seconds
        if self.buckets and self.buckets[-1].start == start:
            b = self.buckets[-1]
            b.low = min(b.low, value)
            b.high = max(b.high, value)
            b.total += value
            b.count += 1
            return
        self.buckets.append(Bucket(start, value, value, value, 1))
        while self.buckets and self.buckets[0].start < start - self.baseline_seconds - self.extra_seconds:
            self.buckets.popleft()
        self._memo.clear()

    # -- reading -----------------------------------------------------------------------

    def level(self, last_bins: int = 3) -> float | None:
        """Current level: median of the last completed bins (one odd minute cannot move it)."""
        if not self.bins:
            return None
        recent = [b.value for b in list(self.bins)[-last_bins:]]
        return median(recent)

    def highest_before(self, last_bins: int = 3) -> float | None:
        """The highest completed bin before the last ``last_bins`` (those ``level`` reads)."""
        earlier = list(self.bins)[:-last_bins]
        return max(b.value for b in earlier) if earlier else None

    def window(self, now: float, seconds: float, points: int) -> WindowPoints:
        """The completed bins of the last ``seconds``, grouped into at most ``points`` points.

        Groups are aligned to multiples of their width, so a group keeps its members from
        one evaluation to the next; only groups that start inside the window count.
        ``now`` in the past gives an earlier window (the bins kept allowing).
        """
        width = max(self.bin_seconds, seconds / points)
        groups = self._groups.get(width)
        if groups is None:
            groups = self._groups[width] = deque()
            for b in self.bins:
                _add_to_groups(groups, width, b)
        start = now - seconds
        times, values, aux = [], [], []
        aux_complete = True
        for group in reversed(groups):
            if group.key * width >= now:
                continue
            if group.key * width < start:
                break
            t, value, group_aux = group.point(self.bin_seconds)
            times.append(t)
            values.append(value)
            if group_aux is None:
                aux_complete = False
            else:
                aux.append(group_aux)
        times.reverse()
        values.reverse()
        aux.reverse()
        expected = max(1, round(seconds / width))
        return WindowPoints(times, values, aux if aux_complete and aux else None, min(1.0, len(times) / expected))

    def bucket_means(self, now: float, seconds: float) -> tuple[list[float], list[float]]:
        """(mid-times, means) of the completed buckets that start within the last ``seconds``:
        the history beyond the bins kept, coarser."""
        start = now - seconds
        done = [b for b in self.buckets if b.start >= start and b.start + self.bucket_seconds <= now]
        return [b.start + self.bucket_seconds / 2 for b in done], [b.mean for b in done]

    def baseline(self, now: float, exclude_seconds: float) -> Baseline | None:
        """Summary of the buckets that ended before ``now - exclude_seconds``."""
        ended = self._ended_by(now - exclude_seconds)
        if ended == 0:
            return None
        # the day of buckets kept beyond the baseline (for week-over-week comparisons) is left out
        oldest = self.buckets[-1].start - self.baseline_seconds
        first = 0
        while first < ended and self.buckets[first].start < oldest:
            first += 1
        if first == ended:
            return None
        return self.memo(("baseline", first, ended),
                         lambda: self._summarise(list(itertools.islice(self.buckets, first, ended))))

    def _ended_by(self, cutoff: float) -> int:
        """How many buckets (from the oldest) ended by ``cutoff``.  Counted from the newest:
        the buckets are in time order and the cutoffs asked are at most hours back, so this
        is a few steps, where counting from the oldest walked the whole week on every call."""
        usable = len(self.buckets)
        while usable and self.buckets[usable - 1].start + self.bucket_seconds > cutoff:
            usable -= 1
        return usable

    def memo(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept until the buckets change other than by a sample added to the
        newest one: for what is worked out from the buckets that ended (the baseline, the
        daily pattern), which stay the same for the minutes until the next bucket opens, while
        the detector evaluates every minute.  ``key`` must say which buckets ``compute`` reads
        (with the oldest bucket's start, added here, it names them)."""
        key = (self.buckets[0].start if self.buckets else None, *key)
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def ended_buckets(self, now: float) -> int:
        """How many buckets ended by ``now`` (every one but the newest, while samples come)."""
        return self._ended_by(now)

    def _summarise(self, buckets: list[Bucket]) -> Baseline:
        high = max(b.high for b in buckets)
        # The baseline's own trend by the medians of its two halves: cheap, robust enough
        # to take a slow drift out of the noise without an O(n^2) fit over a week of buckets.
        slope = 0.0
        if len(buckets) >= 4:
            half = len(buckets) // 2
            first, second = buckets[:half], buckets[-half:]
            dt = median([b.start for b in second]) - median([b.start for b in first])
            if dt > 0:
                slope = (median([b.mean for b in second]) - median([b.mean for b in first])) / dt
        span = buckets[-1].start + self.bucket_seconds - buckets[0].start
        residual_means = [b.mean - slope * b.start for b in buckets]
        centre = median(residual_means)
        spread = 1.4826 * median([abs(r - centre) for r in residual_means])
        # the trend's own climb across a bucket is not noise
        climb = abs(slope) * self.bucket_seconds
        inside = median([max(0.0, b.high - b.low - climb) / 2 for b in buckets])
        return Baseline(span, high, max(spread, inside))

    # -- persistence -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "last_time": self.last_time,
            "bins": [[b.start, b.value, b.aux] for b in self.bins],
            "buckets": [[b.start, b.low, b.high, b.total, b.count] for b in self.buckets],
        }

    def load_dict(self, data: dict[str, Any]) -> None:
        """Restore from to_dict() output; raises ValueError/TypeError/KeyError on malformed data."""
        bins = [Bin(float(s), float(v), None if a is None else float(a)) for s, v, a in data["bins"]]
        buckets = [Bucket(float(s), float(lo), float(hi), float(tot), int(c)) for s, lo, hi, tot, c in data["buckets"]]
        if any(c <= 0 for *_, c in data["buckets"]):
            raise ValueError("bucket with no samples")
        last = data.get("last_time")
        self.bins = deque(sorted(bins, key=lambda b: b.start))
        self._groups.clear()
        self.buckets = deque(sorted(buckets, key=lambda b: b.start))
        self.last_time = None if last is None else float(last)
        self._memo.clear()
