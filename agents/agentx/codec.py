"""AgentX (RFC 2741) PDU codec: bytes in, PDU objects out, and back.  No sockets here.

``encode(pdu)`` turns one PDU into bytes; ``Decoder.feed(data)`` accepts any slice of a
byte stream (sans-I/O, like h11) and returns the PDUs completed so far.  Anything that is
not well-formed AgentX raises ``ProtocolError``, after which the stream is unusable and the
caller closes the connection (RFC 2741 7.1: a parse error in the header loses framing).
"""

from __future__ import annotations

import enum
import functools
import struct
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Sequence, Union

Oid = tuple[int, ...]

AGENTX_VERSION = 1
HEADER_SIZE = 20
# RFC 2741 5.1: an OID has at most 128 sub-identifiers (the SNMP limit).
MAX_SUBIDS = 128
# Net-SNMP never sends more than a few hundred KB; a larger length is garbage or hostile.
DEFAULT_MAX_PAYLOAD = 1 << 20
INTERNET_PREFIX = (1, 3, 6, 1)


class ProtocolError(ValueError):
    """The bytes are not AgentX: the connection cannot be trusted any more."""


class PduType(enum.IntEnum):
    OPEN = 1
    CLOSE = 2
    REGISTER = 3
    UNREGISTER = 4
    GET = 5
    GET_NEXT = 6
    GET_BULK = 7
    TEST_SET = 8
    COMMIT_SET = 9
    UNDO_SET = 10
    CLEANUP_SET = 11
    NOTIFY = 12
    PING = 13
    INDEX_ALLOCATE = 14
    INDEX_DEALLOCATE = 15
    ADD_AGENT_CAPS = 16
    REMOVE_AGENT_CAPS = 17
    RESPONSE = 18


class Flag(enum.IntFlag):
    INSTANCE_REGISTRATION = 0x01
    NEW_INDEX = 0x02
    ANY_INDEX = 0x04
    NON_DEFAULT_CONTEXT = 0x08
    NETWORK_BYTE_ORDER = 0x10


class VarType(enum.IntEnum):
    INTEGER = 2
    OCTET_STRING = 4
    NULL = 5
    OBJECT_IDENTIFIER = 6
    IP_ADDRESS = 64
    COUNTER32 = 65
    GAUGE32 = 66
    TIME_TICKS = 67
    OPAQUE = 68
    COUNTER64 = 70
    NO_SUCH_OBJECT = 128
    NO_SUCH_INSTANCE = 129
    END_OF_MIB_VIEW = 130


class CloseReason(enum.IntEnum):
    OTHER = 1
    PARSE_ERROR = 2
    PROTOCOL_ERROR = 3
    TIMEOUTS = 4
    SHUTDOWN = 5
    BY_MANAGER = 6


class ResponseError(enum.IntEnum):
    """res.error values: SNMP error-status (RFC 3416) and AgentX administrative errors."""

    NO_ERROR = 0
    TOO_BIG = 1
    GEN_ERR = 5
    NO_ACCESS = 6
    NOT_WRITABLE = 17
    COMMIT_FAILED = 14
    UNDO_FAILED = 15
    OPEN_FAILED = 256
    NOT_OPEN = 257
    INDEX_WRONG_TYPE = 258
    INDEX_ALREADY_ALLOCATED = 259
    INDEX_NONE_AVAILABLE = 260
    INDEX_NOT_ALLOCATED = 261
    UNSUPPORTED_CONTEXT = 262
    DUPLICATE_REGISTRATION = 263
    UNKNOWN_REGISTRATION = 264
    UNKNOWN_AGENT_CAPS = 265
    PARSE_ERROR = 266
    REQUEST_DENIED = 267
    PROCESSING_ERROR = 268


# Plain ints for the per-PDU paths: IntFlag arithmetic costs more than the rest of a header.
_NON_DEFAULT_CONTEXT = int(Flag.NON_DEFAULT_CONTEXT)
_NETWORK_BYTE_ORDER = int(Flag.NETWORK_BYTE_ORDER)
_DERIVED_FLAGS = _NON_DEFAULT_CONTEXT | _NETWORK_BYTE_ORDER

_UNSIGNED32_TYPES = (VarType.COUNTER32, VarType.GAUGE32, VarType.TIME_TICKS)
_STRING_TYPES = (VarType.OCTET_STRING, VarType.IP_ADDRESS, VarType.OPAQUE)
_EMPTY_TYPES = (VarType.NULL, VarType.NO_SUCH_OBJECT, VarType.NO_SUCH_INSTANCE, VarType.END_OF_MIB_VIEW)

VarValue = Union[int, bytes, Oid, None]


@dataclass(frozen=True)
class VarBind:
    type: VarType
    name: Oid
    value: VarValue = None


@dataclass(frozen=True)
class SearchRange:
    """Start (inclusive when ``include``) up to ``end`` exclusive; an empty end means no bound."""

    start: Oid
    end: Oid = ()
    include: bool = False


@dataclass(frozen=True, kw_only=True)
class Pdu:
    """Header fields every PDU carries (RFC 2741 6.1).

    ``flags`` holds INSTANCE_REGISTRATION / NEW_INDEX / ANY_INDEX; the NON_DEFAULT_CONTEXT
    bit follows from ``context`` and NETWORK_BYTE_ORDER from ``network_byte_order``.
    """

    session_id: int = 0
    transaction_id: int = 0
    packet_id: int = 0
    flags: int = 0
    network_byte_order: bool = True
    context: bytes | None = None

    TYPE = None  # set by each subclass
    HAS_CONTEXT = False


@dataclass(frozen=True, kw_only=True)
class Open(Pdu):
    TYPE = PduType.OPEN
    timeout: int = 0
    id: Oid = ()
    description: bytes = b""


@dataclass(frozen=True, kw_only=True)
class Close(Pdu):
    TYPE = PduType.CLOSE
    reason: CloseReason = CloseReason.OTHER


@dataclass(frozen=True, kw_only=True)
class Register(Pdu):
    TYPE = PduType.REGISTER
    HAS_CONTEXT = True
    timeout: int = 0
    priority: int = 127
    subtree: Oid = ()
    range_subid: int = 0
    upper_bound: int | None = None


@dataclass(frozen=True, kw_only=True)
class Unregister(Pdu):
    TYPE = PduType.UNREGISTER
    HAS_CONTEXT = True
    priority: int = 127
    subtree: Oid = ()
    range_subid: int = 0
    upper_bound: int | None = None


@dataclass(frozen=True, kw_only=True)
class Get(Pdu):
    TYPE = PduType.GET
    HAS_CONTEXT = True
    ranges: tuple[SearchRange, ...] = ()


@dataclass(frozen=True, kw_only=True)
class GetNext(Pdu):
    TYPE = PduType.GET_NEXT
    HAS_CONTEXT = True
    ranges: tuple[SearchRange, ...] = ()


@dataclass(frozen=True, kw_only=True)
class GetBulk(Pdu):
    TYPE = PduType.GET_BULK
    HAS_CONTEXT = True
    non_repeaters: int = 0
    max_repetitions: int = 0
    ranges: tuple[SearchRange, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TestSet(Pdu):
    TYPE = PduType.TEST_SET
    HAS_CONTEXT = True
    varbinds: tuple[VarBind, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CommitSet(Pdu):
    TYPE = PduType.COMMIT_SET


@dataclass(frozen=True, kw_only=True)
class UndoSet(Pdu):
    TYPE = PduType.UNDO_SET


@dataclass(frozen=True, kw_only=True)
class CleanupSet(Pdu):
    TYPE = PduType.CLEANUP_SET


@dataclass(frozen=True, kw_only=True)
class Notify(Pdu):
    TYPE = PduType.NOTIFY
    HAS_CONTEXT = True
    varbinds: tuple[VarBind, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Ping(Pdu):
    TYPE = PduType.PING
    HAS_CONTEXT = True


@dataclass(frozen=True, kw_only=True)
class IndexAllocate(Pdu):
    TYPE = PduType.INDEX_ALLOCATE
    HAS_CONTEXT = True
    varbinds: tuple[VarBind, ...] = ()


@dataclass(frozen=True, kw_only=True)
class IndexDeallocate(Pdu):
    TYPE = PduType.INDEX_DEALLOCATE
    HAS_CONTEXT = True
    varbinds: tuple[VarBind, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AddAgentCaps(Pdu):
    TYPE = PduType.ADD_AGENT_CAPS
    HAS_CONTEXT = True
    id: Oid = ()
    description: bytes = b""


@dataclass(frozen=True, kw_only=True)
class RemoveAgentCaps(Pdu):
    TYPE = PduType.REMOVE_AGENT_CAPS
    HAS_CONTEXT = True
    id: Oid = ()


@dataclass(frozen=True, kw_only=True)
class Response(Pdu):
    TYPE = PduType.RESPONSE
    sys_uptime: int = 0
    error: int = ResponseError.NO_ERROR
    index: int = 0
    varbinds: tuple[VarBind, ...] = field(default=())


PDU_CLASSES: dict[PduType, type[Pdu]] = {
    cls.TYPE: cls
    for cls in (
        Open, Close, Register, Unregister, Get, GetNext, GetBulk, TestSet, CommitSet, UndoSet,
        CleanupSet, Notify, Ping, IndexAllocate, IndexDeallocate, AddAgentCaps, RemoveAgentCaps,
        Response,
    )
}


_PDU_TYPES = {int(kind): kind for kind in PduType}

# ---------------------------------------------------------------------------- encoding


def _order(network_byte_order: bool) -> str:
    return ">" if network_byte_order else "<"


@functools.lru_cache(maxsize=None)
def _struct(fmt: str) -> struct.Struct:
    """Compiled once per format: a walk packs and unpacks the same few layouts per PDU."""
    return struct.Struct(fmt)


def encode_oid(oid: Sequence[int], include: bool = False, network_byte_order: bool = True) -> bytes:
    """RFC 2741 5.1: 1.3.6.1.x.rest with 0 < x < 256 travels as prefix x plus rest."""
    oid = tuple(oid)
    prefix = 0
    if len(oid) >= 5 and oid[:4] == INTERNET_PREFIX and 0 < oid[4] < 256:
        prefix = oid[4]
        oid = oid[5:]
    if len(oid) > MAX_SUBIDS:
        raise ValueError(f"OID has {len(oid)} sub-identifiers, AgentX allows {MAX_SUBIDS}")
    for subid in oid:
        if not 0 <= subid <= 0xFFFFFFFF:
            raise ValueError(f"sub-identifier {subid} out of 32-bit range")
    return _struct(f"{_order(network_byte_order)}BBBx{len(oid)}I").pack(len(oid), prefix, int(include), *oid)


def encode_octet_string(data: bytes, network_byte_order: bool = True) -> bytes:
    """RFC 2741 5.3: a 4-byte length, the bytes, then zero padding to a multiple of 4."""
    return struct.pack(_order(network_byte_order) + "I", len(data)) + data + b"\x00" * (-len(data) % 4)


def encode_varbind(varbind: VarBind, network_byte_order: bool = True) -> bytes:
    # Not memoised here: a cache keyed by varbind kept every value that has since changed (the soak
    # saw RSS creep by ~4 MB/h filling an 8,192-entry LRU).  Walks, the repeated case, are answered
    # from agents/agentx/walk_answers.py's table, built once per view and dropped with it.
    order = _order(network_byte_order)
    kind = VarType(varbind.type)
    head = struct.pack(order + "Hxx", kind) + encode_oid(varbind.name, False, network_byte_order)
    value = varbind.value
    if kind == VarType.INTEGER:
        if not -(1 << 31) <= value < (1 << 31):
            raise ValueError(f"{value} does not fit an INTEGER (Integer32)")
        return head + struct.pack(order + "i", value)
    if kind in _UNSIGNED32_TYPES:
        if not 0 <= value <= 0xFFFFFFFF:
            raise ValueError(f"{value} does not fit a {kind.name}")
        return head + struct.pack(order + "I", value)
    if kind == VarType.COUNTER64:
        if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
            raise ValueError(f"{value} does not fit a Counter64")
        return head + struct.pack(order + "Q", value)
    if kind in _STRING_TYPES:
        return head + encode_octet_string(bytes(value), network_byte_order)
    if kind == VarType.OBJECT_IDENTIFIER:
        return head + encode_oid(value, False, network_byte_order)
    return head  # Null and the three exceptions carry no data


def _encode_ranges(ranges: Sequence[SearchRange], network_byte_order: bool) -> bytes:
    return b"".join(
        encode_oid(r.start, r.include, network_byte_order) + encode_oid(r.end, False, network_byte_order)
        for r in ranges
    )


def _encode_varbinds(varbinds: Sequence[VarBind], network_byte_order: bool) -> bytes:
    return b"".join(encode_varbind(v, network_byte_order) for v in varbinds)


def _encode_body(pdu: Pdu) -> bytes:
    nbo = pdu.network_byte_order
    order = _order(nbo)
    if isinstance(pdu, Response):  # first: the answer to every request
        return _struct(order + "IHH").pack(pdu.sys_uptime, pdu.error, pdu.index) + _encode_varbinds(
            pdu.varbinds, nbo
        )
    if isinstance(pdu, Open):
        return struct.pack("Bxxx", pdu.timeout) + encode_oid(pdu.id, False, nbo) + encode_octet_string(
            pdu.description, nbo
        )
    if isinstance(pdu, Close):
        return struct.pack("Bxxx", pdu.reason)
    if isinstance(pdu, (Register, Unregister)):
        first = pdu.timeout if isinstance(pdu, Register) else 0
        body = struct.pack("BBBx", first, pdu.priority, pdu.range_subid) + encode_oid(pdu.subtree, False, nbo)
        if pdu.range_subid:
            body += struct.pack(order + "I", pdu.upper_bound)
        return body
    if isinstance(pdu, (Get, GetNext)):
        return _encode_ranges(pdu.ranges, nbo)
    if isinstance(pdu, GetBulk):
        return struct.pack(order + "HH", pdu.non_repeaters, pdu.max_repetitions) + _encode_ranges(pdu.ranges, nbo)
    if isinstance(pdu, (TestSet, Notify, IndexAllocate, IndexDeallocate)):
        return _encode_varbinds(pdu.varbinds, nbo)
    if isinstance(pdu, AddAgentCaps):
        return encode_oid(pdu.id, False, nbo) + encode_octet_string(pdu.description, nbo)
    if isinstance(pdu, RemoveAgentCaps):
        return encode_oid(pdu.id, False, nbo)
    return b""  # CommitSet, UndoSet, CleanupSet, Ping: header (and context) only


def encode_header(kind: int, flags: int, session_id: int, transaction_id: int, packet_id: int,
                  payload_length: int, network_byte_order: bool = True) -> bytes:
    """RFC 2741 6.1; ``flags`` as sent (NETWORK_BYTE_ORDER included by the caller)."""
    return _struct(_order(network_byte_order) + "BBBxIIII").pack(
        AGENTX_VERSION, kind, flags, session_id, transaction_id, packet_id, payload_length)


def encode(pdu: Pdu) -> bytes:
    nbo = pdu.network_byte_order
    flags = pdu.flags & ~_DERIVED_FLAGS
    if nbo:
        flags |= _NETWORK_BYTE_ORDER
    payload = b""
    if pdu.context is not None:
        if not pdu.HAS_CONTEXT:
            raise ValueError(f"{type(pdu).__name__} cannot carry a context (RFC 2741 6.1.1)")
        flags |= _NON_DEFAULT_CONTEXT
        payload = encode_octet_string(pdu.context, nbo)
    payload += _encode_body(pdu)
    return encode_header(pdu.TYPE, flags, pdu.session_id, pdu.transaction_id, pdu.packet_id, len(payload),
                         nbo) + payload


# ---------------------------------------------------------------------------- decoding


_SUBIDS = [f"{n}I" for n in range(MAX_SUBIDS + 1)]


class _Reader:
    """Walks one PDU payload; every short read is a ProtocolError naming what was cut."""

    __slots__ = ("data", "pos", "order")

    def __init__(self, data: bytes, network_byte_order: bool) -> None:
        self.data = data
        self.pos = 0
        self.order = _order(network_byte_order)

    def take(self, size: int, what: str) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            raise ProtocolError(f"truncated {what}: need {size} bytes at offset {self.pos}, payload has {len(self.data)}")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple:
        layout = _struct(self.order + fmt)
        end = self.pos + layout.size
        if end > len(self.data):
            raise ProtocolError(f"truncated {what}: need {layout.size} bytes at offset {self.pos}, "
                                f"payload has {len(self.data)}")
        values = layout.unpack_from(self.data, self.pos)
        self.pos = end
        return values

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def oid(self, what: str = "OID") -> tuple[Oid, bool]:
        data, pos = self.data, self.pos
        if pos + 4 > len(data):
            self.unpack("BBBx", what)  # raises: truncated
        # Single bytes need no byte order: read them directly (the hot path of every request).
        n_subid, prefix, include = data[pos], data[pos + 1], data[pos + 2]
        self.pos = pos + 4
        if n_subid > MAX_SUBIDS:
            raise ProtocolError(f"{what} claims {n_subid} sub-identifiers, AgentX allows {MAX_SUBIDS}")
        subids = self.unpack(_SUBIDS[n_subid], what) if n_subid else ()
        if include > 1:
            raise ProtocolError(f"{what}: include byte {include} is neither 0 nor 1")
        if prefix:
            return INTERNET_PREFIX + (prefix,) + subids, bool(include)
        return subids, bool(include)

    def octet_string(self, what: str = "octet string") -> bytes:
        (length,) = self.unpack("I", what + " length")
        if length > self.remaining:
            raise ProtocolError(f"{what} claims {length} bytes, only {self.remaining} left in the payload")
        data = self.take(length, what)
        self.take(-length % 4, what + " padding")
        return data

    def varbind(self) -> VarBind:
        (code,) = self.unpack("Hxx", "varbind type")
        try:
            kind = VarType(code)
        except ValueError:
            raise ProtocolError(f"unknown varbind type {code}") from None
        name, _ = self.oid("varbind name")
        if kind == VarType.INTEGER:
            return VarBind(kind, name, self.unpack("i", "Integer value")[0])
        if kind in _UNSIGNED32_TYPES:
            return VarBind(kind, name, self.unpack("I", f"{kind.name} value")[0])
        if kind == VarType.COUNTER64:
            return VarBind(kind, name, self.unpack("Q", "Counter64 value")[0])
        if kind in _STRING_TYPES:
            return VarBind(kind, name, self.octet_string(f"{kind.name} value"))
        if kind == VarType.OBJECT_IDENTIFIER:
            return VarBind(kind, name, self.oid("OID value")[0])
        return VarBind(kind, name)

    def varbinds(self) -> tuple[VarBind, ...]:
        out = []
        while self.remaining:
            out.append(self.varbind())
        return tuple(out)

    def ranges(self) -> tuple[SearchRange, ...]:
        out = []
        while self.remaining:
            start, include = self.oid("search range start")
            end, _ = self.oid("search range end")
            out.append(SearchRange(start, end, include))
        return tuple(out)


def decode_oid(data: bytes, network_byte_order: bool = True) -> tuple[Oid, bool]:
    """Exactly one encoded OID: (sub-identifiers, include)."""
    r = _Reader(data, network_byte_order)
    oid = r.oid()
    if r.remaining:
        raise ProtocolError(f"{r.remaining} trailing bytes after the OID")
    return oid


def _decode_body(cls: type[Pdu], r: _Reader) -> dict:
    if cls is Open:
        (timeout,) = r.unpack("Bxxx", "Open timeout")
        return {"timeout": timeout, "id": r.oid("Open id")[0], "description": r.octet_string("Open descr")}
    if cls is Close:
        (reason,) = r.unpack("Bxxx", "Close reason")
        try:
            return {"reason": CloseReason(reason)}
        except ValueError:
            raise ProtocolError(f"unknown Close reason {reason}") from None
    if cls in (Register, Unregister):
        timeout, priority, range_subid = r.unpack("BBBx", f"{cls.__name__} header")
        fields = {"priority": priority, "range_subid": range_subid, "subtree": r.oid("subtree")[0]}
        if cls is Register:
            fields["timeout"] = timeout
        if range_subid:
            fields["upper_bound"] = r.unpack("I", "upper_bound")[0]
        return fields
    if cls in (Get, GetNext):
        return {"ranges": r.ranges()}
    if cls is GetBulk:
        non_repeaters, max_repetitions = r.unpack("HH", "GetBulk header")
        return {"non_repeaters": non_repeaters, "max_repetitions": max_repetitions, "ranges": r.ranges()}
    if cls in (TestSet, Notify, IndexAllocate, IndexDeallocate):
        return {"varbinds": r.varbinds()}
    if cls is AddAgentCaps:
        return {"id": r.oid("AgentCaps id")[0], "description": r.octet_string("AgentCaps descr")}
    if cls is RemoveAgentCaps:
        return {"id": r.oid("AgentCaps id")[0]}
    if cls is Response:
        sys_uptime, error, index = r.unpack("IHH", "Response header")
        return {"sys_uptime": sys_uptime, "error": error, "index": index, "varbinds": r.varbinds()}
    return {}


class Header(NamedTuple):
    type: PduType
    flags: int
    session_id: int
    transaction_id: int
    packet_id: int
    payload_length: int

    @property
    def network_byte_order(self) -> bool:
        return bool(self.flags & _NETWORK_BYTE_ORDER)


def decode_header(data: bytes, max_payload: int = DEFAULT_MAX_PAYLOAD, offset: int = 0) -> Header:
    """The header at ``offset`` of ``data``."""
    if len(data) - offset < HEADER_SIZE:
        raise ProtocolError(f"truncated header: {len(data) - offset} of {HEADER_SIZE} bytes")
    version, code, flags = data[offset], data[offset + 1], data[offset + 2]
    if version != AGENTX_VERSION:
        raise ProtocolError(f"AgentX version {version}, expected {AGENTX_VERSION}")
    kind = _PDU_TYPES.get(code)
    if kind is None:
        raise ProtocolError(f"unknown PDU type {code}")
    if flags & ~0x1F:
        raise ProtocolError(f"reserved flag bits set: {flags:#04x}")
    order = _order(bool(flags & _NETWORK_BYTE_ORDER))
    session_id, transaction_id, packet_id, length = _struct(order + "IIII").unpack_from(data, offset + 4)
    if length % 4:
        raise ProtocolError(f"payload length {length} is not a multiple of 4 (RFC 2741 6.1)")
    if length > max_payload:
        raise ProtocolError(f"payload length {length} exceeds the {max_payload}-byte limit")
    return Header(kind, flags, session_id, transaction_id, packet_id, length)


def decode_pdu(header: Header, payload: bytes) -> Pdu:
    cls = PDU_CLASSES[header.type]
    nbo = header.network_byte_order
    r = _Reader(payload, nbo)
    context = None
    if header.flags & _NON_DEFAULT_CONTEXT:
        if not cls.HAS_CONTEXT:
            raise ProtocolError(f"{cls.__name__} has NON_DEFAULT_CONTEXT set but carries no context")
        context = r.octet_string("context")
    fields = _decode_body(cls, r)
    if r.remaining:
        raise ProtocolError(f"{r.remaining} trailing bytes after the {cls.__name__} body")
    return cls(
        session_id=header.session_id,
        transaction_id=header.transaction_id,
        packet_id=header.packet_id,
        flags=header.flags & ~_DERIVED_FLAGS,
        network_byte_order=nbo,
        context=context,
        **fields,
    )


def decode(data: bytes, max_payload: int = DEFAULT_MAX_PAYLOAD) -> Pdu:
    """Exactly one PDU, no more, no less."""
    header = decode_header(data, max_payload)
    if len(data) != HEADER_SIZE + header.payload_length:
        raise ProtocolError(
            f"{len(data)} bytes given, the header announces {HEADER_SIZE + header.payload_length}"
        )
    return decode_pdu(header, data[HEADER_SIZE:])


class Decoder:
    """Incremental decoder: ``feed`` any slice of the stream, get the PDUs it completes."""

    def __init__(self, max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete PDU."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Pdu]:
        return [decode_pdu(header, payload) for header, payload in self.frames(data)]

    def frames(self, data: bytes) -> Iterator[tuple[Header, bytes]]:
        """The (header, payload) of each PDU ``data`` completes, not decoded further."""
        # Usually ``data`` holds whole PDUs and nothing is buffered: they are cut straight
        # from it; only an incomplete tail is kept for the next call.
        if self._buffer:
            self._buffer += data
            data = bytes(self._buffer)
            self._buffer.clear()
        pos, size = 0, len(data)
        try:
            while size - pos >= HEADER_SIZE:
                # Checked as soon as the header is complete, so an absurd length fails now
                # instead of buffering forever.
                header = decode_header(data, self.max_payload, pos)
                end = pos + HEADER_SIZE + header.payload_length
                if end > size:
                    break
                yield header, data[pos + HEADER_SIZE:end]
                pos = end
        finally:
            if pos < size:
                self._buffer = bytearray(data[pos:])
