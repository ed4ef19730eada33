"""Hostile and broken clients: bad frames are answered with documented codes, floods and non-readers are cut off,
and the server (with other races on it) carries on."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import msgpack
import pytest
from race_helpers import player, seated_race, server_config
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from client import RaceClient, Unsolicited
from server.app import RaceServer
from server.transport import Keepalive, TransportLimits
from shared import action_text
from shared.protocol import MAX_FRAME_BYTES, CloseCode, Error, RaceSettings


async def next_error(client: RaceClient) -> Error:
    event = await client.next_event(timeout=5)
    assert isinstance(event, Unsolicited), event
    return event.error


BAD_FRAMES: list[tuple[str, bytes | str, str, str | None]] = [
    ("garbage bytes", b"\xc1\xff\x00", "bad_frame", None),
    ("text frame", '{"type": "hello"}', "bad_frame", None),
    ("not a map", msgpack.packb([1, 2, 3]), "bad_frame", None),
    ("trailing data", msgpack.packb({"type": "hello"}) + b"\x01", "bad_frame", None),
    ("extension type", msgpack.packb({"type": "hello", "x": msgpack.ExtType(5, b"abc")}), "bad_frame", None),
    ("huge array of nils", msgpack.packb({"type": "hello", "id": 1, "name": [None] * 5000}), "bad_frame", None),
    ("map with a non-string key", msgpack.packb({1: 2}), "bad_frame", None),
    ("no type", msgpack.packb({"id": 1}), "bad_field", "type"),
    ("unknown type", msgpack.packb({"type": "teleport", "id": 1}), "unknown_type", "type"),
    ("missing field", msgpack.packb({"type": "hello", "id": 1, "protocol": 1}), "bad_field", "name"),
    ("wrong type", msgpack.packb({"type": "hello", "id": 1, "protocol": "1", "name": "Ann"}), "bad_field", "protocol"),
    # A hello of another protocol version may carry that version's fields: version negotiation comes first.
    ("another version's hello", msgpack.packb({"type": "hello", "id": 1, "protocol": 2, "nick": "Ann"}), "unsupported_protocol", "protocol"),
    ("a huge version", msgpack.packb({"type": "hello", "id": 1, "protocol": 2**64 - 1, "name": "Ann"}), "unsupported_protocol", "protocol"),
    ("bool for int", msgpack.packb({"type": "hello", "id": True, "protocol": 1, "name": "Ann"}), "bad_field", "id"),
    ("negative id", msgpack.packb({"type": "hello", "id": -1, "protocol": 1, "name": "Ann"}), "bad_field", "id"),
    ("name too long", msgpack.packb({"type": "hello", "id": 1, "protocol": 1, "name": "A" * 33}), "bad_field", "name"),
    (
        "nested wrong type",
        msgpack.packb({"type": "create", "id": 1, "token": "t", "settings": {"seed": "seven"}}),
        "bad_field",
        "settings.seed",
    ),
    ("seed out of range", msgpack.packb({"type": "create", "id": 1, "token": "t", "settings": {"seed": -5}}), "bad_field", "settings.seed"),
]


@pytest.mark.parametrize(("frame", "code", "field"), [case[1:] for case in BAD_FRAMES], ids=[case[0] for case in BAD_FRAMES])
async def test_bad_frames_are_answered_with_documented_codes(race_server: RaceServer, frame: bytes | str, code: str, field: str | None) -> None:
    client = await RaceClient.connect(race_server.url)
    try:
        if field is not None and field.startswith("settings."):
            await client.hello("Ann")  # before hello such a request is hello_required, whatever its fields
        await client.send_raw(frame)
        error = await next_error(client)
        assert (error.code, error.field) == (code, field)
        if client.session is None:
            await client.hello("Ann")  # the connection is still usable
        await client.live_races()
    finally:
        await client.close()


async def test_bad_frames_leave_other_races_unaffected(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=8))
    vandal = await player(race_server.url, "Vandal")
    try:
        for _, frame, _, _ in BAD_FRAMES:
            await vandal.send_raw(frame)
        await vandal.send_raw(msgpack.packb({"type": "move", "id": 5, "token": vandal.token, "race": race.race_id, "seq": 0,
                                             "move_id": "x", "move": "AC b>f"}))  # fmt: skip
        legal = (await race_server.races.rebuild(race.race_id))[0].legal_moves()[0]  # type: ignore[union-attr]
        reply = await race.ann.move(race.race_id, action_text(legal))
        assert reply.seq == 1
    finally:
        await vandal.close()
        await race.close()


async def test_an_oversized_frame_closes_with_1009_and_the_server_survives(race_server: RaceServer) -> None:
    client = await RaceClient.connect(race_server.url)
    await client.send_raw(msgpack.packb({"type": "hello", "id": 1, "protocol": 1, "name": "x" * MAX_FRAME_BYTES}))
    lost = await asyncio.wait_for(client.closed(), 5)
    assert lost.code == CloseCode.MESSAGE_TOO_BIG
    await client.close()
    survivor = await player(race_server.url, "Survivor")
    await survivor.close()


async def test_a_flood_is_rate_limited_then_closed_with_1008(race_server: RaceServer) -> None:
    client = await RaceClient.connect(race_server.url)
    frame = msgpack.packb({"type": "teleport", "id": 1})
    limits = race_server.config.limits
    for _ in range(limits.burst * 3):
        await client.send_raw(frame)
    codes: list[str] = []
    async for event in client.events():
        assert isinstance(event, Unsolicited)
        codes.append(event.error.code)
    lost = await client.closed()
    assert lost.code == CloseCode.POLICY_VIOLATION
    assert limits.burst <= codes.count("unknown_type") < limits.burst * 2
    assert "rate_limited" in codes
    await client.close()


async def non_reading_client(server: RaceServer) -> ClientConnection:
    """A connection with a small receive buffer that never reads again (each frame it sends gets an error reply)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    websocket = await connect(server.url, sock=sock, compression=None, max_queue=1)
    websocket.transport.pause_reading()
    return websocket


PADDED_FRAME = msgpack.packb({"type": "teleport", "id": 1, "padding": "p" * 400})


async def test_a_client_that_does_not_read_is_dropped_with_bounded_memory(redis_url: str) -> None:
    limits = TransportLimits(rate_per_second=1e6, burst=1_000_000, outbox_messages=32, max_write_buffer_bytes=64 * 1024)
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        websocket = await non_reading_client(server)
        frame = PADDED_FRAME
        sent = 0
        with contextlib.suppress(ConnectionClosed, OSError):  # the server aborted the connection: that is the point
            for sent in range(1, 20_001):
                await websocket.send(frame)
                if server.transport.stats.dropped_slow:  # type: ignore[union-attr]
                    break
        for _ in range(100):
            if server.transport.stats.dropped_slow:  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.05)
        stats = server.transport.stats  # type: ignore[union-attr]
        assert stats.dropped_slow == 1, f"not dropped after {sent} frames"
        assert stats.outbox_high_water <= limits.outbox_messages
        websocket.transport.abort()
        survivor = await player(server.url, "Survivor")
        await survivor.close()


async def test_a_client_that_stops_reading_is_dropped_once_a_write_cannot_drain_within_the_deadline(redis_url: str) -> None:
    """Queue and buffer bounds far away: only the drain deadline can drop this client (small kernel buffers on both
    sides, so a few hundred KiB of replies stall the writer)."""
    limits = TransportLimits(
        rate_per_second=1e6, burst=1_000_000, outbox_messages=1_000_000, max_write_buffer_bytes=1 << 30, drain_timeout=0.5,
        socket_send_buffer_bytes=16 * 1024,
    )  # fmt: skip
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        assert server.transport is not None
        stats = server.transport.stats
        websocket = await non_reading_client(server)
        started = time.monotonic()
        with contextlib.suppress(ConnectionClosed, OSError):  # the server aborted the connection: that is the point
            for _ in range(20_000):
                await websocket.send(PADDED_FRAME)
                if stats.dropped_slow:
                    break
        for _ in range(400):
            if stats.dropped_slow:
                break
            await asyncio.sleep(0.05)
        took = time.monotonic() - started
        assert stats.dropped_slow == 1, f"not dropped after {took:.1f} s"
        print(f"non-reading client dropped {took:.2f} s after it stopped reading (drain deadline {limits.drain_timeout} s)")
        websocket.transport.abort()
        survivor = await player(server.url, "Survivor")
        await survivor.close()


async def test_no_hello_in_time_closes_with_1008(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, limits=TransportLimits(hello_timeout=0.2))) as server:
        client = await RaceClient.connect(server.url)
        lost = await asyncio.wait_for(client.closed(), 5)
        assert lost.code == CloseCode.POLICY_VIOLATION
        await client.close()


async def http(port: int, request: bytes) -> tuple[int, bytes]:
    """The status and the whole response (head and body) of a plain HTTP exchange."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    response = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert response, "the server answered nothing"
    return int(response.split(b" ", 2)[1]), response


async def test_health_check_answers_get_and_refuses_other_methods(race_server: RaceServer) -> None:
    status, body = await http(race_server.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and b'"status": "ok"' in body
    status, _ = await http(race_server.port, b"POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    assert status == 405


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"a\": \"body\"}",
        b"POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
        b"PUT /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
    ids=["post-with-body", "post-chunked", "put", "delete"],
)
async def test_any_method_but_get_is_answered_405(race_server: RaceServer, request_bytes: bytes) -> None:
    status, response = await http(race_server.port, request_bytes)
    assert status == 405 and b"Allow: GET" in response


async def test_a_plain_get_on_another_path_is_answered_426(race_server: RaceServer) -> None:
    status, _ = await http(race_server.port, b"GET /anything HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 426


async def test_messages_queued_in_one_turn_go_out_in_one_socket_write_and_arrive_as_separate_messages(race_server: RaceServer) -> None:
    async with connect(race_server.url, compression=None) as websocket:
        await websocket.send(msgpack.packb({"type": "hello", "id": 1, "protocol": 1, "name": "Ann"}))
        assert msgpack.unpackb(await websocket.recv())["type"] == "welcome"
        assert race_server.transport is not None
        (live,) = race_server.transport.live_connections()
        socket_transport = live.connection.transport
        writes: list[bytes] = []
        write = socket_transport.write

        def counted(data: bytes | bytearray | memoryview) -> None:
            writes.append(bytes(data))
            write(data)

        socket_transport.write = counted  # type: ignore[method-assign]
        for request_id in (101, 102, 103):
            live.outbox.send(Error(id=request_id, code="internal_error", message="a test message"))
        received = [msgpack.unpackb(await asyncio.wait_for(websocket.recv(), 5)) for _ in range(3)]
        assert [message["id"] for message in received] == [101, 102, 103]
        assert len(writes) == 1


async def test_keepalive_closes_a_connection_whose_pong_does_not_come_and_keeps_one_that_answers() -> None:
    """One task pings every connection (server/transport.py Keepalive, instead of websockets' task per connection)."""
    accepted: list[ServerConnection] = []

    async def hold(connection: ServerConnection) -> None:
        accepted.append(connection)
        await connection.wait_closed()

    async with serve(hold, "127.0.0.1", 0, ping_interval=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        answering = await connect(f"ws://127.0.0.1:{port}", ping_interval=None)
        silent = await connect(f"ws://127.0.0.1:{port}", ping_interval=None)
        keepalive: asyncio.Task[None] | None = None
        try:
            while len(accepted) < 2:
                await asyncio.sleep(0.01)
            by_port = {connection.remote_address[1]: connection for connection in accepted}
            silent_side, answering_side = by_port[silent.local_address[1]], by_port[answering.local_address[1]]
            silent.transport.pause_reading()  # reads nothing more: never answers a ping
            keepalive = asyncio.create_task(Keepalive(lambda: list(accepted), interval=0.05, timeout=0.3).run())
            deadline = time.monotonic() + 10
            while silent_side.protocol.state is State.OPEN:
                assert time.monotonic() < deadline, "the connection without pongs stayed open"
                await asyncio.sleep(0.05)
            assert answering_side.protocol.state is State.OPEN
        finally:
            if keepalive is not None:
                keepalive.cancel()
            silent.transport.abort()
            await answering.close()
