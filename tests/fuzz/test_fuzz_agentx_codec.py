"""Fuzzing the AgentX decoder (agents/agentx/codec.py) with mutated PDUs of every type.

Valid encodings of random PDUs are cut, extended, overwritten and given random length fields,
then decoded whole and fed to the incremental Decoder in random slices.  Only ProtocolError may
come out; a decoded PDU re-encodes to itself, and every number, string and sub-identifier it
holds is in the input bytes (nothing invented)."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from mysql_snmp.agents.agentx import codec
from mysql_snmp.agents.agentx.codec import (
    AddAgentCaps, CleanupSet, Close, CloseReason, CommitSet, Decoder, Get, GetBulk, GetNext, IndexAllocate,
    IndexDeallocate, Notify, Open, Ping, ProtocolError, Register, RemoveAgentCaps, Response, SearchRange,
    UndoSet, Unregister, VarBind, VarType, decode, encode,
)
from tests.fuzz.budget import fuzz_settings, no_hang

u8 = st.integers(0, 255)
u16 = st.integers(0, 2**16 - 1)
u32 = st.integers(0, 2**32 - 1)
subids = st.integers(0, 2**32 - 1) | st.sampled_from([0, 1, 3, 4, 6, 20267, 200])
oids = (st.lists(subids, max_size=12).map(tuple)
        | st.lists(subids, max_size=8).map(lambda tail: (1, 3, 6, 1, 4, 1) + tuple(tail)))
strings = st.binary(max_size=24)
varbinds = st.one_of(
    st.builds(lambda n, v: VarBind(VarType.INTEGER, n, v), oids, st.integers(-(2**31), 2**31 - 1)),
    *(st.builds(lambda n, v, t=t: VarBind(t, n, v), oids, u32)
      for t in (VarType.COUNTER32, VarType.GAUGE32, VarType.TIME_TICKS)),
    st.builds(lambda n, v: VarBind(VarType.COUNTER64, n, v), oids, st.integers(0, 2**64 - 1)),
    *(st.builds(lambda n, v, t=t: VarBind(t, n, v), oids, strings)
      for t in (VarType.OCTET_STRING, VarType.IP_ADDRESS, VarType.OPAQUE)),
    st.builds(lambda n, v: VarBind(VarType.OBJECT_IDENTIFIER, n, v), oids, oids),
    *(st.builds(lambda n, t=t: VarBind(t, n), oids)
      for t in (VarType.NULL, VarType.NO_SUCH_OBJECT, VarType.NO_SUCH_INSTANCE, VarType.END_OF_MIB_VIEW)),
)
ranges = st.lists(st.builds(SearchRange, oids, oids, st.booleans()), max_size=4).map(tuple)
bind_lists = st.lists(varbinds, max_size=4).map(tuple)
header = dict(session_id=u32, transaction_id=u32, packet_id=u32, flags=st.sampled_from([0, 1, 2, 4, 7]),
              network_byte_order=st.booleans())
with_context = dict(header, context=st.none() | strings)
pdus = st.one_of(
    st.builds(Open, timeout=u8, id=oids, description=strings, **header),
    st.builds(Close, reason=st.sampled_from(list(CloseReason)), **header),
    st.builds(Register, timeout=u8, priority=u8, subtree=oids, **with_context),
    st.builds(lambda **kw: Register(range_subid=1, **kw), timeout=u8, subtree=oids.filter(bool), upper_bound=u32,
              **with_context),
    st.builds(Unregister, priority=u8, subtree=oids, **with_context),
    st.builds(Get, ranges=ranges, **with_context),
    st.builds(GetNext, ranges=ranges, **with_context),
    st.builds(GetBulk, non_repeaters=u16, max_repetitions=u16, ranges=ranges, **with_context),
    *(st.builds(cls, varbinds=bind_lists, **with_context) for cls in (codec.TestSet, Notify, IndexAllocate,
                                                                       IndexDeallocate)),
    *(st.builds(cls, **header) for cls in (CommitSet, UndoSet, CleanupSet)),
    st.builds(Ping, **with_context),
    st.builds(AddAgentCaps, id=oids, description=strings, **with_context),
    st.builds(RemoveAgentCaps, id=oids, **with_context),
    st.builds(Response, sys_uptime=u32, error=u16, index=u16, varbinds=bind_lists, **header),
)


def mutate(data: bytes, draw) -> bytes:
    """A few edits of an encoding; the header's length is often kept consistent, so the body's
    own checks are what the edits meet."""
    buffer = bytearray(data)
    for _ in range(draw(st.integers(1, 4), label="edits")):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "word", "drop"]), label="edit")
        at = draw(st.integers(0, max(0, len(buffer) - 1)), label="at")
        if kind == "flip" and buffer:
            buffer[at] = draw(u8, label="byte")
        elif kind == "cut":
            del buffer[at:]
        elif kind == "insert":
            buffer[at:at] = draw(st.binary(min_size=1, max_size=8), label="inserted")
        elif kind == "word" and len(buffer) >= at + 4:  # a length or count field set to anything
            buffer[at:at + 4] = struct.pack(">I", draw(u32 | st.sampled_from([0, 1, 2**31, 2**32 - 1]), label="word"))
        elif kind == "drop" and buffer:
            del buffer[at]
    if len(buffer) >= codec.HEADER_SIZE and draw(st.booleans(), label="fix length"):
        big = bool(buffer[2] & 0x10)
        buffer[16:20] = struct.pack(">I" if big else "<I", len(buffer) - codec.HEADER_SIZE)
    return bytes(buffer)


def assert_from_input(pdu, data: bytes) -> None:
    """Every value the PDU holds is in ``data``, packed as the PDU's byte order packs it."""
    order = ">" if pdu.network_byte_order else "<"

    def has(fmt: str, value: int) -> bool:
        return struct.pack(order + fmt, value) in data

    def oid_from_input(oid) -> None:
        whole = all(has("I", subid) for subid in oid)
        # Or sent with a prefix byte: 1.3.6.1.<prefix> are then not sub-identifier words.
        prefixed = (oid[:4] == (1, 3, 6, 1) and len(oid) > 4 and 0 < oid[4] < 256 and bytes([oid[4]]) in data
                    and all(has("I", subid) for subid in oid[5:]))
        assert whole or prefixed, oid

    for field in ("session_id", "transaction_id", "packet_id"):
        assert has("I", getattr(pdu, field)), field
    if pdu.context is not None:
        assert pdu.context in data
    for name in ("id", "subtree"):
        if hasattr(pdu, name):
            oid_from_input(getattr(pdu, name))
    for name in ("description",):
        if hasattr(pdu, name):
            assert getattr(pdu, name) in data
    for search in getattr(pdu, "ranges", ()):
        oid_from_input(search.start)
        oid_from_input(search.end)
    for varbind in getattr(pdu, "varbinds", ()):
        oid_from_input(varbind.name)
        value = varbind.value
        if varbind.type == VarType.INTEGER:
            assert has("i", value)
        elif varbind.type == VarType.COUNTER64:
            assert has("Q", value)
        elif isinstance(value, int):
            assert has("I", value)
        elif isinstance(value, bytes):
            assert value in data
        elif isinstance(value, tuple):
            oid_from_input(value)


@fuzz_settings()
@given(pdu=pdus)
def test_every_pdu_round_trips(pdu):
    data = encode(pdu)
    with no_hang():
        decoded = decode(data)
    assert decoded == pdu
    assert_from_input(decoded, data)


@fuzz_settings()
@given(pdu=pdus, data=st.data())
def test_mutated_pdus_decode_faithfully_or_raise_protocol_error(pdu, data):
    mutated = mutate(encode(pdu), data.draw)
    try:
        with no_hang():
            decoded = decode(mutated)
    except ProtocolError as error:
        assert str(error) and "\n" not in str(error)
        return
    assert decode(encode(decoded)) == decoded
    assert_from_input(decoded, mutated)


@fuzz_settings()
@given(first=pdus, second=pdus, data=st.data())
def test_the_incremental_decoder_agrees_with_whole_decoding_whatever_the_slicing(first, second, data):
    stream = mutate(encode(first), data.draw) + encode(second)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6), label="cuts"))
    decoder = Decoder()
    fed: list = []
    failed = None
    with no_hang():
        for start, end in zip([0, *cuts], [*cuts, len(stream)]):
            try:
                fed += decoder.feed(stream[start:end])
            except ProtocolError as error:
                failed = error
                break
        assert decoder.pending <= codec.HEADER_SIZE + codec.DEFAULT_MAX_PAYLOAD
    # The same PDUs, in order, as decoding each framed PDU of the stream on its own (after a
    # ProtocolError the stream is given up: the PDUs of the failing slice are not returned).
    expected = []
    offset = 0
    while offset + codec.HEADER_SIZE <= len(stream):
        try:
            head = codec.decode_header(stream[offset:offset + codec.HEADER_SIZE])
        except ProtocolError:
            assert failed is not None
            break
        end = offset + codec.HEADER_SIZE + head.payload_length
        if end > len(stream):
            break
        try:
            expected.append(decode(stream[offset:end]))
        except ProtocolError:
            assert failed is not None
            break
        offset = end
    if failed is None:
        assert fed == expected
    else:
        assert fed == expected[:len(fed)]
