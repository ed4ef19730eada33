"""Redis killed (-9) and restarted under a running race: afterwards no request is refused only because a pooled
connection still pointed at the dead Redis, every acknowledged move is still stored, once, in order, and a move
answered ``unavailable`` while Redis is down is resent by the client and applied once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis
from lobby_helpers import wait_until
from race_helpers import Race, seated_race, server_config
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from shared.protocol import RaceSettings

RESTARTS = 3


def kill(store: EmbeddedRedis) -> None:
    """SIGKILL redis-server: no goodbye to its clients, whose pooled connections are now dead."""
    assert store.process is not None
    store.process.kill()
    store.process.wait(10)
    store.stop()


def start(store: EmbeddedRedis) -> None:
    """Start redis-server (again: same port and append-only file) with ``appendfsync always``, so that a kill -9
    loses no acknowledged write (with the default ``everysec`` up to ~1 s may go)."""
    store.start()
    with redis.Redis(port=store.port) as client:
        client.config_set("appendfsync", "always")


@pytest_asyncio.fixture
async def race_on_own_redis(tmp_path: Path) -> AsyncIterator[tuple[EmbeddedRedis, RaceServer, Race, tuple[str, ...]]]:
    """A Redis of this test's own (it gets killed), a server on it, and a started race on a deal with a winning line."""
    store = EmbeddedRedis(tmp_path / "redis", persistent=True)
    start(store)
    try:
        seed, line = winning_deal()
        async with RaceServer(server_config(store.url)) as server:
            race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
            try:
                yield store, server, race, line
            finally:
                await race.close()
    finally:
        store.stop()


async def test_after_redis_restarts_requests_succeed_at_once_and_no_acknowledged_move_is_lost(
    race_on_own_redis: tuple[EmbeddedRedis, RaceServer, Race, tuple[str, ...]],
) -> None:
    store, server, race, line = race_on_own_redis
    acknowledged: dict[int, list[str]] = {0: [], 1: []}
    refused: list[str] = []
    for round_number in range(RESTARTS + 1):
        if round_number:
            kill(store)
            start(store)
        for slot, client in ((0, race.ann), (1, race.bob)):
            client.move_retry_delays = ()  # the server itself must succeed: no resend by the client
            try:
                acknowledged[slot].append((await client.move(race.race_id, line[len(acknowledged[slot])])).move)
            except ServerError as error:
                refused.append(f"round {round_number} seat {slot}: {error.code}")
            try:
                await client.sync(race.race_id, after=10_000)  # a read on another pooled connection
            except ServerError as error:
                refused.append(f"round {round_number} sync {slot}: {error.code}")
    assert refused == []
    assert server.races is not None
    for slot in (0, 1):
        assert await server.races.store.actions(race.race_id, slot) == acknowledged[slot] == list(line[: RESTARTS + 1])


async def test_a_move_answered_unavailable_is_resent_by_the_client_with_its_move_id_and_applied_once(
    race_on_own_redis: tuple[EmbeddedRedis, RaceServer, Race, tuple[str, ...]],
) -> None:
    """Redis is down when Ann moves: the server answers ``unavailable`` (outcome unknown); the client waits and
    resends the same move (same move_id and seq) until Redis is back, and the move is stored exactly once."""
    store, server, race, line = race_on_own_redis
    race.ann.move_retry_delays = (0.2,) * 100  # patient enough for the restart below
    kill(store)
    moving = asyncio.create_task(race.ann.move(race.race_id, line[0]))
    await wait_until(lambda: asyncio.sleep(0, race.ann.moves_resent >= 2), what="the client to resend")
    start(store)
    reply = await asyncio.wait_for(moving, 30)
    assert (reply.move, reply.seq) == (line[0], 1)
    assert server.races is not None
    assert await server.races.store.actions(race.race_id, 0) == [line[0]]
    assert (await race.ann.move(race.race_id, line[1])).seq == 2


async def test_a_move_still_unavailable_after_the_resends_stays_pending_and_the_reconnect_resends_it(
    race_on_own_redis: tuple[EmbeddedRedis, RaceServer, Race, tuple[str, ...]],
) -> None:
    store, server, race, line = race_on_own_redis
    race.ann.move_retry_delays = (0.05,)
    kill(store)
    with pytest.raises(ServerError) as refused:
        await race.ann.move(race.race_id, line[0])
    assert refused.value.code == "unavailable" and race.ann.moves_resent == 1
    start(store)
    resumed = await race.ann.reconnect()
    assert resumed.resent[race.race_id].move == line[0] and resumed.resent[race.race_id].seq == 1
    assert server.races is not None
    assert await server.races.store.actions(race.race_id, 0) == [line[0]]
