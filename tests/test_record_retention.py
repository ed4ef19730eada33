"""Retention of finished races: a casual record expires after the server's record retention, every key of it; a race
created to be kept (as rated races may be) is kept; and what one record costs in Redis (MEMORY USAGE, printed)."""

from __future__ import annotations

import contextlib

from race_helpers import play, player, seated_race, server_config
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.services.dealer import sealed
from server.services.race import new_race_id
from server.store import Identity, NewRace, connect_redis, keys
from shared import Profile
from shared.protocol import RaceResult, RaceSettings, Started
from shared.race.settings import SettingsInForce


async def finish(race_server: RaceServer, settings: RaceSettings, line: tuple[str, ...], bob_moves: int) -> str:
    """Ann clears the deal along ``line`` while Bob plays ``bob_moves`` of it: a finished race's id."""
    race = await seated_race(race_server.url, settings)
    try:
        await play(race.bob, race.race_id, line[:bob_moves])
        await play(race.ann, race.race_id, line)
        await race.ann.wait_for(RaceResult)
        return race.race_id
    finally:
        await race.close()


async def test_every_key_of_a_finished_casual_race_expires_after_the_record_retention(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url, record_ttl_seconds=3600)) as server:
        race_id = await finish(server, RaceSettings(seed=seed), line, 20)
    redis = connect_redis(redis_url)
    try:
        present = [key for key in keys.race_keys(race_id) if await redis.exists(key)]
        assert len(present) >= 6  # state, events, both move lists and move-id hashes
        for key in present:
            assert 0 < await redis.pttl(key) <= 3600 * 1000, key
        sizes = {key.split("}:", 1)[1]: await redis.memory_usage(key, samples=0) or 0 for key in present}
        record_bytes = sum(sizes.values())
        events = await redis.xlen(keys.race_keys(race_id)[keys.EVENTS])
        print(f"finished race record: {record_bytes} bytes in Redis (MEMORY USAGE) for {events} events, {len(line) + 20} actions: {sizes}")
    finally:
        await redis.aclose()


async def test_a_race_created_with_a_retention_of_its_own_keeps_it_and_zero_keeps_the_record(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url, record_ttl_seconds=3600)) as server:
        assert server.races is not None
        ann, bob = await player(server.url, "Ann"), await player(server.url, "Bob")
        try:
            assert ann.session is not None and bob.session is not None
            race_id = new_race_id()
            kept = NewRace(SettingsInForce(), sealed(Profile.CLASSIC, seed), record_ttl_ms=0)
            await server.races.create(race_id, Identity(ann.session.player, "Ann"), kept)
            await bob.join(race_id)
            await ann.sync(race_id)
            await bob.wait_for(Started)
            await play(bob, race_id, line[:5])
            await ann.resign(race_id)
            with contextlib.suppress(ServerError):  # decided at Ann's resignation already (race_over), or not
                await bob.resign(race_id)
            await bob.wait_for(RaceResult)
        finally:
            await ann.close()
            await bob.close()
    redis = connect_redis(redis_url)
    try:
        for key in keys.race_keys(race_id):
            if await redis.exists(key):
                assert await redis.pttl(key) == -1, key  # no expiry
    finally:
        await redis.delete(*keys.race_keys(race_id))
        await redis.aclose()
