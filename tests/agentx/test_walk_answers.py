"""The walk step answered from bytes (agents/agentx/walk_answers.py) and the protocol's
bytes-in/bytes-out path: the same bytes as decoding, answering from the view and encoding."""

import struct

import pytest

from mysql_snmp.agents.agentx.codec import (
    Decoder, Get, GetNext, Ping, Response, ResponseError, SearchRange, VarBind, VarType, encode,
)
from mysql_snmp.agents.agentx.protocol import AgentXProtocol, StreamBroken
from mysql_snmp.agents.agentx.responder import answer
from mysql_snmp.agents.agentx.view import MibView, TreeLayout, build_view
from mysql_snmp.agents.agentx.walk_answers import WalkAnswers
from tests.agentx.synthetic import LEGACY, NEW, synthetic_catalog, synthetic_snapshot

LAYOUT = TreeLayout.from_catalog(synthetic_catalog())
VIEW = build_view(LAYOUT, synthetic_snapshot())
AGE = (1, 3, 6, 1, 4, 1, 20267, 200, 2, 2, 2, 0)  # myAgentDataAge.0: computed when asked


def general_body(request: GetNext, view) -> bytes:
    return encode(answer(request, view))[20:]


def payload(request: GetNext) -> bytes:
    return encode(request)[20:]


def ends_for(view):
    oids = view.oids
    return [(), NEW, oids[len(oids) // 2], oids[-1], oids[1], (2,)]


@pytest.mark.parametrize("network_byte_order", [True, False])
def test_every_step_of_a_walk_gives_the_general_paths_bytes(network_byte_order):
    assert AGE in VIEW.oids
    answers = WalkAnswers(VIEW, network_byte_order)
    answered = 0
    for start in VIEW.oids:
        for end in ends_for(VIEW):
            request = GetNext(network_byte_order=network_byte_order, ranges=(SearchRange(start, end),))
            body = answers.response_body(payload(request))
            expected = answer(request, VIEW).varbinds[0]
            # Answered from bytes exactly when the successor is a fixed value inside the range.
            handled = expected.type != VarType.END_OF_MIB_VIEW and expected.name != AGE
            assert (body is not None) == handled, (start, end)
            if handled:
                assert body == general_body(request, VIEW)
                answered += 1
    assert answered > 2 * len(VIEW)  # most steps of most ranges


def test_several_ranges_in_one_getnext():
    oids = VIEW.oids
    request = GetNext(ranges=(SearchRange(oids[0], NEW), SearchRange(oids[3]), SearchRange(oids[5], ())))
    assert WalkAnswers(VIEW).response_body(payload(request)) == general_body(request, VIEW)
    # One range the fast path cannot answer sends the whole request to the general path.
    mixed = GetNext(ranges=(SearchRange(oids[0]), SearchRange(LEGACY)))
    assert WalkAnswers(VIEW).response_body(payload(mixed)) is None


def test_a_second_walk_is_answered_alike_and_the_remembered_requests_stay_bounded():
    answers = WalkAnswers(VIEW)
    steps = [GetNext(ranges=(SearchRange(start, end),)) for start in VIEW.oids[:-1] for end in ends_for(VIEW)]
    first = [answers.response_body(payload(step)) for step in steps]
    again = [answers.response_body(payload(step)) for step in steps]
    assert again == first
    assert [body for body in first if body is not None] == [
        general_body(step, VIEW) for step, body in zip(steps, first) if body is not None]
    # Far more distinct requests than the view has instances: what is remembered stays bounded
    # and the answers stay right.
    several = [GetNext(ranges=(SearchRange(a, NEW), SearchRange(b, NEW)))
               for a in VIEW.oids[:-2] for b in VIEW.oids[:-2]]
    for step in several:
        body = answers.response_body(payload(step))
        assert body is None or body == general_body(step, VIEW)
    assert len(answers._answered) <= answers._answered_limit < len(several)


@pytest.mark.parametrize("search", [
    SearchRange(LEGACY),                                  # not an instance: the first step of a walk
    SearchRange(LEGACY + (1, 0), include=True),           # included start
    SearchRange(LEGACY + (1, 0), LEGACY + (1, 0, 5)),     # the successor is past the end
    SearchRange((1, 3, 6, 1, 4, 1, 20267, 200, 9, 0)),  # after the last instance
])
def test_other_requests_take_the_general_path(search):
    assert WalkAnswers(VIEW).response_body(payload(GetNext(ranges=(search,)))) is None


def test_cut_or_empty_payloads_take_the_general_path():
    whole = payload(GetNext(ranges=(SearchRange(VIEW.oids[0], NEW),)))
    answers = WalkAnswers(VIEW)
    assert answers.response_body(b"") is None
    for cut in range(1, len(whole)):
        assert answers.response_body(whole[:cut]) is None, cut
    garbage_end = whole[: len(whole) - 4 * (len(NEW) - 5) - 4] + bytes([200, 0, 0, 0])
    assert answers.response_body(garbage_end) is None


def test_values_that_cannot_be_encoded_are_left_to_the_general_path():
    oids = [LEGACY + (n, 0) for n in (1, 2, 3)]
    bad = VarBind(VarType.COUNTER32, oids[1], 2**40)  # a bug upstream: not a Counter32
    view = MibView([(oids[0], VarBind(VarType.GAUGE32, oids[0], 1)), (oids[1], bad),
                    (oids[2], VarBind(VarType.GAUGE32, oids[2], 3))], [o[:-1] for o in oids])
    answers = WalkAnswers(view)
    assert answers.response_body(payload(GetNext(ranges=(SearchRange(oids[0]),)))) is None
    step = GetNext(ranges=(SearchRange(oids[1]),))
    assert answers.response_body(payload(step)) == general_body(step, view)


# --- the protocol, bytes in and bytes out -------------------------------------------------------

def registered() -> AgentXProtocol:
    protocol = AgentXProtocol([LEGACY, NEW])
    opened = protocol.open()
    data, _ = protocol.receive_data(encode(Response(session_id=7, packet_id=opened.packet_id)))
    for _ in range(2):
        (register,) = Decoder().feed(data)
        data, events = protocol.receive_data(encode(Response(session_id=7, packet_id=register.packet_id)))
    assert protocol.session_id == 7 and data == b""
    return protocol


def walk_requests(view, network_byte_order=True):
    oids = view.oids
    requests = [GetNext(session_id=7, transaction_id=100 + i, packet_id=1000 + i,
                        network_byte_order=network_byte_order, ranges=(SearchRange(start, NEW),))
                for i, start in enumerate([LEGACY] + oids)]
    requests.append(Get(session_id=7, packet_id=5, ranges=(SearchRange(oids[0]),)))
    requests.append(GetNext(session_id=7, packet_id=6, context=b"other", ranges=(SearchRange(oids[0]),)))
    return requests


@pytest.mark.parametrize("network_byte_order", [True, False])
def test_a_whole_walk_in_one_read_is_answered_in_one_write(network_byte_order):
    requests = walk_requests(VIEW, network_byte_order)
    expected = b"".join(encode(answer(r, VIEW)) for r in requests)
    protocol = registered()
    data, events = protocol.receive_data(b"".join(encode(r) for r in requests), VIEW)
    assert data == expected and events == []
    assert protocol.requests == len(requests)
    replies = Decoder().feed(data)
    assert replies[-1].error == ResponseError.UNSUPPORTED_CONTEXT


@pytest.mark.parametrize("chunk", [1, 3, 19, 20, 21, 57, 200])
def test_any_split_of_the_stream_gives_the_same_bytes(chunk):
    stream = b"".join(encode(r) for r in walk_requests(VIEW))
    protocol = registered()
    sent = b"".join(protocol.receive_data(stream[i:i + chunk], VIEW)[0] for i in range(0, len(stream), chunk))
    assert sent == b"".join(encode(answer(r, VIEW)) for r in walk_requests(VIEW))


def test_a_new_view_is_answered_at_once():
    protocol = registered()
    com_select64 = (1, 3, 6, 1, 4, 1, 20267, 200, 2, 1, 1, 0)
    for value in (11, 12, 2**40):
        view = build_view(LAYOUT, synthetic_snapshot(com_select=value))
        before = [oid for oid in view.oids if oid < com_select64][-1]
        request = encode(GetNext(session_id=7, packet_id=11, ranges=(SearchRange(before),)))
        (reply,) = Decoder().feed(protocol.receive_data(request, view)[0])
        assert reply.varbinds == (VarBind(VarType.COUNTER64, com_select64, value),)


def test_bytes_after_garbage_are_not_read_but_those_before_are_answered():
    protocol = registered()
    good = encode(GetNext(session_id=7, packet_id=3, ranges=(SearchRange(VIEW.oids[0]),)))
    garbage = struct.pack(">BBBxIIII", 1, 99, 0x10, 0, 0, 0, 0)
    data, events = protocol.receive_data(good + garbage + encode(Ping(session_id=7)), VIEW)
    assert data == encode(answer(Decoder().feed(good)[0], VIEW))
    assert len(events) == 1 and isinstance(events[0], StreamBroken)
    assert "unknown PDU type 99" in str(events[0].error)
