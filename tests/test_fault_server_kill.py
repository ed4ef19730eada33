"""kill -9 of a server process mid-race: its players reconnect to another process, resend the move in flight and
play on; every acknowledged move is stored exactly once, in order, and nothing unacknowledged is invented."""

from __future__ import annotations

import asyncio
import signal

from conftest import SpawnServers
from race_helpers import player
from test_multiprocess_shutdown import Runner
from winning_lines import winning_deal

from server.store import RaceStore, connect_redis
from shared.protocol import RaceSettings, Started

RACES = 2


async def test_kill_9_of_a_server_mid_race_loses_no_acknowledged_move_and_applies_none_twice(
    spawn_servers: SpawnServers, redis_url: str
) -> None:
    seed, line = winning_deal()
    doomed, survivor = await spawn_servers(2)
    clients = [await player(doomed.url, f"Player {index}") for index in range(2 * RACES)]
    redis = connect_redis(redis_url)
    try:
        runners: list[Runner] = []
        for index in range(RACES):
            ann, bob = clients[2 * index], clients[2 * index + 1]
            race_id = (await ann.create(RaceSettings(seed=seed, spectator_delay=0))).race.race
            await bob.join(race_id)
            await ann.wait_for(Started)
            runners += [Runner(ann, race_id, list(line[:60]), survivor.url), Runner(bob, race_id, list(line[:30]), survivor.url)]  # nobody clears
        playing = [asyncio.create_task(runner.run()) for runner in runners]
        while min(len(runner.acknowledged) for runner in runners) < 8:  # mid-race, moves in flight everywhere
            await asyncio.sleep(0.005)
        doomed.signal(signal.SIGKILL)
        await asyncio.wait_for(asyncio.gather(*playing), 60)

        assert all(runner.closes for runner in runners)  # every player did lose its connection
        store = RaceStore(redis)
        for index, runner in enumerate(runners):
            assert runner.acknowledged == runner.moves, f"runner {index}"
            assert await store.actions(runner.race_id, index % 2) == runner.moves, f"runner {index}"
    finally:
        for client in clients:
            await client.close()
        await redis.aclose()
