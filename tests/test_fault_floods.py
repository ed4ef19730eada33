"""Cheap denial of service, refused cheaply: many connections from one address (with or without hello), a client
that stops reading, and a race in progress that carries on meanwhile."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from lobby_helpers import refused, wait_until
from race_helpers import player, seated_race, server_config
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from client import RaceClient, ServerError
from server.app import RaceServer
from server.services.lobby import LobbyLimits
from server.services.sessions import SessionLimits
from server.store import connect_redis, keys
from server.transport import TransportLimits
from shared import action_text
from shared.protocol import CloseCode, RaceClosed, RaceSettings


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


async def client_from(url: str, port: int, source: str, name: str) -> RaceClient:
    """A client that said hello from another loopback address (``127.0.0.x``): another client address."""
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    client = RaceClient(await connect(url, sock=sock, compression=None), url=url)
    await client.hello(name)
    return client


async def half_sent(port: int, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection from loopback ``source`` that sends the start of a WebSocket handshake and no more."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
    await writer.drain()
    return reader, writer


async def test_half_sent_handshakes_past_the_per_address_cap_are_answered_429_while_other_addresses_connect(redis_url: str) -> None:
    limits = TransportLimits(max_handshakes_per_address=3, handshake_timeout=120)  # none times out during the test
    async with RaceServer(server_config(redis_url, limits=limits)) as server:
        assert server.transport is not None
        door = server.transport.door
        held = [await half_sent(server.port, "127.0.0.41") for _ in range(3)]
        reader, writer = await half_sent(server.port, "127.0.0.41")  # accepted after the three: one too many
        answer = await asyncio.wait_for(reader.read(), 10)  # the answer, then the server's end of the stream
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 ") and b"\r\nRetry-After: 1" in head, answer
        assert json.loads(body)["error"] == "too_many_handshakes"
        with pytest.raises(InvalidStatus) as refusal:  # a WebSocket client of that address gets the same answer
            await connect(server.url, local_addr=("127.0.0.41", 0))
        assert refusal.value.response.status_code == 429
        other = await client_from(server.url, server.port, "127.0.0.42", "Other")  # another address is not affected
        try:
            held.pop()[1].close()  # a half-sent handshake that goes frees its place
            await wait_until(lambda: asyncio.sleep(0, door.pending["127.0.0.41"] < 3), what="the closed handshake to leave the door")
            back = await client_from(server.url, server.port, "127.0.0.41", "Back")
            await back.close()
            assert door.pending["127.0.0.41"] == 2  # a finished handshake no longer counts
        finally:
            await other.close()
            for _, held_writer in held:
                held_writer.close()


async def test_a_flood_of_races_from_one_address_cannot_fill_the_lobby_and_others_still_create(redis_url: str) -> None:
    """40 connections from one address try 3 races each (public and private): only the per-address budget is
    opened; a player from another address creates, lists and is joined as usual."""
    limits = LobbyLimits(max_open_per_address=10)
    async with RaceServer(server_config(redis_url, lobby=limits, lobby_max_listed=50)) as server:
        flood = [await player(server.url, f"Flood {index}") for index in range(40)]
        try:
            opened, refusals = 0, set()
            for index, client in enumerate(flood):
                for attempt in range(3):
                    try:
                        await client.create(RaceSettings(private=(index + attempt) % 2 == 0))
                        opened += 1
                    except ServerError as error:
                        refusals.add(error.code)
            assert opened == limits.max_open_per_address and refusals == {"too_many_open_races"}
            legitimate = await client_from(server.url, server.port, "127.0.0.2", "Ann")
            opponent = await client_from(server.url, server.port, "127.0.0.3", "Bob")
            try:
                race_id = (await legitimate.create(RaceSettings())).race.race
                assert race_id in {entry.race for entry in (await opponent.watch_lobby()).races}
                assert (await opponent.join(race_id)).slot == 1
            finally:
                await legitimate.close()
                await opponent.close()
        finally:
            for client in flood:
                await client.close()


async def test_one_player_cannot_hold_more_open_races_by_opening_more_connections(redis_url: str) -> None:
    lobby = LobbyLimits(max_open_per_owner=3, max_open_per_player=3, max_open_per_address=0)
    async with RaceServer(server_config(redis_url, lobby=lobby)) as server:
        first = await player(server.url, "Ann")
        second = await RaceClient.connect(server.url)
        await second.hello("Ann", first.token)
        try:
            for _ in range(2):
                await first.create(RaceSettings())
            await second.create(RaceSettings(private=True))
            with refused("too_many_open_races"):
                await second.create(RaceSettings())
        finally:
            await first.close()
            await second.close()


async def test_a_race_nobody_joins_in_time_is_closed_as_expired_and_leaves_the_lobby(redis_url: str) -> None:
    lobby = LobbyLimits(max_open_per_owner=64, max_open_per_player=64, max_open_per_address=0, max_waiting_seconds=0.5, heartbeat_seconds=0.1)
    async with RaceServer(server_config(redis_url, lobby=lobby)) as server:
        ann, eve = await player(server.url, "Ann"), await player(server.url, "Eve")
        try:
            public = (await ann.create(RaceSettings())).race.race
            private = (await ann.create(RaceSettings(private=True))).race
            await eve.watch_lobby()
            closed = [await ann.wait_for(RaceClosed, timeout=10) for _ in range(2)]
            assert [event.reason for event in closed] == ["expired", "expired"]
            await wait_until(lambda: asyncio.sleep(0, public not in eve.lobby), what="the expired race to leave the lobby")
            assert private.invite is not None
            with refused("unknown_invite"):
                await eve.join_invite(private.invite)
            with refused("race_closed"):
                await eve.join(public)
        finally:
            await ann.close()
            await eve.close()


async def test_a_loop_of_fresh_hellos_gets_rate_limited_and_leaves_only_short_lived_sessions(redis_url: str) -> None:
    sessions = SessionLimits(max_new_per_address=5, provisional_seconds=600)
    redis = connect_redis(redis_url)
    await redis.delete(keys.new_sessions_key("127.0.0.1"))
    try:
        async with RaceServer(server_config(redis_url, sessions=sessions)) as server:
            tokens: list[str] = []
            for index in range(5):
                async with await RaceClient.connect(server.url) as client:
                    tokens.append((await client.hello(f"Loop {index}")).token)
            async with await RaceClient.connect(server.url) as client:
                with refused("rate_limited"):
                    await client.hello("One too many")
                await client.hello("Loop 0", tokens[0])  # resuming is not limited
            for token in tokens:
                assert 0 < await redis.pttl(keys.session_key(token)) <= 600_000
            async with await RaceClient.connect(server.url) as client:
                await client.hello("Loop 1", tokens[1])
                await client.create(RaceSettings())  # used: kept for the long lifetime
                assert await redis.pttl(keys.session_key(tokens[1])) > 6 * 24 * 3600 * 1000
    finally:
        await redis.delete(keys.new_sessions_key("127.0.0.1"))
        await redis.aclose()
