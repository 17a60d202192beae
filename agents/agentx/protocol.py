"""The subagent's side of one AgentX session (RFC 2741), as a pure state machine.

Fed the PDUs the master sends, it returns the PDUs to send back and what happened, in the
manner of h11: no socket, no clock, no event loop.  ``agents/agentx/session.py`` is the
asyncio shell around it (connecting, timeouts, back-off, the Ping timer).

    protocol = AgentXProtocol(subtrees)
    send(protocol.open())                      # Open
    reply, events = protocol.receive(pdu, view)
    data, events = protocol.receive_data(read_bytes, view)   # the same from bytes to bytes
    # Open answered -> Register each subtree in turn -> Registered(session_id)
    # Get/GetNext/GetBulk/... -> their Response, answered from ``view``
    # a Response to our Ping/Notify/Close -> Answer(packet_id, response)
    send(protocol.request(Ping()))             # ids filled in, the answer awaited by packet id

Phases: CLOSED -> OPENING (Open sent) -> REGISTERING (one Register at a time, RFC 2741 7.1.5)
-> REGISTERED -> CLOSING (our Close sent) or CLOSED (the master's Close, or a refusal).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Sequence

from .codec import (
    Close, Decoder, Flag, Header, Oid, Open, Pdu, PduType, ProtocolError, Register, Response, ResponseError,
    decode_pdu, encode, encode_header,
)
from .responder import REQUEST_TYPES, answer
from .view import MibView
from .walk_answers import WalkAnswers


class Phase(enum.Enum):
    CLOSED = "closed"
    OPENING = "opening"
    REGISTERING = "registering"
    REGISTERED = "registered"
    CLOSING = "closing"


@dataclass(frozen=True)
class Registered:
    session_id: int


@dataclass(frozen=True)
class Refused:
    """The master refused our Open or a Register: this session is of no use."""

    what: str  # "Open" or "Register <subtree>"
    error: int


@dataclass(frozen=True)
class Answer:
    """The master's Response to a request of ours (Ping, Notify, Close)."""

    packet_id: int
    response: Response


@dataclass(frozen=True)
class MasterClosed:
    reason: int


@dataclass(frozen=True)
class AnswerFailed:
    """Answering a request raised: the master got genErr instead (a bug, to be logged)."""

    request: Pdu
    error: Exception


@dataclass(frozen=True)
class StreamBroken:
    """The bytes stopped being AgentX: nothing after them can be read (RFC 2741 7.1)."""

    error: ProtocolError


Event = Registered | Refused | Answer | MasterClosed | AnswerFailed | StreamBroken

_NETWORK_BYTE_ORDER = int(Flag.NETWORK_BYTE_ORDER)
_NON_DEFAULT_CONTEXT = int(Flag.NON_DEFAULT_CONTEXT)


class NotRegistered(RuntimeError):
    pass


class AgentXProtocol:
    def __init__(self, subtrees: Sequence[Oid], *, agent_id: Oid = (), description: bytes = b"",
                 priority: int = 127, first_packet_id: int = 1) -> None:
        self.subtrees = [tuple(s) for s in subtrees]
        self.agent_id = tuple(agent_id)
        self.description = description
        self.priority = priority
        self.phase = Phase.CLOSED
        self.session_id: int | None = None
        self.next_packet_id = first_packet_id
        self._handshake_packet: int | None = None  # the Open or Register awaiting its answer
        self._registering = 0  # index of the subtree being registered
        self._waiting: set[int] = set()  # our Pings, Notifies and Close awaiting an answer
        self.requests = 0  # requests of the master answered
        self._decoder = Decoder()
        self._walk_answers: WalkAnswers | None = None  # for the view last asked

    def _numbered(self, pdu: Pdu, session_id: int = 0) -> Pdu:
        packet_id = self.next_packet_id & 0xFFFFFFFF
        self.next_packet_id = packet_id + 1
        return dataclasses.replace(pdu, session_id=session_id, packet_id=packet_id)

    # ------------------------------------------------------------------ what we send

    def open(self) -> Open:
        if self.phase is not Phase.CLOSED:
            raise RuntimeError(f"open() in phase {self.phase.value}")
        self.phase = Phase.OPENING
        pdu = self._numbered(Open(id=self.agent_id, description=self.description))
        self._handshake_packet = pdu.packet_id
        return pdu

    def request(self, pdu: Pdu) -> Pdu:
        """A Ping, Notify or Close of this session, numbered; its Response comes back as Answer."""
        if self.phase is not Phase.REGISTERED:
            raise NotRegistered(f"no registered session ({self.phase.value})")
        numbered = self._numbered(pdu, self.session_id)
        self._waiting.add(numbered.packet_id)
        if isinstance(pdu, Close):
            self.phase = Phase.CLOSING
        return numbered

    def forget(self, packet_id: int) -> None:
        """The shell stopped waiting (timeout): a late answer is ignored."""
        self._waiting.discard(packet_id)

    # ------------------------------------------------------------------ what we receive

    def receive_data(self, data: bytes, view: MibView | None = None) -> tuple[bytes, list[Event]]:
        """(bytes to send, events) for bytes read from the master: any slice of the stream.

        The answers to all the PDUs ``data`` completes come back as one write.  After a
        StreamBroken event the connection is of no use (the bytes before it are answered)."""
        out: list[bytes] = []
        events: list[Event] = []
        try:
            for header, payload in self._decoder.frames(data):
                if header.type == PduType.GET_NEXT and view is not None:
                    fast = self._walk_step(header, payload, view)
                    if fast is not None:
                        out.append(fast)
                        continue
                replies, more = self.receive(decode_pdu(header, payload), view)
                out.extend(encode(reply) for reply in replies)
                events.extend(more)
        except ProtocolError as exc:
            events.append(StreamBroken(exc))
        return b"".join(out), events

    def _walk_step(self, header: Header, payload: bytes, view: MibView) -> bytes | None:
        """The encoded Response to a GetNext that continues a walk, or None (general path)."""
        if header.flags & _NON_DEFAULT_CONTEXT:
            return None
        nbo = bool(header.flags & _NETWORK_BYTE_ORDER)
        answers = self._walk_answers
        if answers is None or answers.view is not view or answers.network_byte_order != nbo:
            try:
                answers = self._walk_answers = WalkAnswers(view, nbo)  # prepared once per view
            except Exception:  # a broken view: the general path reports it (AnswerFailed)
                return None
        body = answers.response_body(payload)
        if body is None:
            return None
        self.requests += 1
        return encode_header(PduType.RESPONSE, header.flags & _NETWORK_BYTE_ORDER, header.session_id,
                             header.transaction_id, header.packet_id, len(body), nbo) + body

    def receive(self, pdu: Pdu, view: MibView | None = None) -> tuple[list[Pdu], list[Event]]:
        """(PDUs to send, events) for one PDU from the master; ``view`` answers its requests."""
        if isinstance(pdu, Response):
            return self._response(pdu)
        if isinstance(pdu, Close):
            self.phase = Phase.CLOSED
            return [], [MasterClosed(pdu.reason)]
        if not isinstance(pdu, REQUEST_TYPES):
            return [], []  # nothing a subagent answers (RFC 2741 7.1: the master's own PDUs)
        self.requests += 1
        try:
            reply = answer(pdu, view)
        except Exception as exc:  # a bug in one answer must not end the session
            reply = Response(session_id=pdu.session_id, transaction_id=pdu.transaction_id,
                             packet_id=pdu.packet_id, network_byte_order=pdu.network_byte_order,
                             error=ResponseError.GEN_ERR)
            return [reply], [AnswerFailed(pdu, exc)]
        return ([reply] if reply is not None else []), []

    def _response(self, response: Response) -> tuple[list[Pdu], list[Event]]:
        if response.packet_id in self._waiting:
            self._waiting.discard(response.packet_id)
            if self.phase is Phase.CLOSING:
                self.phase = Phase.CLOSED
            return [], [Answer(response.packet_id, response)]
        if response.packet_id != self._handshake_packet:
            return [], []  # an answer nobody waits for any more
        self._handshake_packet = None
        if self.phase is Phase.OPENING:
            if response.error != ResponseError.NO_ERROR:
                self.phase = Phase.CLOSED
                return [], [Refused("Open", response.error)]
            self.session_id = response.session_id
            self.phase = Phase.REGISTERING
            self._registering = 0
            return self._next_register()
        if self.phase is Phase.REGISTERING:
            if response.error != ResponseError.NO_ERROR:
                self.phase = Phase.CLOSED
                subtree = ".".join(map(str, self.subtrees[self._registering]))
                return [], [Refused(f"Register {subtree}", response.error)]
            self._registering += 1
            return self._next_register()
        return [], []

    def _next_register(self) -> tuple[list[Pdu], list[Event]]:
        if self._registering == len(self.subtrees):
            self.phase = Phase.REGISTERED
            return [], [Registered(self.session_id)]
        register = self._numbered(Register(subtree=self.subtrees[self._registering], priority=self.priority),
                                  self.session_id)
        self._handshake_packet = register.packet_id
        return [register], []

