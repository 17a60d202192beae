"""AgentX codec against hand-built bytes (RFC 2741 section 5 and 6 layouts)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, strategies as st

from mysql_snmp.agents.agentx import codec
from mysql_snmp.agents.agentx.codec import (
    AddAgentCaps, CleanupSet, Close, CloseReason, CommitSet, Decoder, Get, GetBulk, GetNext,
    IndexAllocate, IndexDeallocate, Notify, Open, Ping, ProtocolError, Register, RemoveAgentCaps,
    Response, SearchRange, UndoSet, Unregister, VarBind, VarType, decode, encode,
)

NBO = 0x10  # NETWORK_BYTE_ORDER


def header(pdu_type: int, flags: int, session: int, transaction: int, packet: int, payload: bytes,
           big: bool = True) -> bytes:
    order = ">" if big else "<"
    return struct.pack(order + "BBBxIIII", 1, pdu_type, flags, session, transaction, packet, len(payload)) + payload


# --- OIDs ------------------------------------------------------------------------------------


def test_internet_prefix_is_compressed():
    # 1.3.6.1.4.1.20267.200.1.5.0: prefix 4, then six sub-identifiers.
    expected = bytes([6, 4, 0, 0]) + struct.pack(">6I", 1, 20267, 200, 1, 5, 0)
    assert codec.encode_oid((1, 3, 6, 1, 4, 1, 20267, 200, 1, 5, 0)) == expected


def test_oid_outside_internet_and_prefix_over_255_are_sent_whole():
    assert codec.encode_oid((1, 2, 3)) == bytes([3, 0, 0, 0]) + struct.pack(">3I", 1, 2, 3)
    assert codec.encode_oid((1, 3, 6, 1, 300, 7)) == bytes([6, 0, 0, 0]) + struct.pack(">6I", 1, 3, 6, 1, 300, 7)


def test_null_oid_and_include_bit_and_little_endian():
    assert codec.encode_oid(()) == b"\x00\x00\x00\x00"
    assert codec.encode_oid((1, 3, 6, 1, 2, 1), include=True, network_byte_order=False) == (
        bytes([1, 2, 1, 0]) + struct.pack("<I", 1)
    )


def test_prefix_alone_decodes_to_five_subids():
    pdu = decode(header(6, NBO, 1, 2, 3, bytes([0, 2, 1, 0]) + b"\x00" * 4))
    assert pdu.ranges == (SearchRange((1, 3, 6, 1, 2), (), include=True),)


# --- Octet strings and varbinds -----------------------------------------------------------------


def test_octet_string_is_padded_to_four_bytes():
    assert codec.encode_octet_string(b"abcde") == b"\x00\x00\x00\x05abcde\x00\x00\x00"
    assert codec.encode_octet_string(b"abcd") == b"\x00\x00\x00\x04abcd"
    assert codec.encode_octet_string(b"") == b"\x00\x00\x00\x00"


@pytest.mark.parametrize(
    "varbind, data",
    [
        (VarBind(VarType.INTEGER, (1, 2), -2), struct.pack(">i", -2)),
        (VarBind(VarType.COUNTER32, (1, 2), 2**32 - 1), b"\xff\xff\xff\xff"),
        (VarBind(VarType.GAUGE32, (1, 2), 7), struct.pack(">I", 7)),
        (VarBind(VarType.TIME_TICKS, (1, 2), 100), struct.pack(">I", 100)),
        (VarBind(VarType.COUNTER64, (1, 2), 2**64 - 1), b"\xff" * 8),
        (VarBind(VarType.OCTET_STRING, (1, 2), b"ON"), b"\x00\x00\x00\x02ON\x00\x00"),
        (VarBind(VarType.IP_ADDRESS, (1, 2), b"\x7f\x00\x00\x01"), b"\x00\x00\x00\x04\x7f\x00\x00\x01"),
        (VarBind(VarType.OBJECT_IDENTIFIER, (1, 2), (1, 3, 6, 1, 6, 3, 1)), bytes([2, 6, 0, 0]) + struct.pack(">2I", 3, 1)),
        (VarBind(VarType.NULL, (1, 2)), b""),
        (VarBind(VarType.NO_SUCH_OBJECT, (1, 2)), b""),
        (VarBind(VarType.NO_SUCH_INSTANCE, (1, 2)), b""),
        (VarBind(VarType.END_OF_MIB_VIEW, (1, 2)), b""),
    ],
    ids=lambda v: v.type.name if isinstance(v, VarBind) else None,
)
def test_varbind_layout(varbind, data):
    expected = struct.pack(">Hxx", varbind.type) + bytes([2, 0, 0, 0]) + struct.pack(">2I", 1, 2) + data
    assert codec.encode_varbind(varbind) == expected
    response = Response(varbinds=(varbind,))
    assert decode(encode(response)) == response


@pytest.mark.parametrize(
    "varbind",
    [
        VarBind(VarType.COUNTER64, (1,), 2**64),
        VarBind(VarType.COUNTER32, (1,), 2**32),
        VarBind(VarType.GAUGE32, (1,), -1),
        VarBind(VarType.INTEGER, (1,), 2**31),
    ],
)
def test_values_out_of_range_are_refused_not_wrapped(varbind):
    with pytest.raises(ValueError):
        codec.encode_varbind(varbind)


# --- Whole PDUs from hand-built bytes ----------------------------------------------------------------


def test_open_pdu_bytes():
    pdu = Open(packet_id=1, timeout=5, id=(1, 3, 6, 1, 4, 1, 20267), description=b"mysql")
    payload = bytes([5, 0, 0, 0]) + bytes([2, 4, 0, 0]) + struct.pack(">2I", 1, 20267) + b"\x00\x00\x00\x05mysql\x00\x00\x00"
    assert encode(pdu) == header(1, NBO, 0, 0, 1, payload)
    assert decode(header(1, NBO, 0, 0, 1, payload)) == pdu


def test_little_endian_open_decodes_and_reencodes_identically():
    payload = bytes([0, 0, 0, 0]) + bytes([1, 4, 0, 0]) + struct.pack("<I", 1) + struct.pack("<I", 1) + b"x\x00\x00\x00"
    data = header(1, 0, 9, 8, 7, payload, big=False)
    pdu = decode(data)
    assert pdu == Open(session_id=9, transaction_id=8, packet_id=7, network_byte_order=False,
                       id=(1, 3, 6, 1, 4, 1), description=b"x")
    assert encode(pdu) == data


def test_close_register_unregister():
    assert encode(Close(session_id=3, reason=CloseReason.SHUTDOWN)) == header(2, NBO, 3, 0, 0, bytes([5, 0, 0, 0]))
    subtree = bytes([3, 4, 0, 0]) + struct.pack(">3I", 1, 20267, 200)
    reg = header(3, NBO, 3, 0, 4, bytes([0, 127, 0, 0]) + subtree)
    assert decode(reg) == Register(session_id=3, packet_id=4, subtree=(1, 3, 6, 1, 4, 1, 20267, 200))
    assert encode(decode(reg)) == reg
    # range registration: sub-identifier 3 of the subtree ranges up to 9
    ranged = header(4, NBO, 3, 0, 5, bytes([0, 100, 3, 0]) + subtree + struct.pack(">I", 9))
    assert decode(ranged) == Unregister(session_id=3, packet_id=5, priority=100,
                                        subtree=(1, 3, 6, 1, 4, 1, 20267, 200), range_subid=3, upper_bound=9)
    assert encode(decode(ranged)) == ranged


def test_get_next_with_context_include_and_end():
    start = bytes([2, 4, 1, 0]) + struct.pack(">2I", 1, 20267)
    end = bytes([2, 4, 0, 0]) + struct.pack(">2I", 1, 20268)
    context = b"\x00\x00\x00\x03ctx\x00"
    data = header(6, NBO | 0x08, 1, 2, 3, context + start + end + b"\x00" * 8)
    pdu = decode(data)
    assert pdu == GetNext(session_id=1, transaction_id=2, packet_id=3, context=b"ctx", ranges=(
        SearchRange((1, 3, 6, 1, 4, 1, 20267), (1, 3, 6, 1, 4, 1, 20268), include=True),
        SearchRange((), ()),
    ))
    assert encode(pdu) == data


def test_get_and_getbulk():
    start = bytes([1, 2, 0, 0]) + struct.pack(">I", 1)
    get = header(5, NBO, 1, 1, 1, start + b"\x00" * 4)
    assert decode(get) == Get(session_id=1, transaction_id=1, packet_id=1, ranges=(SearchRange((1, 3, 6, 1, 2, 1)),))
    bulk = header(7, NBO, 1, 1, 2, struct.pack(">HH", 1, 10) + start + b"\x00" * 4)
    assert decode(bulk) == GetBulk(session_id=1, transaction_id=1, packet_id=2, non_repeaters=1, max_repetitions=10,
                                   ranges=(SearchRange((1, 3, 6, 1, 2, 1)),))
    assert encode(decode(bulk)) == bulk


def test_set_phases_ping_notify_index_caps():
    varbind = struct.pack(">Hxx", 2) + bytes([1, 0, 0, 0]) + struct.pack(">I", 1) + struct.pack(">i", 42)
    assert decode(header(8, NBO, 1, 5, 1, varbind)) == codec.TestSet(session_id=1, transaction_id=5, packet_id=1,
                                                              varbinds=(VarBind(VarType.INTEGER, (1,), 42),))
    assert decode(header(9, NBO, 1, 5, 2, b"")) == CommitSet(session_id=1, transaction_id=5, packet_id=2)
    assert decode(header(10, NBO, 1, 5, 3, b"")) == UndoSet(session_id=1, transaction_id=5, packet_id=3)
    assert decode(header(11, NBO, 1, 5, 4, b"")) == CleanupSet(session_id=1, transaction_id=5, packet_id=4)
    assert decode(header(13, NBO, 1, 0, 5, b"")) == Ping(session_id=1, packet_id=5)
    assert decode(header(12, NBO, 1, 0, 6, varbind)).varbinds == (VarBind(VarType.INTEGER, (1,), 42),)
    assert isinstance(decode(header(12, NBO, 1, 0, 6, varbind)), Notify)
    assert decode(header(14, NBO, 1, 0, 7, varbind)) == IndexAllocate(session_id=1, packet_id=7,
                                                                     varbinds=(VarBind(VarType.INTEGER, (1,), 42),))
    assert isinstance(decode(header(15, NBO, 1, 0, 8, varbind)), IndexDeallocate)
    caps_id = bytes([1, 0, 0, 0]) + struct.pack(">I", 7)
    assert decode(header(16, NBO, 1, 0, 9, caps_id + b"\x00\x00\x00\x01d\x00\x00\x00")) == AddAgentCaps(
        session_id=1, packet_id=9, id=(7,), description=b"d")
    assert decode(header(17, NBO, 1, 0, 10, caps_id)) == RemoveAgentCaps(session_id=1, packet_id=10, id=(7,))


def test_response_bytes():
    payload = struct.pack(">IHH", 1234, 262, 1)
    assert decode(header(18, NBO, 4, 5, 6, payload)) == Response(
        session_id=4, transaction_id=5, packet_id=6, sys_uptime=1234, error=262, index=1)
    assert encode(Response(session_id=4, transaction_id=5, packet_id=6, sys_uptime=1234, error=262, index=1)) == (
        header(18, NBO, 4, 5, 6, payload))


# --- Incremental decoder -------------------------------------------------------------------------


def test_decoder_accepts_one_byte_at_a_time_and_several_pdus_per_chunk():
    stream = encode(Ping(session_id=1, packet_id=1)) + encode(
        GetNext(session_id=1, packet_id=2, ranges=(SearchRange((1, 3, 6, 1, 4, 1, 20267), include=True),)))
    decoder = Decoder()
    seen = []
    for i in range(len(stream)):
        seen += decoder.feed(stream[i:i + 1])
        if i < 19:
            assert seen == []
    assert [type(p) for p in seen] == [Ping, GetNext]
    assert decoder.pending == 0
    assert Decoder().feed(stream + stream[:7]) == seen


# --- Garbage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, message",
    [
        (header(0, NBO, 0, 0, 0, b""), "unknown PDU type 0"),
        (b"\x02" + header(5, NBO, 0, 0, 0, b"")[1:], "version 2"),
        (header(99, NBO, 0, 0, 0, b""), "unknown PDU type 99"),
        (struct.pack(">BBBxIIII", 1, 5, NBO, 0, 0, 0, 6) + b"\x00" * 6, "not a multiple of 4"),
        (struct.pack(">BBBxIIII", 1, 5, NBO, 0, 0, 0, 0xFFFFFFFC), "exceeds"),
        (header(5, NBO | 0x80, 0, 0, 0, b""), "reserved flag"),
        (header(5, NBO, 0, 0, 0, bytes([3, 0, 0, 0]) + b"\x00" * 4), "truncated search range start"),
        (header(5, NBO, 0, 0, 0, bytes([200, 0, 0, 0])), "200 sub-identifiers"),
        (header(1, NBO, 0, 0, 0, b"\x00" * 8 + struct.pack(">I", 4000)), "claims 4000 bytes"),
        (header(13, NBO, 0, 0, 0, b"\x00" * 4), "4 trailing bytes"),
        (header(18, NBO | 0x08, 0, 0, 0, b"\x00" * 12), "carries no context"),
        (header(18, NBO, 0, 0, 0, struct.pack(">IHH", 0, 0, 0) + struct.pack(">Hxx", 99) + b"\x00" * 4),
         "unknown varbind type 99"),
        (header(2, NBO, 0, 0, 0, bytes([9, 0, 0, 0])), "unknown Close reason 9"),
    ],
)
def test_garbage_raises_protocol_error(data, message):
    with pytest.raises(ProtocolError, match=message):
        Decoder().feed(data)


def test_absurd_length_fails_on_the_header_alone():
    with pytest.raises(ProtocolError, match="exceeds the 1048576-byte limit"):
        Decoder().feed(struct.pack(">BBBxIIII", 1, 18, NBO, 0, 0, 0, 1 << 24))


def test_text_on_the_socket_is_refused():
    with pytest.raises(ProtocolError):
        Decoder().feed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")


# --- Round trip over everything the codec can express ---------------------------------------------

oids = st.lists(st.integers(0, 2**32 - 1), max_size=12).map(tuple) | st.lists(
    st.integers(0, 300), min_size=5, max_size=10).map(lambda t: (1, 3, 6, 1) + tuple(t))
values = st.one_of(
    st.builds(lambda n, v: VarBind(VarType.INTEGER, n, v), oids, st.integers(-(2**31), 2**31 - 1)),
    st.builds(lambda n, v: VarBind(VarType.GAUGE32, n, v), oids, st.integers(0, 2**32 - 1)),
    st.builds(lambda n, v: VarBind(VarType.COUNTER64, n, v), oids, st.integers(0, 2**64 - 1)),
    st.builds(lambda n, v: VarBind(VarType.OCTET_STRING, n, v), oids, st.binary(max_size=40)),
    st.builds(lambda n: VarBind(VarType.NO_SUCH_INSTANCE, n), oids),
)


@given(varbinds=st.lists(values, max_size=6).map(tuple), nbo=st.booleans(), packet=st.integers(0, 2**32 - 1))
def test_response_round_trips_in_both_byte_orders(varbinds, nbo, packet):
    pdu = Response(packet_id=packet, network_byte_order=nbo, varbinds=varbinds)
    assert decode(encode(pdu)) == pdu


@given(ranges=st.lists(st.builds(SearchRange, oids, oids, st.booleans()), max_size=5).map(tuple),
       context=st.none() | st.binary(max_size=9), nbo=st.booleans())
def test_getnext_round_trips(ranges, context, nbo):
    pdu = GetNext(ranges=ranges, context=context, network_byte_order=nbo)
    assert decode(encode(pdu)) == pdu
