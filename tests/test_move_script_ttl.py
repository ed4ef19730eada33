"""The move script renews the live TTL lazily (once it has run down by a minute) but never leaves a key without one."""

from __future__ import annotations

from race_helpers import play, seated_race, store_of
from winning_lines import winning_deal

from server.app import RaceServer
from server.store import keys
from shared.protocol import RaceSettings


async def test_every_key_of_a_running_race_has_the_live_ttl_after_each_seats_first_actions(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await play(race.ann, race.race_id, line[:3])
        await play(race.bob, race.race_id, line[:1])  # created seat 1's action list and move ids
        redis = store_of(race_server).redis
        live_ms = race_server.config.live_ttl_seconds * 1000
        for key in keys.race_keys(race.race_id):
            if await redis.exists(key):
                ttl = await redis.pttl(key)
                assert live_ms - 70_000 < ttl <= live_ms, key
    finally:
        await race.close()
