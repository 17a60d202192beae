"""The asyncio session against our own fake master on a unix socket: the protocol flow,
reconnection, and a hostile peer that sends garbage."""

from __future__ import annotations

import asyncio
import struct
from contextlib import asynccontextmanager

from mysql_snmp.agents.agentx import codec
from mysql_snmp.agents.agentx.codec import (
    CleanupSet, Close, CloseReason, Decoder, Get, GetNext, Notify, Open, Ping, Register, Response,
    ResponseError, SearchRange, VarType,
)
from mysql_snmp.agents.agentx.session import SNMP_TRAP_OID_0, SYS_UPTIME_0, AgentXSession, MasterAddress
from mysql_snmp.agents.agentx.view import TreeLayout, build_view
from tests.agentx.synthetic import LEGACY, NEW, synthetic_catalog, synthetic_snapshot

TIMEOUT = 5.0


class FakeConnection:
    """One subagent connection as the master sees it."""

    def __init__(self, reader, writer, session_id):
        self.reader, self.writer, self.session_id = reader, writer, session_id
        self.decoder = Decoder()
        self.queue: list[codec.Pdu] = []
        self.packet_ids = iter(range(1000, 10**6))

    async def receive(self) -> codec.Pdu:
        while not self.queue:
            data = await asyncio.wait_for(self.reader.read(65536), TIMEOUT)
            if not data:
                raise EOFError("subagent closed the connection")
            self.queue += self.decoder.feed(data)
        return self.queue.pop(0)

    def send(self, pdu: codec.Pdu) -> None:
        self.writer.write(codec.encode(pdu))

    async def accept_session(self) -> list[codec.Pdu]:
        """Answer Open and the Registers like snmpd does; returns what the subagent sent."""
        opened = await self.receive()
        assert isinstance(opened, Open)
        self.send(Response(session_id=self.session_id, packet_id=opened.packet_id))
        registers = []
        while len(registers) < 2:
            pdu = await self.receive()
            assert isinstance(pdu, Register) and pdu.session_id == self.session_id
            registers.append(pdu)
            self.send(Response(session_id=self.session_id, packet_id=pdu.packet_id))
        return [opened, *registers]

    async def ask(self, pdu: codec.Pdu) -> codec.Pdu:
        self.send(pdu)
        return await self.receive()


class FakeMaster:
    def __init__(self, path):
        self.path = str(path)
        self.connections: asyncio.Queue[FakeConnection] = asyncio.Queue()
        self.count = 0

    async def _accept(self, reader, writer):
        self.count += 1
        await self.connections.put(FakeConnection(reader, writer, session_id=self.count))

    async def next_connection(self) -> FakeConnection:
        return await asyncio.wait_for(self.connections.get(), TIMEOUT)

    async def __aenter__(self):
        self.server = await asyncio.start_unix_server(self._accept, self.path)
        return self

    async def __aexit__(self, *exc):
        self.server.close()


@asynccontextmanager
async def running_agent(socket_path, **options):
    layout = TreeLayout.from_catalog(synthetic_catalog())
    view = build_view(layout, synthetic_snapshot())
    session = AgentXSession(MasterAddress(path=str(socket_path)), lambda: view, [LEGACY, NEW], **options)
    stop = asyncio.Event()
    task = asyncio.create_task(session.run(stop))
    try:
        yield session
    finally:
        stop.set()
        await asyncio.wait_for(task, TIMEOUT)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_open_register_answer_and_close_on_stop(tmp_path):
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master") as session:
                conn = await master.next_connection()
                opened, *registers = await conn.accept_session()
                assert opened.description == b"mysql-snmp"
                assert [r.subtree for r in registers] == [LEGACY, NEW]
                await asyncio.wait_for(session.registered.wait(), TIMEOUT)

                reply = await conn.ask(Get(session_id=1, transaction_id=5, packet_id=77,
                                           ranges=(SearchRange(LEGACY + (1, 0)),)))
                assert (reply.packet_id, reply.transaction_id) == (77, 5)
                assert reply.varbinds[0].type == VarType.COUNTER32

                # CleanupSet gets no answer: the next thing we read answers the GetNext.
                conn.send(CleanupSet(session_id=1, transaction_id=6, packet_id=78))
                reply = await conn.ask(GetNext(session_id=1, transaction_id=7, packet_id=79,
                                               ranges=(SearchRange(NEW + (2,)),)))
                assert reply.packet_id == 79 and reply.varbinds[0].name == NEW + (2, 1, 0)

                little = await conn.ask(Get(session_id=1, packet_id=80, network_byte_order=False,
                                            ranges=(SearchRange(NEW + (1, 1, 0)),)))
                assert little.network_byte_order is False and little.varbinds[0].value == 2**64 - 1

                refused = await conn.ask(codec.TestSet(session_id=1, packet_id=81, varbinds=(
                    codec.VarBind(VarType.INTEGER, LEGACY + (1, 0), 5),)))
                assert (refused.error, refused.index) == (ResponseError.NOT_WRITABLE, 1)

            close = await conn.receive()
            assert isinstance(close, Close) and close.reason == CloseReason.SHUTDOWN

    run(scenario())


def test_pings_and_notify(tmp_path):
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master", ping_interval=0.05) as session:
                conn = await master.next_connection()
                await conn.accept_session()
                ping = await conn.receive()
                assert isinstance(ping, Ping) and ping.session_id == 1
                conn.send(Response(session_id=1, packet_id=ping.packet_id))

                trap = (1, 3, 6, 1, 4, 1, 20267, 200, 0, 1)
                sent = asyncio.create_task(session.notify(trap, [codec.VarBind(VarType.GAUGE32, NEW + (1, 2, 0), 9)],
                                                          with_uptime=True))
                pdu = await conn.receive()
                while isinstance(pdu, Ping):
                    conn.send(Response(session_id=1, packet_id=pdu.packet_id))
                    pdu = await conn.receive()
                assert isinstance(pdu, Notify)
                assert [v.name for v in pdu.varbinds] == [SYS_UPTIME_0, SNMP_TRAP_OID_0, NEW + (1, 2, 0)]
                assert pdu.varbinds[1].value == trap
                conn.send(Response(session_id=1, packet_id=pdu.packet_id))
                await asyncio.wait_for(sent, TIMEOUT)

                # From another thread (a refresher hook), through the session's loop:
                future = await asyncio.to_thread(session.submit_notify, trap)
                pdu = await conn.receive()
                while isinstance(pdu, Ping):
                    conn.send(Response(session_id=1, packet_id=pdu.packet_id))
                    pdu = await conn.receive()
                assert isinstance(pdu, Notify) and pdu.varbinds[0].name == SNMP_TRAP_OID_0
                conn.send(Response(session_id=1, packet_id=pdu.packet_id, error=ResponseError.PROCESSING_ERROR))
                await asyncio.sleep(0.05)
                assert "PROCESSING_ERROR" in str(future.exception(timeout=TIMEOUT))

    run(scenario())


def test_unanswered_ping_drops_the_session_and_reconnects(tmp_path):
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master", ping_interval=0.05, response_timeout=0.2) as session:
                first = await master.next_connection()
                await first.accept_session()
                assert isinstance(await first.receive(), Ping)  # never answered
                second = await master.next_connection()
                await second.accept_session()
                await asyncio.wait_for(session.registered.wait(), TIMEOUT)
                assert session.stats.registrations == 2

    run(scenario())


def test_a_master_that_stops_reading_costs_the_connection_not_the_agent(tmp_path):
    """Requests keep coming but the answers are never read: once the socket's buffers are full
    the reader's write fails after the send timeout, and the session starts again."""
    # The send timeout is response_timeout, and so is each handshake step's: 0.3 s let a loaded
    # machine's scheduling stall time out the second handshake instead; 1 s still fills fast.
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master", response_timeout=1.0, backoff_initial=0.01) as session:
                stalled = await master.next_connection()
                await stalled.accept_session()
                request = codec.encode(GetNext(session_id=1, packet_id=9, ranges=(SearchRange(LEGACY),)))
                stalled.writer.write(request * 40_000)  # ~2.6 MB of answers, never read
                second = await master.next_connection()
                await second.accept_session()
                reply = await second.ask(Get(session_id=second.session_id, packet_id=5,
                                             ranges=(SearchRange(LEGACY + (3, 0)),)))
                assert reply.varbinds[0].value == b"ON"
                # The reader thread answers the Get; the loop counts the Register's answer, and on
                # a loaded machine it may not have run yet.
                for _ in range(int(TIMEOUT / 0.01)):
                    if session.stats.registrations == 2:
                        break
                    await asyncio.sleep(0.01)
                assert "writing to the master failed" in session.stats.last_error
                assert session.stats.registrations == 2

    run(scenario())


def test_a_master_over_tcp(tmp_path):
    async def scenario():
        connections: asyncio.Queue = asyncio.Queue()

        async def accept(reader, writer):
            await connections.put(FakeConnection(reader, writer, session_id=3))

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        layout = TreeLayout.from_catalog(synthetic_catalog())
        view = build_view(layout, synthetic_snapshot())
        session = AgentXSession(MasterAddress.parse(f"tcp:127.0.0.1:{port}"), lambda: view, [LEGACY, NEW])
        stop = asyncio.Event()
        task = asyncio.create_task(session.run(stop))
        try:
            conn = await asyncio.wait_for(connections.get(), TIMEOUT)
            await conn.accept_session()
            reply = await conn.ask(GetNext(session_id=3, packet_id=6, ranges=(SearchRange(LEGACY),)))
            assert reply.packet_id == 6 and reply.varbinds[0].name == LEGACY + (1, 0)
        finally:
            stop.set()
            await asyncio.wait_for(task, TIMEOUT)
            server.close()

    run(scenario())


HOSTILE_INPUTS = {
    "garbage": b"GET / HTTP/1.1\r\n\r\n" * 3,
    "absurd length": struct.pack(">BBBxIIII", 1, 5, 0x10, 1, 1, 1, 0x7FFFFFFC),
    "truncated OID": struct.pack(">BBBxIIII", 1, 5, 0x10, 1, 1, 1, 8) + bytes([100, 0, 0, 0, 0, 0, 0, 1]),
    "unknown type": struct.pack(">BBBxIIII", 1, 66, 0x10, 1, 1, 1, 0),
}


def test_hostile_master_makes_the_session_reconnect_never_crash(tmp_path):
    async def scenario():
        async with FakeMaster(tmp_path / "master") as master:
            async with running_agent(tmp_path / "master", backoff_initial=0.01) as session:
                for label, data in HOSTILE_INPUTS.items():
                    conn = await master.next_connection()
                    await conn.accept_session()
                    conn.writer.write(data)
                    try:
                        leftover = await conn.receive()
                    except EOFError:
                        leftover = None
                    assert leftover is None, f"{label}: subagent kept talking: {leftover}"
                # truncated PDU followed by the master hanging up
                conn = await master.next_connection()
                await conn.accept_session()
                conn.writer.write(codec.encode(Ping(session_id=1))[:13])
                conn.writer.close()
                # ... and it still serves afterwards
                conn = await master.next_connection()
                await conn.accept_session()
                reply = await conn.ask(Get(session_id=conn.session_id, packet_id=5,
                                           ranges=(SearchRange(LEGACY + (3, 0)),)))
                assert reply.varbinds[0].value == b"ON"
                assert session.stats.protocol_errors == len(HOSTILE_INPUTS)

    run(scenario())


def test_master_address_forms():
    assert MasterAddress.parse("/var/agentx/master") == MasterAddress(path="/var/agentx/master")
    assert MasterAddress.parse("tcp:127.0.0.1:705") == MasterAddress(host="127.0.0.1", port=705)
    assert str(MasterAddress.parse("tcp:localhost:705")) == "tcp:localhost:705"
    for bad in ("tcp:705", "tcp:host:99999", "tcp:host:x", ""):
        try:
            MasterAddress.parse(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} accepted")
