"""Reading one HTTP/1.x request head strictly and within fixed bounds (RFC 9112).

The exporter serves GET and HEAD; nothing a client sends is worth holding much memory for,
and anything ambiguous is refused, not guessed at:

- the request line is ``METHOD SP TARGET SP HTTP/1.x`` (at most ``MAX_REQUEST_LINE`` bytes,
  else 414); a line without a version (HTTP/0.9) is a 400, another major version a 505;
- the whole head (request line and fields) is at most ``MAX_HEAD_BYTES`` and
  ``MAX_FIELDS`` fields, else 431 (Go's net/http stops at 1 MB; a scrape sends under 1 KB);
- a field is ``name: value``: a token, the colon right after it, a value without control
  characters; a folded line (RFC 9112 5.2) or whitespace before the colon is a 400;
- an HTTP/1.1 request names one Host;
- a body is framed only by one Content-Length (ASCII digits, at most ``MAX_BODY_BYTES``, else
  413); Transfer-Encoding is not taken (411, or 400 with a Content-Length beside it), so a body
  can never be read as the next request on the connection (request smuggling).

Lines may end in CRLF or a bare LF, as Go's server accepts. ``read_request_head`` reads from a
binary stream; the parsing functions are pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import BinaryIO

MAX_REQUEST_LINE = 8 * 1024
MAX_HEAD_BYTES = 64 * 1024
MAX_FIELDS = 100
MAX_BODY_BYTES = 64 * 1024

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TARGET = re.compile(rb"[\x21-\x7e]+")  # visible ASCII: no spaces, controls or raw 8-bit bytes
_VERSION = re.compile(rb"HTTP/([0-9])\.([0-9])")
# field-value: visible characters, obs-text, spaces and tabs inside (RFC 9110 5.5)
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")
_DIGITS = re.compile(r"[0-9]{1,18}")


class BadRequest(Exception):
    """A request the server answers with ``status`` and closes the connection after."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class RequestHead:
    method: str
    target: str
    version: tuple[int, int]
    fields: dict[str, str] = field(default_factory=dict)  # lowercased name -> value (repeats joined by ", ")
    request_line: str = ""

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.fields.get(name.lower(), default)

    def tokens(self, name: str) -> set[str]:
        return {token.strip().lower() for token in self.fields.get(name, "").split(",") if token.strip()}

    @property
    def keep_alive(self) -> bool:
        connection = self.tokens("connection")
        if self.version >= (1, 1):
            return "close" not in connection
        return "keep-alive" in connection

    @property
    def content_length(self) -> int:
        return int(self.fields.get("content-length", "0"))

    @property
    def expects_continue(self) -> bool:
        return "100-continue" in self.tokens("expect")


def _strip_line_end(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    return line[:-1]  # a bare LF


def parse_request_line(line: bytes) -> tuple[str, str, tuple[int, int]]:
    """(method, target, (major, minor)) of a request line, its line end included."""
    parts = _strip_line_end(line).split(b" ")
    if len(parts) != 3:
        raise BadRequest(400, "malformed request line")  # HTTP/0.9's "GET /path" among others
    method, target, version = parts
    if not _TOKEN.fullmatch(method) or not _TARGET.fullmatch(target):
        raise BadRequest(400, "malformed request line")
    matched = _VERSION.fullmatch(version)
    if matched is None:
        raise BadRequest(400, "malformed HTTP version")
    if matched.group(1) != b"1":
        raise BadRequest(505, "HTTP version not supported")
    return method.decode("ascii"), target.decode("ascii"), (1, min(int(matched.group(2)), 1))


def parse_field_line(line: bytes) -> tuple[str, str]:
    """(lowercased name, value) of one header field line, its line end included."""
    name, colon, value = _strip_line_end(line).partition(b":")
    if not colon or not _TOKEN.fullmatch(name):
        # also a folded continuation line, which starts with a space or tab
        raise BadRequest(400, "malformed header field")
    value = value.strip(b" \t")
    if not _FIELD_VALUE.fullmatch(value):
        raise BadRequest(400, "invalid character in a header field")
    return name.decode("ascii").lower(), value.decode("latin-1")


def request_head(request_line: bytes, field_lines: list[bytes]) -> RequestHead:
    """The head of a request from its lines (line ends included), checked as a whole."""
    method, target, version = parse_request_line(request_line)
    fields: dict[str, str] = {}
    for line in field_lines:
        name, value = parse_field_line(line)
        if name in fields:
            if name == "host" or (name == "content-length" and fields[name] != value):
                raise BadRequest(400, f"conflicting {name} fields")
            if name != "content-length":
                fields[name] = f"{fields[name]}, {value}"
        else:
            fields[name] = value
    head = RequestHead(method, target, version, fields, _strip_line_end(request_line).decode("ascii"))
    if version >= (1, 1) and "host" not in fields:
        raise BadRequest(400, "missing Host header")
    if "transfer-encoding" in fields:
        if "content-length" in fields:
            raise BadRequest(400, "both Transfer-Encoding and Content-Length")
        # A GET needs no body; refusing the coding keeps the framing unambiguous.
        raise BadRequest(411, "request bodies need a Content-Length")
    if "content-length" in fields:
        if not _DIGITS.fullmatch(fields["content-length"]):
            raise BadRequest(400, "malformed Content-Length")
        if head.content_length > MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
    return head


def read_request_head(stream: BinaryIO) -> RequestHead | None:
    """The next request's head from ``stream``, or None when the client closed (or stopped
    mid-head: there is nothing to answer).  Reads at most ``MAX_HEAD_BYTES`` (+1)."""
    budget = MAX_HEAD_BYTES
    line = stream.readline(MAX_REQUEST_LINE + 1)
    while line in (b"\r\n", b"\n"):  # RFC 9112 2.2: empty lines before a request line are ignored
        budget -= len(line)
        if budget <= 0:
            raise BadRequest(431, "request header too large")
        line = stream.readline(MAX_REQUEST_LINE + 1)
    if len(line) > MAX_REQUEST_LINE:
        raise BadRequest(414, "request line too long")
    if not line.endswith(b"\n"):
        return None
    parse_request_line(line)  # at once: an HTTP/0.9 client sends no header to wait for
    budget -= len(line)
    field_lines = []
    while True:
        field_line = stream.readline(budget + 1)
        if len(field_line) > budget:
            raise BadRequest(431, "request header too large")
        if not field_line.endswith(b"\n"):
            return None
        budget -= len(field_line)
        if field_line in (b"\r\n", b"\n"):
            return request_head(line, field_lines)
        if len(field_lines) == MAX_FIELDS:
            raise BadRequest(431, "too many header fields")
        field_lines.append(field_line)
