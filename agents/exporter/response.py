"""The body of one scrape, with the part that does not change between requests built once.

Scrapes that share a collection (single-flight, or --exporter.min-interval) expose the same
MySQL values; only mysql_up and the exporter's own counters differ from one request to the
next.  So a scrape's body is two parts:

- the *head*: mysql_up and the self metrics, encoded for each request (a few hundred bytes);
- the *server part*: every MySQL family of the collection, encoded (and deflated, when the
  client takes gzip) once per collection, set of collectors and content type, and kept in the
  target's ``SharedBodies`` for every request that wants the same.  Only the newest
  collection's part is kept per set of collectors and content type: an older collection is
  never served again once a newer one exists, and each part (~250 KB with its collection) kept
  past that was memory for nothing.

With gzip, both parts are raw deflate streams joined into one gzip member (the head flushed to a
byte boundary without ending the stream, the server part ending it; CRC and size of the whole):
a standard single-member gzip body, of which each request compresses only its head.  This is what
keeps 50 concurrent scrapers close to one scraper's latency: they no longer encode and compress
the same ~200 KB fifty times under one interpreter lock.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field

from mysql_snmp.agents.exporter.encoding import encode

GZIP_LEVEL = 1  # scrapes are frequent and bodies compress ~10x even at the fastest level
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no name, no mtime, unknown OS


def _deflate(data: bytes, final: bool) -> bytes:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


@dataclass
class ServerPart:
    """One collection's MySQL families, encoded in one content type."""

    owner: object  # the CollectionRecord it was encoded from: a newer collection needs its own part
    body: bytes
    _deflated: bytes | None = field(default=None, repr=False)

    def deflated(self) -> bytes:
        if self._deflated is None:  # two requests may both compute it: same bytes, no harm
            self._deflated = _deflate(self.body, final=True)
        return self._deflated


class SharedBodies:
    """The server part of the newest collection for each set of collectors and content type
    (at most ``limit`` such pairs, the most recently used kept)."""

    def __init__(self, limit: int = 8):
        self.limit = limit
        self._parts: OrderedDict[tuple, ServerPart] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._parts)

    def get(self, record, collectors: tuple, content_type: str, build) -> ServerPart:
        """The part for this collection, collectors and content type; ``build()`` gives its bytes."""
        key = (collectors, content_type)
        with self._lock:
            part = self._parts.get(key)
            if part is not None and part.owner is record:
                self._parts.move_to_end(key)
                return part
        # Built outside the lock: requests for other collections are not held up meanwhile.
        part = ServerPart(record, build())
        with self._lock:
            # Replaces the previous collection's part: a request still sending it holds its own
            # reference, and one that comes late with an older collection builds its own.
            self._parts[key] = part
            self._parts.move_to_end(key)
            while len(self._parts) > self.limit:
                self._parts.popitem(last=False)
        return part


def scrape_body(head_families: list, server: ServerPart | None, accept: str | None,
                gzip: bool) -> tuple[bytes, str]:
    """(body, content type): the head encoded now, then the shared server part."""
    head, content_type = encode(head_families, accept, None, final=server is None)
    if not gzip:
        return (head if server is None else head + server.body), content_type
    if server is None:
        return _gzip_member([_deflate(head, final=True)], zlib.crc32(head), len(head)), content_type
    crc = zlib.crc32(server.body, zlib.crc32(head))
    return _gzip_member([_deflate(head, final=False), server.deflated()], crc,
                        len(head) + len(server.body)), content_type


def _gzip_member(deflate_parts: list[bytes], crc: int, size: int) -> bytes:
    return b"".join([_GZIP_HEADER, *deflate_parts, struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)])
