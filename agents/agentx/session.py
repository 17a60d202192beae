"""The asyncio shell of the subagent: one connection to snmpd, kept alive for ever.

The protocol itself (Open, Register, answering requests, matching answers to our requests)
is the pure ``AgentXProtocol`` (agents/agentx/protocol.py); this module adds what needs I/O
and a clock: the socket, timeouts, the Ping timer and the reconnection back-off.  The
master's requests are read and answered by the socket's own thread (agents/agentx/master_socket.py),
not by the event loop: a walk is one round trip per object and the loop's wake-up per read
was a third of the agent's cost per GetNext.

Per connection (RFC 2741 7.1): Open, Register every subtree, then answer requests from the
current ``MibView`` (never from MySQL) and Ping the master every ``ping_interval`` seconds.
Whenever the master closes the socket, dies, restarts, answers a Ping too late or sends bytes
that are not AgentX, the connection is dropped and made again after a back-off that starts
at 0.1 s and doubles up to 5 s, re-registering each time.  The back-off starts again from
0.1 s only after a session stayed registered for ``healthy_after`` seconds: a master that
accepts the registration and then breaks the session at once (garbage after every Register)
is retried at the back-off's pace, not in a tight loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from . import codec
from .codec import (
    Close, CloseReason, Notify, Oid, Ping, ProtocolError, Response, ResponseError, VarBind, VarType,
)
from .protocol import (
    AgentXProtocol, Answer, AnswerFailed, MasterClosed, NotRegistered, Refused, Registered, StreamBroken,
)
from .master_socket import MasterSocket, SessionLost
from .view import MibView
from ..catalog import format_oid

log = logging.getLogger(__name__)

DEFAULT_ADDRESS = "/var/agentx/master"
SYS_UPTIME_0 = (1, 3, 6, 1, 2, 1, 1, 3, 0)
SNMP_TRAP_OID_0 = (1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0)


class AgentXUnavailable(ConnectionError):
    """No registered session with the master right now (or it refused what we sent)."""


@dataclass(frozen=True)
class MasterAddress:
    """``/path/to/socket`` (Net-SNMP's default is /var/agentx/master) or ``tcp:host:port``."""

    path: str | None = None
    host: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> "MasterAddress":
        if text.startswith("tcp:"):
            host, sep, port = text[4:].rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"AgentX address {text!r}: expected tcp:HOST:PORT")
            return cls(host=host, port=int(port))
        if text.startswith("unix:"):
            text = text[5:]
        if not text:
            raise ValueError("empty AgentX socket path")
        return cls(path=text)

    async def connect(self, loop: asyncio.AbstractEventLoop, send_timeout: float) -> MasterSocket:
        """A connected socket whose reader is not started yet."""
        if self.path is not None:
            return await MasterSocket.connect(loop, socket.AF_UNIX, self.path, send_timeout)
        family, _, _, _, address = (await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM))[0]
        return await MasterSocket.connect(loop, family, address, send_timeout)

    def __str__(self) -> str:
        return self.path if self.path is not None else f"tcp:{self.host}:{self.port}"


@dataclass
class SessionStats:
    connects: int = 0
    registrations: int = 0
    disconnects: int = 0
    protocol_errors: int = 0
    requests: int = 0
    last_error: str | None = None


class AgentXSession:
    """``await session.run(stop_event)`` serves ``view_provider()`` until ``stop_event`` is set."""

    def __init__(
        self,
        address: MasterAddress | str,
        view_provider: Callable[[], MibView],
        subtrees: Sequence[Oid],
        *,
        agent_id: Oid = (),
        description: str = "mysql-snmp",
        ping_interval: float = 15.0,
        response_timeout: float = 5.0,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        healthy_after: float = 10.0,
        priority: int = 127,
    ) -> None:
        self.address = MasterAddress.parse(address) if isinstance(address, str) else address
        self.view_provider = view_provider
        self.subtrees = [tuple(s) for s in subtrees]
        self.agent_id = tuple(agent_id)
        self.description = description.encode()
        self.ping_interval = ping_interval
        self.response_timeout = response_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.healthy_after = healthy_after
        self.priority = priority
        self.stats = SessionStats()
        self.registered = asyncio.Event()
        self.session_id: int | None = None
        self._connection: MasterSocket | None = None
        self._protocol: AgentXProtocol | None = None
        # The reader thread answers requests through the protocol while the loop numbers
        # our own requests (Ping, Notify, Close) with it.
        self._protocol_lock = threading.Lock()
        self._handshake: asyncio.Future | None = None  # resolved with Registered or Refused
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._next_packet_id = 1  # packet ids keep growing across connections
        self._started = time.monotonic()
        self._registered_at: float | None = None
        self._duplicate_warned = False

    # ------------------------------------------------------------------ public

    async def run(self, stop: asyncio.Event) -> None:
        self._loop = asyncio.get_running_loop()
        delay = self.backoff_initial
        failures = 0
        while not stop.is_set():
            error: BaseException | None = None
            try:
                await self._serve_one_connection(stop)
            except (OSError, SessionLost, ProtocolError, asyncio.TimeoutError) as exc:
                error = exc
            except Exception as exc:  # a bug must cost a reconnection, not the agent
                log.exception("AgentX session failed")
                error = exc
            healthy = (self.registered.is_set() and self._registered_at is not None
                       and time.monotonic() - self._registered_at >= self.healthy_after)
            self._drop_connection()
            if stop.is_set():
                break
            if healthy:
                delay, failures = self.backoff_initial, 0
            if isinstance(error, ProtocolError):
                self.stats.protocol_errors += 1
            if error is not None:
                self.stats.last_error = f"{type(error).__name__}: {error}"
                # Loud when a working session breaks, quiet while the master stays away.
                log.log(logging.WARNING if failures == 0 else logging.DEBUG,
                        "AgentX master %s: %s; reconnecting in %.1f s", self.address, error, delay)
            failures += 1
            try:
                await asyncio.wait_for(stop.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
            delay = min(delay * 2, self.backoff_max)

    async def notify(self, trap_oid: Oid, varbinds: Sequence[VarBind] = (), *, with_uptime: bool = False) -> None:
        """Send a notification through the master (RFC 2741 6.2.10: snmpTrapOID.0 first,
        after sysUpTime.0 when that is included)."""
        if not self.registered.is_set():
            raise AgentXUnavailable(f"no AgentX session with {self.address}")
        head = []
        if with_uptime:
            ticks = int((time.monotonic() - self._started) * 100) % 2**32
            head.append(VarBind(VarType.TIME_TICKS, SYS_UPTIME_0, ticks))
        head.append(VarBind(VarType.OBJECT_IDENTIFIER, SNMP_TRAP_OID_0, tuple(trap_oid)))
        try:
            response = await self._request(
                Notify(session_id=self.session_id, varbinds=tuple(head) + tuple(varbinds)))
        except (OSError, SessionLost, asyncio.TimeoutError) as exc:
            raise AgentXUnavailable(f"notification not delivered: {exc}") from exc
        if response.error != ResponseError.NO_ERROR:
            raise AgentXUnavailable(f"master refused the notification: {_error_name(response.error)}")

    def submit_notify(self, trap_oid: Oid, varbinds: Sequence[VarBind] = (), *,
                      with_uptime: bool = False) -> concurrent.futures.Future:
        """``notify`` from another thread (a refresher hook): returns a concurrent Future."""
        if self._loop is None:
            raise AgentXUnavailable("the session is not running")
        return asyncio.run_coroutine_threadsafe(self.notify(trap_oid, varbinds, with_uptime=with_uptime), self._loop)

    # ------------------------------------------------------------------ one connection

    async def _serve_one_connection(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        connection = await asyncio.wait_for(self.address.connect(loop, self.response_timeout),
                                            self.response_timeout)
        protocol = AgentXProtocol(self.subtrees, agent_id=self.agent_id, description=self.description,
                                  priority=self.priority, first_packet_id=self._next_packet_id)
        self._connection, self._protocol = connection, protocol
        connection.start(lambda data: self._received(data, protocol, connection))
        self.stats.connects += 1
        await self._open_and_register()
        log.info("AgentX session %d registered %d subtree(s) with %s",
                 self.session_id, len(self.subtrees), self.address)
        await self._keep_alive(stop)
        if stop.is_set() and not connection.closed.done():
            await self._close(CloseReason.SHUTDOWN)

    async def _open_and_register(self) -> None:
        self._handshake = asyncio.get_running_loop().create_future()
        with self._protocol_lock:
            opening = self._protocol.open()
        self._send(opening)
        closed = self._connection.closed
        # Open, then one Register at a time: each answer within response_timeout
        timeout = self.response_timeout * (1 + len(self.subtrees))
        done, _ = await asyncio.wait({self._handshake, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if self._handshake not in done:
            if closed in done:
                closed.result()
            raise asyncio.TimeoutError(f"Open and Register not answered within {timeout:.1f} s")
        outcome = self._handshake.result()
        if isinstance(outcome, Refused):
            if outcome.error == ResponseError.DUPLICATE_REGISTRATION and not self._duplicate_warned:
                # Another subagent holds this subtree at our priority: an operator has to act
                # (stop it, or give one of them another priority); said once until it clears.
                self._duplicate_warned = True
                log.warning("AgentX master %s: %s is already registered by another subagent at priority %d; "
                            "retrying", self.address, outcome.what.removeprefix("Register "), self.priority)
            raise SessionLost(f"{outcome.what} refused: {_error_name(outcome.error)}")
        self.session_id = outcome.session_id
        self.stats.registrations += 1
        self._duplicate_warned = False
        self._registered_at = time.monotonic()
        self.registered.set()

    async def _keep_alive(self, stop: asyncio.Event) -> None:
        closed = self._connection.closed
        stop_task = asyncio.create_task(stop.wait())
        try:
            while True:
                done, _ = await asyncio.wait({closed, stop_task}, timeout=self.ping_interval,
                                             return_when=asyncio.FIRST_COMPLETED)
                if stop_task in done:
                    return
                if closed in done:
                    closed.result()  # raises why the connection ended
                reply = await self._request(Ping(session_id=self.session_id))
                if reply.error != ResponseError.NO_ERROR:
                    raise SessionLost(f"Ping answered {_error_name(reply.error)}")
        finally:
            stop_task.cancel()

    async def _close(self, reason: CloseReason) -> None:
        try:
            await self._request(Close(session_id=self.session_id, reason=reason), timeout=1.0)
        except (OSError, SessionLost, asyncio.TimeoutError, AgentXUnavailable):
            pass  # the master forgets the session when the socket closes anyway

    # ------------------------------------------------------------------ reading

    def _received(self, data: bytes, protocol: AgentXProtocol, connection: MasterSocket) -> None:
        """Bytes from the master, in the reader thread: the protocol answers the requests among
        them (one write); what concerns the loop goes to it.  Raising ends the connection."""
        with self._protocol_lock:
            answered = protocol.requests
            reply, events = protocol.receive_data(data, self.view_provider())
            self.stats.requests += protocol.requests - answered
        if reply:
            connection.write(reply)
        if not events:
            return
        self._loop.call_soon_threadsafe(self._handle_events, events, connection)
        for event in events:
            if isinstance(event, MasterClosed):
                raise SessionLost(f"master closed the session ({_close_reason(event.reason)})")
            if isinstance(event, StreamBroken):
                raise event.error
            if isinstance(event, AnswerFailed):
                log.error("failed to answer %s", type(event.request).__name__, exc_info=event.error)

    def _handle_events(self, events: list, connection: MasterSocket) -> None:
        """On the loop: answers to our requests and the handshake's outcome."""
        if connection is not self._connection:
            return  # a connection since dropped
        for event in events:
            if isinstance(event, Answer):
                future = self._pending.pop(event.packet_id, None)
                if future is not None and not future.done():
                    future.set_result(event.response)
            elif isinstance(event, (Registered, Refused)):
                if self._handshake is not None and not self._handshake.done():
                    self._handshake.set_result(event)

    # ------------------------------------------------------------------ writing

    def _send(self, pdu: codec.Pdu) -> None:
        if self._connection is None or self._connection.closed.done():
            raise SessionLost("not connected")
        self._connection.write(codec.encode(pdu))

    async def _request(self, pdu: codec.Pdu, timeout: float | None = None) -> Response:
        if self._connection is None or self._protocol is None:
            raise SessionLost("not connected")
        closed = self._connection.closed
        timeout = timeout or self.response_timeout
        try:
            with self._protocol_lock:
                pdu = self._protocol.request(pdu)
        except NotRegistered as exc:
            raise SessionLost(str(exc)) from None
        packet_id = pdu.packet_id
        future = asyncio.get_running_loop().create_future()
        self._pending[packet_id] = future
        try:
            self._send(pdu)
            done, _ = await asyncio.wait({future, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if future in done:
                if future.cancelled():
                    raise SessionLost("connection dropped while waiting for the answer")
                return future.result()
            if closed in done:
                closed.result()
            raise asyncio.TimeoutError(f"no answer to {type(pdu).__name__} within {timeout:.1f} s")
        finally:
            self._pending.pop(packet_id, None)
            if self._protocol is not None:
                with self._protocol_lock:
                    self._protocol.forget(packet_id)

    def _drop_connection(self) -> None:
        self.registered.clear()
        if self._connection is not None:
            self.stats.disconnects += 1
            self._connection.close()
        self._connection = None
        if self._protocol is not None:
            self._next_packet_id = self._protocol.next_packet_id
        self._protocol = None
        self._handshake = None
        self.session_id = None
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()


def _close_reason(reason: int) -> str:
    try:
        return CloseReason(reason).name
    except ValueError:
        return f"reason {reason}"


def _error_name(error: int) -> str:
    try:
        return ResponseError(error).name
    except ValueError:
        return f"error {error}"


