"""The pure AgentX protocol: PDUs in, PDUs and events out; no socket, no clock."""

import pytest

from mysql_snmp.agents.agentx.codec import (
    CleanupSet, Close, CloseReason, Get, GetNext, Notify, Open, Ping, Register, Response, ResponseError,
    SearchRange,
)
from mysql_snmp.agents.agentx.protocol import (
    AgentXProtocol, Answer, AnswerFailed, MasterClosed, NotRegistered, Phase, Refused, Registered,
)
from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from tests.agentx.synthetic import LEGACY, NEW, synthetic_catalog, synthetic_snapshot

VIEW = build_view(TreeLayout.from_catalog(synthetic_catalog()), synthetic_snapshot())


def registered_protocol(session_id: int = 42) -> AgentXProtocol:
    protocol = AgentXProtocol([LEGACY, NEW], agent_id=(1, 2), description=b"test", priority=100)
    opened = protocol.open()
    sent, events = protocol.receive(Response(session_id=session_id, packet_id=opened.packet_id))
    for _ in range(2):
        (register,) = sent
        sent, events = protocol.receive(Response(session_id=session_id, packet_id=register.packet_id))
    assert events == [Registered(session_id)]
    return protocol


def test_open_then_one_register_at_a_time_then_registered():
    protocol = AgentXProtocol([LEGACY, NEW], agent_id=(1, 2), description=b"test", priority=100)
    opened = protocol.open()
    assert isinstance(opened, Open) and (opened.id, opened.description) == ((1, 2), b"test")
    assert protocol.phase is Phase.OPENING
    sent, events = protocol.receive(Response(session_id=7, packet_id=opened.packet_id))
    assert events == [] and protocol.phase is Phase.REGISTERING
    (first,) = sent
    assert isinstance(first, Register) and (first.session_id, first.subtree, first.priority) == (7, LEGACY, 100)
    assert protocol.receive(Response(session_id=7, packet_id=999)) == ([], [])  # not the awaited answer
    (second,), events = protocol.receive(Response(session_id=7, packet_id=first.packet_id))
    assert second.subtree == NEW and second.packet_id != first.packet_id and events == []
    assert protocol.receive(Response(session_id=7, packet_id=second.packet_id)) == ([], [Registered(7)])
    assert protocol.phase is Phase.REGISTERED and protocol.session_id == 7


def test_a_refused_register_ends_the_session():
    protocol = AgentXProtocol([LEGACY, NEW])
    opened = protocol.open()
    (register,), _ = protocol.receive(Response(session_id=3, packet_id=opened.packet_id))
    sent, events = protocol.receive(Response(session_id=3, packet_id=register.packet_id,
                                             error=ResponseError.DUPLICATE_REGISTRATION))
    assert sent == [] and events == [Refused("Register " + ".".join(map(str, LEGACY)),
                                             ResponseError.DUPLICATE_REGISTRATION)]
    assert protocol.phase is Phase.CLOSED
    refused = AgentXProtocol([LEGACY])
    opened = refused.open()
    assert refused.receive(Response(packet_id=opened.packet_id, error=ResponseError.OPEN_FAILED))[1] == [
        Refused("Open", ResponseError.OPEN_FAILED)]


def test_requests_are_answered_from_the_view_with_their_ids():
    protocol = registered_protocol()
    request = GetNext(session_id=42, transaction_id=9, packet_id=77, ranges=(SearchRange(LEGACY),))
    (reply,), events = protocol.receive(request, VIEW)
    assert isinstance(reply, Response) and events == []
    assert (reply.session_id, reply.transaction_id, reply.packet_id) == (42, 9, 77)
    assert reply.varbinds[0].name[: len(LEGACY)] == LEGACY
    assert protocol.receive(CleanupSet(session_id=42, packet_id=78), VIEW) == ([], [])  # RFC 2741 7.2.4.4


def test_our_pings_and_notifies_are_matched_by_packet_id():
    protocol = registered_protocol()
    ping = protocol.request(Ping())
    notify = protocol.request(Notify(varbinds=()))
    assert (ping.session_id, notify.session_id) == (42, 42) and ping.packet_id != notify.packet_id
    answer = Response(session_id=42, packet_id=notify.packet_id)
    assert protocol.receive(answer) == ([], [Answer(notify.packet_id, answer)])
    assert protocol.receive(answer) == ([], [])  # answered once
    protocol.forget(ping.packet_id)  # the shell gave up waiting: a late answer is ignored
    assert protocol.receive(Response(session_id=42, packet_id=ping.packet_id)) == ([], [])


def test_close_from_either_side():
    protocol = registered_protocol()
    close = protocol.request(Close(reason=CloseReason.SHUTDOWN))
    assert protocol.phase is Phase.CLOSING
    assert protocol.receive(Response(session_id=42, packet_id=close.packet_id))[1][0].packet_id == close.packet_id
    assert protocol.phase is Phase.CLOSED
    with pytest.raises(NotRegistered):
        protocol.request(Ping())
    other = registered_protocol()
    assert other.receive(Close(session_id=42, reason=CloseReason.SHUTDOWN)) == ([], [MasterClosed(CloseReason.SHUTDOWN)])
    assert other.phase is Phase.CLOSED


def test_no_ping_before_registration_and_packet_ids_continue():
    protocol = AgentXProtocol([NEW], first_packet_id=500)
    with pytest.raises(NotRegistered):
        protocol.request(Ping())
    assert protocol.open().packet_id == 500 and protocol.next_packet_id == 501


def test_a_failing_answer_is_gen_err_and_an_event():
    class BrokenView:
        def get(self, oid):
            raise RuntimeError("bug")

    protocol = registered_protocol()
    request = Get(session_id=42, packet_id=5, ranges=(SearchRange(LEGACY + (1, 0)),))
    (reply,), (event,) = protocol.receive(request, BrokenView())
    assert reply.error == ResponseError.GEN_ERR and reply.packet_id == 5
    assert isinstance(event, AnswerFailed) and str(event.error) == "bug"
