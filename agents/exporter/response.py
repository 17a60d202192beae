"""The body of one scrape, with the parts that do not change between requests built once.

Scrapes that share a collection (single-flight, or --exporter.min-interval) expose the same
MySQL values; only the scrape count, the data age and the exporter's process metrics differ
from one request to the next.  So a scrape's body is three parts, in this order:

- the *server part*: every MySQL family of the collection, encoded once per collection, set of
  collectors and content type;
- the *collection head*: mysql_up and the self metrics that change only when a collection ends
  or the error counters move (success, duration, errors, last success), encoded once per
  collection and counters version;
- the *request part*: the scrape count, the data age and the process metrics, encoded for each
  request (a few hundred bytes), last, so that it carries OpenMetrics' ``# EOF``.

The shared parts are kept in the target's ``SharedBodies`` for every request that wants the
same (a part over 4 MB only for the requests already waiting for it, and no part keeps its
collection alive).  Only the newest collection's part is kept per set of collectors and content type: an
older collection is never served again once a newer one exists, and each part (~250 KB with
its collection) kept past that was memory for nothing.  Parts are kept with their deflated
form and CRC-32 once a client takes gzip.  The gzip body is the parts' raw deflate streams joined into one gzip member (the shared
ones flushed to a byte boundary without ending the stream, the request's own ending it): a
standard single-member gzip body, of which each request compresses only its own part.  The
shared parts come first because a CRC-32 can be continued but not prefixed: the whole body's
CRC is the cached CRC of the first part continued over the small rest.  This is what keeps 50
concurrent scrapers close to one scraper's latency: they no longer encode, compress and
checksum the same ~200 KB fifty times under one interpreter lock.
"""

from __future__ import annotations

import struct
import threading
import weakref
import zlib
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from .encoding import Negotiated, encode_as

# Encoded parts up to this size are kept for later requests of the same collection (a MariaDB
# scrape with every collector is ~300 KB); larger ones are shared only by the requests waiting.
KEEP_PART_BYTES = 4 * 1024 * 1024
GZIP_LEVEL = 1  # scrapes are frequent and bodies compress ~10x even at the fastest level
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no mtime, unknown OS


def _deflate(data: bytes, final: bool) -> bytes:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


@dataclass
class EncodedPart:
    """Families of one collection, encoded in one content type: never the end of a body."""

    owner: Callable[[], object]  # weak reference to the CollectionRecord: a part never keeps its (possibly huge) collection alive
    body: bytes
    revision: object = None  # what else the part was built from (the collection head's counters version)
    _gzip: tuple[bytes, int] | None = field(default=None, repr=False)
    _deflating: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def gzip_form(self) -> tuple[bytes, int]:
        """(raw deflate flushed to a byte boundary, CRC-32 of the body)."""
        # Under a lock: fifty requests that want gzip at once compress the body once, not fifty times.
        with self._deflating:
            if self._gzip is None:
                self._gzip = (_deflate(self.body, final=False), zlib.crc32(self.body))
        return self._gzip


def _no_collection() -> None:
    return None


def _reference(record):
    """A weak reference to ``record``; for None (no collection finished in time), one to None."""
    return _no_collection if record is None else weakref.ref(record)


class SharedBodies:
    """The encoded part of the newest collection for each set of collectors and content type
    (at most ``limit`` such pairs, the most recently used kept).

    Single-flight: while one request builds a part, the others that want the same part wait
    for it instead of encoding the same families again (under one interpreter lock, N builds
    at once take N times as long for each of them).
    """

    def __init__(self, limit: int = 8, keep_bytes: int = KEEP_PART_BYTES):
        self.limit = limit
        self.keep_bytes = keep_bytes
        self._parts: OrderedDict[tuple, EncodedPart] = OrderedDict()
        self._building: dict[tuple, Future] = {}
        self._lock = threading.Lock()
        self.builds = 0  # parts built so far: what sharing saves shows in tests

    def __len__(self) -> int:
        return len(self._parts)

    def get(self, record, collectors: tuple, content_type: str, build, revision: object = None) -> EncodedPart:
        """The part for this collection, collectors and content type; ``build()`` gives its bytes.

        ``revision``: what else the bytes depend on, newer replacing older like a newer collection
        (in the key it would keep up to ``limit`` stale parts, each holding its collection)."""
        key = (collectors, content_type)
        # A part being built holds its record, so the id() in this key is still that record's.
        building = (id(record), revision, collectors, content_type)
        with self._lock:
            part = self._parts.get(key)
            if part is not None and part.owner() is record and part.revision == revision:
                self._parts.move_to_end(key)
                return part
            pending = self._building.get(building)
            if pending is not None:
                builder = False
            else:
                pending = self._building[building] = Future()
                builder = True
                self.builds += 1
        if not builder:
            return pending.result()
        # Built outside the lock: requests for other collections are not held up meanwhile.
        try:
            part = EncodedPart(_reference(record), build(), revision)
        except BaseException as exc:
            with self._lock:
                del self._building[building]
            pending.set_exception(exc)  # the waiters fail as this request does (a bug: their 500)
            raise
        with self._lock:
            del self._building[building]
            # Replaces the previous collection's part: a request still sending it holds its own
            # reference, and one that comes late with an older collection builds its own.  A huge
            # part (a scrape of 840,000 series is 90 MB) goes to the requests waiting for it now,
            # and is not kept after them: its memory goes back as soon as they have sent it.
            self._parts.pop(key, None)
            if len(part.body) <= self.keep_bytes:
                self._parts[key] = part
            while len(self._parts) > self.limit:
                self._parts.popitem(last=False)
        pending.set_result(part)
        return part


def scrape_body(collection_head: EncodedPart, request_families: list, server: EncodedPart | None,
                chosen: Negotiated, gzip: bool) -> tuple[bytes, str]:
    """(body, content type): the shared server part and collection head, then the request's own
    families encoded now."""
    shared = ([server] if server is not None else []) + [collection_head]
    own, content_type = encode_as(request_families, chosen, None, final=True), chosen.content_type
    if not gzip:
        return b"".join([part.body for part in shared] + [own]), content_type
    streams, crc, size = [], None, len(own)
    for part in shared:
        deflated, part_crc = part.gzip_form()
        streams.append(deflated)
        # The first part's cached CRC as is; the CRC continued over a later one (small: the head).
        crc = part_crc if crc is None else zlib.crc32(part.body, crc)
        size += len(part.body)
    streams.append(_deflate(own, final=True))
    crc = zlib.crc32(own, crc)
    return _gzip_member(streams, crc, size), content_type


def _gzip_member(deflate_parts: list[bytes], crc: int, size: int) -> bytes:
    return b"".join([_GZIP_HEADER, *deflate_parts, struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)])
