"""Redis killed (-9) and restarted under a running race: afterwards no request is refused only because a pooled
connection still pointed at the dead Redis, and every acknowledged move is still stored, once, in order."""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis
from lobby_helpers import wait_until
from race_helpers import seated_race, server_config
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from shared.protocol import RaceSettings

RESTARTS = 3


def restart(store: EmbeddedRedis) -> None:
    """SIGKILL redis-server (no goodbye to its clients), start it again on the same port and append-only file."""
    assert store.process is not None
    store.process.kill()
    store.process.wait(10)
    store.stop()
    store.start()
    fsync_every_write(store)


def fsync_every_write(store: EmbeddedRedis) -> None:
    """``appendfsync always``: a kill -9 then loses no acknowledged write (with ``everysec`` up to ~1 s may go)."""
    with redis.Redis(port=store.port) as client:
        client.config_set("appendfsync", "always")


async def test_after_redis_restarts_requests_succeed_at_once_and_no_acknowledged_move_is_lost(tmp_path: Path) -> None:
    store = EmbeddedRedis(tmp_path / "redis", persistent=True)
    store.start()
    try:
        fsync_every_write(store)
        seed, line = winning_deal()
        async with RaceServer(server_config(store.url)) as server:
            race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
            acknowledged: dict[int, list[str]] = {0: [], 1: []}
            refused: list[str] = []
            for round_number in range(RESTARTS + 1):
                if round_number:
                    restart(store)
                for slot, client in ((0, race.ann), (1, race.bob)):
                    move = line[len(acknowledged[slot])]
                    try:
                        acknowledged[slot].append((await client.move(race.race_id, move)).move)
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
            await race.close()
    finally:
        store.stop()


async def test_a_move_answered_unavailable_is_resent_by_the_client_with_its_move_id_and_applied_once(tmp_path: Path) -> None:
    """Redis is down when Ann moves: the server answers ``unavailable`` (outcome unknown); the client waits and
    resends the same move (same move_id and seq) until Redis is back, and the move is stored exactly once."""
    store = EmbeddedRedis(tmp_path / "redis", persistent=True)
    store.start()
    try:
        fsync_every_write(store)
        seed, line = winning_deal()
        async with RaceServer(server_config(store.url)) as server:
            race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
            race.ann.move_retry_delays = (0.2,) * 100  # patient enough for the restart below
            assert store.process is not None
            store.process.kill()
            store.process.wait(10)
            store.stop()
            moving = asyncio.create_task(race.ann.move(race.race_id, line[0]))
            await wait_until(lambda: asyncio.sleep(0, race.ann.moves_resent >= 2), what="the client to resend")
            store.start()
            reply = await asyncio.wait_for(moving, 30)
            assert (reply.move, reply.seq) == (line[0], 1)
            assert server.races is not None
            assert await server.races.store.actions(race.race_id, 0) == [line[0]]
            assert (await race.ann.move(race.race_id, line[1])).seq == 2
            await race.close()
    finally:
        store.stop()
