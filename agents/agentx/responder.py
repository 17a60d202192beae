"""What a read-only subagent answers to each request from the master (RFC 2741 7.2). Pure.

``answer(request, view)`` returns the Response to send, or None when the protocol wants
silence (CleanupSet, RFC 2741 7.2.4.4) or the PDU is not a request at all.
"""

from __future__ import annotations

from .codec import (
    CleanupSet, CommitSet, Get, GetBulk, GetNext, Pdu, Response, ResponseError, SearchRange, TestSet,
    UndoSet, VarBind, VarType,
)
from .view import MibView

REQUEST_TYPES = (Get, GetNext, GetBulk, TestSet, CommitSet, UndoSet, CleanupSet)


def _reply(request: Pdu, error: int = ResponseError.NO_ERROR, index: int = 0,
           varbinds: tuple[VarBind, ...] = ()) -> Response:
    # The reply echoes the request's ids and byte order; sysUpTime is only meaningful
    # in responses sent by the master (RFC 2741 6.2.16), so it stays 0.
    return Response(
        session_id=request.session_id,
        transaction_id=request.transaction_id,
        packet_id=request.packet_id,
        network_byte_order=request.network_byte_order,
        error=error,
        index=index,
        varbinds=varbinds,
    )


def get_bulk(view: MibView, request: GetBulk) -> tuple[VarBind, ...]:
    """RFC 2741 7.2.3.3: non-repeaters once, then each repeater up to max-repetitions times."""
    ranges = request.ranges
    non_repeaters = min(request.non_repeaters, len(ranges))
    out = [view.get_next(r) for r in ranges[:non_repeaters]]
    repeaters = list(ranges[non_repeaters:])
    for _ in range(request.max_repetitions if repeaters else 0):
        row = []
        for k, search in enumerate(repeaters):
            result = view.get_next(search)
            row.append(result)
            if result.type != VarType.END_OF_MIB_VIEW:
                repeaters[k] = SearchRange(result.name, search.end, include=False)
        out.extend(row)
        if all(v.type == VarType.END_OF_MIB_VIEW for v in row):
            break
    return tuple(out)


def answer(request: Pdu, view: MibView) -> Response | None:
    if isinstance(request, CleanupSet):
        return None
    if not isinstance(request, REQUEST_TYPES):
        return None
    if request.context is not None:
        # We register in the default context only (RFC 2741 7.1.4.1).
        return _reply(request, ResponseError.UNSUPPORTED_CONTEXT)
    if isinstance(request, Get):
        return _reply(request, varbinds=tuple(view.get(r.start) for r in request.ranges))
    if isinstance(request, GetNext):
        return _reply(request, varbinds=tuple(view.get_next(r) for r in request.ranges))
    if isinstance(request, GetBulk):
        return _reply(request, varbinds=get_bulk(view, request))
    if isinstance(request, TestSet):
        # Every object we serve is read-only: refuse at the first varbind (RFC 2741 7.2.4.1).
        return _reply(request, ResponseError.NOT_WRITABLE, index=1 if request.varbinds else 0)
    if isinstance(request, CommitSet):
        return _reply(request, ResponseError.COMMIT_FAILED)
    return _reply(request, ResponseError.UNDO_FAILED)  # UndoSet
