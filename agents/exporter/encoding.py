"""Exposition of a scrape's families, memoised per unchanged family.

Most of a MySQL scrape does not change between scrapes: ~500 global variables and
hundreds of status values are the same number as last time.  So unlabelled one-sample
families are *interned*: the same (type, name, value) gives back the same family object,
and the bytes written for it are kept.  Plain families are written by
agents/exporter/sample_lines.py, the rest by agents/exporter/wire_format.py (both tested
byte-identical to prometheus_client).  Each target owns its interner (no process-wide state).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from .metric_types import Metric
from .sample_lines import plain_body, plain_format
from .wire_format import OPENMETRICS_EOF, Format, family_text, negotiate_format

_OPENMETRICS_EOF = OPENMETRICS_EOF.encode()


# reuse() keeps the families of a key for the next scrape up to this many samples (global_variables'
# ~650, a labelled catalog family's few hundred); a family per table or digest is built each time.
REUSE_MAX_SAMPLES = 20_000

# Marks the key of a family registered by reuse(): kept with its build, outside the generations.
_REUSED = object()


class FamilyInterner:
    """Shares family objects, and their encoded bytes, across scrapes while their value holds.

    Bounded by design, in generations: each scrape is one (``new_scrape()``), and a family is
    kept while it was asked for in the current generation or the one before; older ones are
    dropped with their encoded bytes when a generation starts.  So what is kept is one scrape's
    families plus the previous scrape's that changed (~1,100 on MariaDB 10.11), not the ~3,000
    that two generations filled to 2,048 families kept (~2 MB more RSS).  Asking marks a family
    with the generation (no move between dicts, no lock on a hit).  ``generation_size`` bounds
    a single scrape: making that many families starts a generation early, so at most twice that
    many are kept, ~6 MB with their encodings at the default of 2048 (measured: 1.5 KB per
    family).  A target scraped alternately with two sets of collectors (collect[]) keeps the
    families both ask for; those only one asks for are built and encoded again.

    Shared by many targets (``per_scrape=False``: the /probe targets, each too small a part of the
    memory budget to keep its own), generations start by size only: what any target asked for
    among the last ``generation_size`` families made stays, so the values servers share (most
    settings, idle counters) are built and encoded once for all of them.
    """

    def __init__(self, generation_size: int = 2048, reuse_max_samples: int = REUSE_MAX_SAMPLES,
                 per_scrape: bool = True):
        self.generation_size = generation_size
        self.reuse_max_samples = reuse_max_samples
        self.per_scrape = per_scrape
        self._generation = 0
        self._created = 0  # families made in the current generation
        self._entries: dict[tuple, list] = {}  # key -> [family, the last generation that asked for it]
        self._encoded: dict[str, dict[int, bytes]] = {}  # content type -> id(family) -> bytes
        self._keys: dict[int, tuple] = {}  # id(interned family) -> its key
        # key -> (inputs, families built from them, the interned entries among those families)
        self._previous: dict[str, tuple[Mapping, list[Metric], list[list]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def scalar(self, family_type: Callable[..., Metric], name: str, documentation: str, value: float) -> Metric:
        """A one-sample unlabelled family; the same arguments give the same (read-only) object."""
        # NaN (an SQL NULL) never equals itself: key it by a marker so it is found again.
        key = (family_type, name, documentation, value if value == value else "NaN")
        entry = self._entries.get(key)
        if entry is None:
            with self._lock:
                entry = self._entries.get(key)
                if entry is None:
                    if self._created >= self.generation_size or len(self._entries) >= 2 * self.generation_size:
                        self._start_generation()
                        if len(self._entries) >= 2 * self.generation_size:
                            # All of them asked for lately (targets sharing this one, each with its
                            # own values): start over rather than grow.
                            self._start_generation()
                    family = family_type(name, documentation, value=value)
                    entry = self._entries[key] = [family, self._generation]
                    self._keys[id(family)] = key
                    self._created += 1
        # A family dropped meanwhile by another thread's new generation is still a correct family:
        # its bytes are not remembered (remember() finds no key), and marking its orphaned entry costs nothing.
        entry[1] = self._generation
        return entry[0]

    def new_scrape(self) -> None:
        """A scrape's families are about to be built: drop those the previous one did not ask for."""
        if not self.per_scrape:
            return
        with self._lock:
            self._start_generation()

    def _start_generation(self) -> None:
        """Start a generation: drop the families the ending one did not ask for (the lock is held)."""
        self._generation += 1
        self._created = 0
        oldest_kept = self._generation - 1
        for key in [key for key, (_, asked) in self._entries.items() if asked < oldest_kept]:
            family = self._entries.pop(key)[0]
            del self._keys[id(family)]
            for by_id in self._encoded.values():
                # In place: an encode() running holds these dicts.  The bytes go with the
                # family, so a later object given the same id() never finds them.
                by_id.pop(id(family), None)

    def _touch(self, entries: list[list]) -> None:
        """Entries of families handed out again without scalar() (reuse()): still in use, so kept.
        (An entry a new generation dropped meanwhile is marked for nothing, as in scalar().)"""
        generation = self._generation
        for entry in entries:
            entry[1] = generation

    def reuse(self, key: str, inputs: Mapping, build: Callable[[], list[Metric]]) -> list[Metric]:
        """``build()``'s families, or the previous ones when ``inputs`` equal the previous inputs.

        One entry per ``key`` (a collector's fixed name, a catalog family's name), so this stays as
        small as one scrape; the encoded bytes of the families it returns are kept with them."""
        previous = self._previous.get(key)
        if previous is not None and previous[0] == inputs:
            self._touch(previous[2])
            if previous[0] is not inputs:
                # Keep the equal inputs of this scrape, not the older ones: the older snapshot's
                # rows are then freed instead of held twice (0.4 MB RSS with every collector).
                with self._lock:
                    if self._previous.get(key) is previous:
                        self._previous[key] = (inputs, *previous[1:])
            return previous[1]
        families = build()
        with self._lock:
            # What is stored now, not ``previous``: another thread (a target sharing this
            # interner) may have replaced it meanwhile, and bytes kept by id() for families no
            # longer held would be found by a later object given the same id().
            current = self._previous.get(key)
            if current is not None:
                self._forget_reused(current[1])
            if sum(len(family.samples) for family in families) > self.reuse_max_samples:
                # Per table, index or digest: it changes at every scrape, and keeping it (with its
                # inputs and bytes) would keep a big scrape's memory until the next one.
                self._previous.pop(key, None)
                return families
            # Registered as reused: their encoded bytes are kept until a build replaces them.
            for family in families:
                self._keys.setdefault(id(family), (_REUSED, key))
            entries = [self._entries.get(self._keys.get(id(family))) for family in families]
            self._previous[key] = (inputs, families, [entry for entry in entries if entry is not None])
        return families

    def _forget_reused(self, families: list[Metric]) -> None:
        """Drop the bytes of families a new build replaced (the lock is held)."""
        for family in families:
            key = self._keys.get(id(family))
            if key is not None and key[0] is _REUSED:
                del self._keys[id(family)]
                for by_id in self._encoded.values():
                    by_id.pop(id(family), None)

    def encoded_by_id(self, content_type: str) -> dict[int, bytes]:
        """id(family) -> its bytes in ``content_type``, for the interned families encoded so far."""
        return self._encoded.setdefault(content_type, {})

    def remember(self, family: Metric, content_type: str, body: bytes) -> None:
        with self._lock:  # not while _start_generation drops this family
            if id(family) in self._keys:
                self.encoded_by_id(content_type)[id(family)] = body


def scalar_family(interner: FamilyInterner | None, family_type: Callable[..., Metric], name: str,
                  documentation: str, value: float) -> Metric:
    """A one-sample unlabelled family: interned when an interner is given, fresh otherwise."""
    if interner is None:
        return family_type(name, documentation, value=value)
    return interner.scalar(family_type, name, documentation, value)


@dataclass(frozen=True)
class Negotiated:
    """The exposition format one request's Accept header chose, worked out once per request."""

    form: Format
    plain_form: tuple[str, str] | None  # agents/exporter/sample_lines.py writes plain families in it

    @property
    def content_type(self) -> str:
        return self.form.content_type


def negotiate(accept_header: str | None) -> Negotiated:
    form = negotiate_format(accept_header)
    return Negotiated(form, plain_format(form))


def encode(families: Iterable[Metric], accept_header: str | None,
           interner: FamilyInterner | None = None, final: bool = True) -> tuple[bytes, str]:
    """(exposition, content type) of ``families`` in the format the Accept header negotiates."""
    chosen = negotiate(accept_header)
    return encode_as(families, chosen, interner, final), chosen.content_type


def encode_as(families: Iterable[Metric], chosen: Negotiated,
              interner: FamilyInterner | None = None, final: bool = True) -> bytes:
    """The exposition of ``families`` in the ``chosen`` format (``final``: with OpenMetrics'
    closing ``# EOF``; without, for a body that more families follow)."""
    interner = interner if interner is not None else _NO_INTERNER  # an empty one is falsy (__len__)
    form, plain, content_type = chosen.form, chosen.plain_form, chosen.content_type
    families = list(families)
    # One dict lookup per family, all in C: an unchanged value's family is interned and already encoded.
    chunks: list = list(map(interner.encoded_by_id(content_type).get, map(id, families)))
    if None in chunks:
        for index, body in enumerate(chunks):
            if body is None:
                family = families[index]
                # Most families are plain (agents/exporter/sample_lines.py): written directly.
                body = plain_body(family, plain) if plain is not None else None
                if body is None:
                    body = family_text(family, form).encode("utf-8")
                interner.remember(family, content_type, body)
                chunks[index] = body
    if final and form.openmetrics:
        chunks.append(_OPENMETRICS_EOF)
    return b"".join(chunks)


_NO_INTERNER = FamilyInterner(generation_size=0)
