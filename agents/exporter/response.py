"""The body of one scrape, with the parts that do not change between requests built once.

Scrapes that share a collection (single-flight, or --exporter.min-interval) expose the same
MySQL values; only the scrape count, the data age and the exporter's process metrics differ
from one request to the next.  So a scrape's body is three parts:

- the *collection head*: mysql_up and the self metrics that change only when a collection ends
  or the error counters move (success, duration, errors, last success), encoded once per
  collection and counters version;
- the *request part*: the scrape count, the data age and the process metrics, encoded for each
  request (a few hundred bytes);
- the *server part*: every MySQL family of the collection, encoded once per collection, set of
  collectors and content type.

The shared parts are deflated once too, when a client takes gzip, and kept in the target's
``SharedBodies`` (the last ``limit`` of each) for every request that wants the same.  With
gzip the parts are raw deflate streams joined into one gzip member (each flushed to a byte
boundary without ending the stream, the last one ending it; CRC and size of the whole): a
standard single-member gzip body, of which each request compresses only its own part.  This is
what keeps 50 concurrent scrapers close to one scraper's latency: they no longer encode and
compress the same ~200 KB fifty times under one interpreter lock.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field

from mysql_snmp.agents.exporter.encoding import encode

GZIP_LEVEL = 1  # scrapes are frequent and bodies compress ~10x even at the fastest level
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no mtime, unknown OS


def _deflate(data: bytes, final: bool) -> bytes:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


@dataclass
class EncodedPart:
    """Families of one collection, encoded in one content type."""

    owner: object  # the CollectionRecord: kept so its id() in the key cannot be reused meanwhile
    body: bytes
    ends_body: bool = True  # deflated as the end of the gzip stream, or flushed for more to follow
    _deflated: bytes | None = field(default=None, repr=False)
    _deflating: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def deflated(self) -> bytes:
        # Under a lock: fifty requests that want gzip at once compress the body once, not fifty times.
        with self._deflating:
            if self._deflated is None:
                self._deflated = _deflate(self.body, final=self.ends_body)
        return self._deflated


class SharedBodies:
    """The encoded parts of a target's recent collections (at most ``limit``, the newest kept).

    Single-flight: while one request builds a part, the others that want the same part wait
    for it instead of encoding the same families again (under one interpreter lock, N builds
    at once take N times as long for each of them).
    """

    def __init__(self, limit: int = 8, ends_body: bool = True):
        self.limit = limit
        self.ends_body = ends_body
        self._parts: OrderedDict[tuple, EncodedPart] = OrderedDict()
        self._building: dict[tuple, Future] = {}
        self._lock = threading.Lock()
        self.builds = 0  # parts built so far: what sharing saves shows in tests

    def __len__(self) -> int:
        return len(self._parts)

    def get(self, record, collectors: tuple, content_type: str, build) -> EncodedPart:
        """The part for this collection, collectors and content type; ``build()`` gives its bytes."""
        key = (id(record), collectors, content_type)
        with self._lock:
            part = self._parts.get(key)
            if part is not None and part.owner is record:
                self._parts.move_to_end(key)
                return part
            # A part being built holds its record, so the id() in the key is still that record's.
            pending = self._building.get(key)
            if pending is not None:
                builder = False
            else:
                pending = self._building[key] = Future()
                builder = True
                self.builds += 1
        if not builder:
            return pending.result()
        # Built outside the lock: requests for other collections are not held up meanwhile.
        try:
            part = EncodedPart(record, build(), self.ends_body)
        except BaseException as exc:
            with self._lock:
                del self._building[key]
            pending.set_exception(exc)  # the waiters fail as this request does (a bug: their 500)
            raise
        with self._lock:
            del self._building[key]
            self._parts[key] = part
            self._parts.move_to_end(key)
            while len(self._parts) > self.limit:
                self._parts.popitem(last=False)
        pending.set_result(part)
        return part


def scrape_body(collection_head: EncodedPart, request_families: list, server: EncodedPart | None,
                accept: str | None, gzip: bool) -> tuple[bytes, str]:
    """(body, content type): the shared collection head, the request's own families encoded now,
    then the shared server part."""
    own, content_type = encode(request_families, accept, None, final=server is None)
    parts = [collection_head.body, own] + ([server.body] if server is not None else [])
    if not gzip:
        return b"".join(parts), content_type
    deflated = [collection_head.deflated(), _deflate(own, final=server is None)]
    if server is not None:
        deflated.append(server.deflated())
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return _gzip_member(deflated, crc, sum(map(len, parts))), content_type


def _gzip_member(deflate_parts: list[bytes], crc: int, size: int) -> bytes:
    return b"".join([_GZIP_HEADER, *deflate_parts, struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)])
