"""Cheap denial of service, refused cheaply: many connections from one address (with or without hello), a client
that stops reading, and a race in progress that carries on meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import msgpack
from race_helpers import player, seated_race, server_config
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from client import RaceClient
from server.app import RaceServer
from server.protocol import CloseCode, RaceSettings
from server.transport import TransportLimits
from shared import action_text


async def close_code(client: RaceClient) -> tuple[int | None, str]:
    lost = await asyncio.wait_for(client.closed(), 10)
    return lost.code, lost.reason


async def test_connections_without_hello_past_the_per_address_limit_are_closed_with_1008(redis_url: str) -> None:
    limits = TransportLimits(max_unidentified_per_address=4, max_connections_per_address=10)
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        race = await seated_race(server.url, RaceSettings(seed=3))
        silent = [await RaceClient.connect(server.url) for _ in range(4)]
        extra = await RaceClient.connect(server.url)
        try:
            code, reason = await close_code(extra)
            assert code == CloseCode.POLICY_VIOLATION and "without hello" in reason
            await silent[0].hello("Late")  # one of them identifies itself: room for one more without hello
            newcomer = await RaceClient.connect(server.url)
            await newcomer.hello("New")
            legal = (await server.races.rebuild(race.race_id))[0].legal_moves()[0]  # type: ignore[union-attr]
            assert (await race.ann.move(race.race_id, action_text(legal))).seq == 1  # the race went on meanwhile
            assert server.transport is not None and server.transport.stats.refused_address == 1
        finally:
            for client in [*silent, extra, newcomer]:
                await client.close()
            await race.close()


async def test_connections_past_the_per_address_limit_are_closed_with_1008_and_a_closed_one_frees_its_place(redis_url: str) -> None:
    limits = TransportLimits(max_connections_per_address=5)
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        idle = [await player(server.url, f"Idle {index}") for index in range(5)]
        extra = await RaceClient.connect(server.url)
        try:
            code, reason = await close_code(extra)
            assert code == CloseCode.POLICY_VIOLATION and "too many connections" in reason
            await idle.pop().close()
            for _ in range(100):  # the server notices the close a moment later
                if server.transport is not None and sum(server.transport.addresses.open.values()) < 5:
                    break
                await asyncio.sleep(0.02)
            replacement = await player(server.url, "Replacement")
            idle.append(replacement)
        finally:
            for client in [*idle, extra]:
                await client.close()


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
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        websocket = await connect(server.url, sock=sock, compression=None, max_queue=1)
        websocket.transport.pause_reading()  # this client never reads again
        frame = msgpack.packb({"type": "teleport", "id": 1, "padding": "p" * 400})
        started = time.monotonic()
        with contextlib.suppress(ConnectionClosed, OSError):  # the server aborted the connection: that is the point
            for _ in range(20_000):
                await websocket.send(frame)
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
