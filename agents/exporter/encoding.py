"""Exposition with prometheus_client's encoders, memoised per unchanged family.

Most of a MySQL scrape does not change between scrapes: ~500 global variables and
hundreds of status values are the same number as last time.  Building a family
object and encoding it costs ~10 us each in prometheus_client (its OpenMetrics
encoder escapes HELP text one character at a time), which for ~1300 samples is
the bulk of a scrape's CPU.  So unlabelled one-sample families are *interned*:
the same (type, name, value) gives back the same family object, and the bytes
prometheus_client produced for it are kept.  Every byte still comes from
prometheus_client's encoder; nothing is formatted by hand.  Each target owns its
interner (no process-wide state), and the "registry" handed to the encoder is a
custom collector holding the scrape's families.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Callable, Iterable, Iterator, Mapping

from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.openmetrics import exposition as openmetrics

from mysql_snmp.agents.exporter.sample_lines import plain_body, plain_format

_OPENMETRICS_EOF = b"# EOF\n"
# The names Prometheus accepted before UTF-8 names, less the colon (OpenMetrics' underscores
# escaping rewrites a colon in a sample name): these come out of either escaping unchanged.
_LEGACY_METRIC_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_LEGACY_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class _Families:
    """The minimal "registry" an encoder needs: an object whose collect() yields families."""

    __slots__ = ("_families",)

    def __init__(self, families: list[Metric]):
        self._families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


# Marks the key of a family registered by reuse(): kept with its build, outside the generations.
_REUSED = object()


class FamilyInterner:
    """Shares family objects, and their encoded bytes, across scrapes while their value holds.

    Bounded by design, in two generations of ``generation_size`` families each: a family asked
    for again is moved to the current generation; when that is full, the older generation (every
    family not asked for since) is dropped with its encoded bytes and the current one becomes
    the older.  So at most ``2 * generation_size`` families are kept, and a value that changes
    every scrape leaves nothing behind for long.  A generation must hold one scrape's unlabelled
    families (~1,100 on MariaDB 10.11) for them to be found again; the default of 2048 leaves room
    for servers with more, and bounds the interner at 4,096 families, ~6 MB with their encodings
    (measured: 1.5 KB per family).
    """

    def __init__(self, generation_size: int = 2048):
        self.generation_size = generation_size
        self._current: dict[tuple, Metric] = {}
        self._older: dict[tuple, Metric] = {}
        self._encoded: dict[str, dict[int, bytes]] = {}  # content type -> id(family) -> bytes
        self._keys: dict[int, tuple] = {}  # id(interned family) -> its key
        self._previous: dict[str, tuple[Mapping, list[Metric]]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._current) + len(self._older)

    def scalar(self, family_type: Callable[..., Metric], name: str, documentation: str, value: float) -> Metric:
        """A one-sample unlabelled family; the same arguments give the same (read-only) object."""
        # NaN (an SQL NULL) never equals itself: key it by a marker so it is found again.
        key = (family_type, name, documentation, value if value == value else "NaN")
        family = self._current.get(key)
        if family is not None:
            return family
        with self._lock:
            family = self._older.pop(key, None)
            if family is None:
                family = self._current.get(key)
            if family is None:
                family = family_type(name, documentation, value=value)
                self._keys[id(family)] = key
            self._keep(key, family)
        return family

    def _keep(self, key: tuple, family: Metric) -> None:
        """Put ``family`` in the current generation (the lock is held)."""
        if key not in self._current and len(self._current) >= self.generation_size:
            self._retire_older()
        self._current[key] = family

    def _touch(self, families: list[Metric]) -> None:
        """Families handed out again without scalar() (reuse()): still in use, so kept."""
        with self._lock:
            for family in families:
                key = self._keys.get(id(family))
                if key is not None and key[0] is not _REUSED and key not in self._current:
                    self._older.pop(key, None)
                    self._keep(key, family)

    def _retire_older(self) -> None:
        """Drop the families nobody asked for during a whole generation (the lock is held)."""
        for family in self._older.values():
            del self._keys[id(family)]
            for by_id in self._encoded.values():
                # In place: an encode() running holds these dicts.  The bytes go with the
                # family, so a later object given the same id() never finds them.
                by_id.pop(id(family), None)
        self._older, self._current = self._current, {}

    def reuse(self, key: str, inputs: Mapping, build: Callable[[], list[Metric]]) -> list[Metric]:
        """``build()``'s families, or the previous ones when ``inputs`` equal the previous inputs.

        One entry per ``key`` (a collector's fixed name, a catalog family's name), so this stays as
        small as one scrape; the encoded bytes of the families it returns are kept with them."""
        previous = self._previous.get(key)
        if previous is not None and previous[0] == inputs:
            self._touch(previous[1])
            return previous[1]
        families = build()
        with self._lock:
            if previous is not None:
                self._forget_reused(previous[1])
            # Registered as reused: their encoded bytes are kept until a build replaces them.
            for family in families:
                self._keys.setdefault(id(family), (_REUSED, key))
            self._previous[key] = (inputs, families)
        return families

    def _forget_reused(self, families: list[Metric]) -> None:
        """Drop the bytes of families a new build replaced (the lock is held)."""
        for family in families:
            key = self._keys.get(id(family))
            if key is not None and key[0] is _REUSED:
                del self._keys[id(family)]
                for by_id in self._encoded.values():
                    by_id.pop(id(family), None)


    def is_interned(self, family: Metric) -> bool:
        return id(family) in self._keys

    def encoded_by_id(self, content_type: str) -> dict[int, bytes]:
        """id(family) -> its bytes in ``content_type``, for the interned families encoded so far."""
        return self._encoded.setdefault(content_type, {})

    def remember(self, family: Metric, content_type: str, body: bytes) -> None:
        with self._lock:  # not while _retire_older drops this family
            if id(family) in self._keys:
                self.encoded_by_id(content_type)[id(family)] = body


def scalar_family(interner: FamilyInterner | None, family_type: Callable[..., Metric], name: str,
                  documentation: str, value: float) -> Metric:
    """A one-sample unlabelled family: interned when an interner is given, fresh otherwise."""
    if interner is None:
        return family_type(name, documentation, value=value)
    return interner.scalar(family_type, name, documentation, value)


def _identity_escaping_twin(encoder: Callable) -> Callable | None:
    """The same OpenMetrics encoder with allow-utf-8 escaping, when ``encoder`` escapes underscores.

    Underscore escaping rewrites every sample name one character at a time
    (prometheus_client 0.2x), about half of the encoding time of a scrape, although a
    legacy name (``[a-zA-Z_:][a-zA-Z0-9_:]*``) comes out unchanged.  allow-utf-8
    escaping leaves a legacy name unchanged too, with one ``str.replace``: for a family
    whose every name is legacy, both give the same bytes (tested), so the twin is used
    for those and the negotiated encoder for anything else.
    """
    if (isinstance(encoder, functools.partial) and encoder.func is openmetrics.generate_latest
            and encoder.keywords.get("escaping") == openmetrics.UNDERSCORES):
        return functools.partial(encoder, escaping=openmetrics.ALLOWUTF8)
    return None


def _all_names_legacy(family: Metric) -> bool:
    if not _LEGACY_METRIC_NAME.fullmatch(family.name):
        return False
    checked: set[str] = set()
    for sample in family.samples:
        if sample.name is not family.name and not _LEGACY_METRIC_NAME.fullmatch(sample.name):
            return False
        for label in sample.labels:
            if label not in checked:
                if not _LEGACY_LABEL_NAME.fullmatch(label):
                    return False
                checked.add(label)
    return True


def encode(families: Iterable[Metric], accept_header: str | None,
           interner: FamilyInterner | None = None, final: bool = True) -> tuple[bytes, str]:
    """The exposition of ``families`` in the format the Accept header negotiates (``final``: with
    OpenMetrics' closing ``# EOF``; without, for a body that more families follow)."""
    interner = interner if interner is not None else _NO_INTERNER  # an empty one is falsy (__len__)
    negotiated, content_type = choose_encoder(accept_header or "")
    twin = _identity_escaping_twin(negotiated)
    form = plain_format(negotiated)
    chunks: list[bytes] = []
    pending: list[Metric] = []
    pending_encoder = negotiated

    def flush() -> None:
        if pending:
            chunks.append(_strip_eof(pending_encoder(_Families(pending))))
            pending.clear()

    def encoder_for(family: Metric) -> Callable:
        return twin if twin is not None and _all_names_legacy(family) else negotiated

    # One dict lookup per family: an unchanged value's family is interned and already encoded.
    known = interner.encoded_by_id(content_type).get
    for family in families:
        body = known(id(family))
        if body is None:
            # Most families are plain (agents/exporter/sample_lines.py): written directly.
            body = plain_body(family, form) if form is not None else None
            if body is None and not interner.is_interned(family):
                encoder = encoder_for(family)
                if encoder is not pending_encoder:
                    flush()
                    pending_encoder = encoder
                pending.append(family)
                continue
            if body is None:
                body = _strip_eof(encoder_for(family)(_Families([family])))
            interner.remember(family, content_type, body)
        flush()
        chunks.append(body)
    flush()
    if final and content_type.startswith("application/openmetrics-text"):
        chunks.append(_OPENMETRICS_EOF)
    return b"".join(chunks), content_type


_NO_INTERNER = FamilyInterner(generation_size=0)


def _strip_eof(body: bytes) -> bytes:
    return body[: -len(_OPENMETRICS_EOF)] if body.endswith(_OPENMETRICS_EOF) else body
