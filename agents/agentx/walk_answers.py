"""The step of a walk answered straight from bytes. Pure.

snmpd forwards a GETBULK to its subagent as one GetNext per varbind and repetition, and each
asks for the successor of the instance the previous one returned.  For one view and byte
order, ``WalkAnswers`` maps the encoded form of every instance OID to the encoded varbind
of the instance after it, prepared once, so such a GetNext costs a dict lookup per search
range instead of decoding the request, searching the view and encoding the answer.

Only that exact case is handled: a start OID that is an instance of the view, not
included, whose successor is a fixed value inside the range's end.  For anything else
``response_body`` returns None and the request takes the general path (decode, answer,
encode), which produces the same bytes (tests/agentx/test_walk_answers.py checks both).
"""

from __future__ import annotations

from .codec import Oid, ProtocolError, decode_oid, encode_oid, encode_varbind
from .view import MibView

# sys_uptime 0, noError, index 0 (RFC 2741 6.2.16): zeros in either byte order.
_NO_ERROR_HEAD = bytes(8)
_MAX_KNOWN_ENDS = 64  # a range's end is a registration boundary: a handful per master
# Request payloads remembered with their answer, per instance: a walk asks each step with the
# same range end every time, so repeated walks of one view are one lookup per step; the bound
# keeps requests with unusual ends or several ranges from growing it.
_ANSWERED_PER_INSTANCE = 4


class WalkAnswers:
    def __init__(self, view: MibView, network_byte_order: bool = True) -> None:
        self.view = view
        self.network_byte_order = network_byte_order
        instances = view.fixed_varbinds()
        # encoded start (include 0) -> (the next instance's OID, its encoded varbind)
        self._successors: dict[bytes, tuple[Oid, bytes]] = {}
        for (oid, _), (next_oid, next_varbind) in zip(instances, instances[1:]):
            if next_varbind is None:
                continue
            try:
                encoded = encode_varbind(next_varbind, network_byte_order)
            except ValueError:
                continue  # the general path answers genErr and reports the bug
            self._successors[encode_oid(oid, False, network_byte_order)] = (next_oid, encoded)
        self._ends: dict[bytes, Oid] = {}
        self._answered: dict[bytes, bytes] = {}
        self._answered_limit = _ANSWERED_PER_INSTANCE * len(self._successors) + _MAX_KNOWN_ENDS

    def __len__(self) -> int:
        return len(self._successors)

    def response_body(self, payload: bytes) -> bytes | None:
        """The Response payload for a GetNext payload (search ranges, no context), or None."""
        body = self._answered.get(payload)
        if body is None:
            body = self._answer(payload)
            if body is not None and len(self._answered) < self._answered_limit:
                self._answered[payload] = body
        return body

    def _answer(self, payload: bytes) -> bytes | None:
        parts = [_NO_ERROR_HEAD]
        pos, size = 0, len(payload)
        if not size:
            return None
        successors = self._successors
        while pos < size:
            start_end = pos + 4 + 4 * payload[pos]
            step = successors.get(payload[pos:start_end])
            if step is None or start_end >= size:
                return None
            range_end = start_end + 4 + 4 * payload[start_end]
            if range_end > size:
                return None
            end = self._end(payload[start_end:range_end])
            if end is None or (end and not step[0] < end):
                return None
            parts.append(step[1])
            pos = range_end
        return b"".join(parts)

    def _end(self, encoded: bytes) -> Oid | None:
        end = self._ends.get(encoded)
        if end is None:
            try:
                end, _ = decode_oid(encoded, self.network_byte_order)
            except ProtocolError:
                return None  # the general path reports it
            if len(self._ends) < _MAX_KNOWN_ENDS:
                self._ends[encoded] = end
        return end
