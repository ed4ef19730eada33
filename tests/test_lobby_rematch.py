"""Rematch: both players of a finished race agree and get a new race with a new deal and the same settings."""

from __future__ import annotations

import asyncio

from lobby_helpers import refused
from race_helpers import Race, deals, player, seated_race, server_config

from server.app import RaceServer
from server.store import PooledSeed, SeedPoolStore, keys
from shared.protocol import (
    AttemptEnded,
    Countdown,
    Disconnected,
    Ok,
    RaceResult,
    RaceSettings,
    RematchOffered,
    RematchStarted,
    Seated,
    Started,
)


async def finish(race: Race) -> None:
    """Both players resign: a draw."""
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)
    await race.bob.wait_for(RaceResult)


async def test_both_players_agree_and_get_a_new_race_with_a_new_deal_and_the_same_settings(race_server: RaceServer) -> None:
    settings = RaceSettings(
        profile="classic", undo=True, redeal_once=True, time_limit=300, seed=77, spectator_delay=5, grace=20, spectators="link"
    )
    race = await seated_race(race_server.url, settings)
    try:
        with refused("not_finished"):
            await race.ann.rematch(race.race_id)
        await finish(race)

        offered = await race.ann.rematch(race.race_id)
        assert isinstance(offered, Ok) and offered.race == race.race_id
        offer = await race.bob.wait_for(RematchOffered)
        assert (offer.race, offer.slot) == (race.race_id, 0)

        accepted = await race.bob.rematch(race.race_id)
        assert isinstance(accepted, Seated) and accepted.slot == 1
        new_race = accepted.race.race
        assert new_race != race.race_id
        for client in (race.ann, race.bob):
            started = await client.wait_for(RematchStarted)
            assert (started.race, started.new_race) == (race.race_id, new_race)

        synced = await race.ann.sync(new_race)  # the offering player subscribes to the new race
        assert synced.slot == 0 and [p.name for p in synced.race.players] == ["Ann", "Bob"]
        new_settings = await race.ann.wait_for(Countdown)
        assert new_settings.race == new_race and new_settings.seed_chosen is False  # a new deal, not the fixed one
        expected = RaceSettings(
            profile="classic", undo=True, redeal_once=True, time_limit=300, seed=None, spectator_delay=5, grace=20, spectators="link"
        )
        assert synced.race.settings == expected
        await race.ann.wait_for(Started)
        await race.bob.wait_for(Started)

        again = await race.ann.rematch(race.race_id)  # asking again finds the same rematch
        assert isinstance(again, Seated) and (again.race.race, again.slot) == (new_race, 0)
        outsider = await player(race_server.url, "Eve")
        with refused("not_seated"):
            await outsider.rematch(race.race_id)
        await outsider.close()
    finally:
        await race.close()


async def test_a_solvable_only_rematch_gets_another_proven_seed(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, seed_pool_target=0)) as server:
        assert server.redis is not None
        await server.redis.delete(keys.seed_pool("classic"))
        pool = SeedPoolStore(server.redis)
        await pool.add("classic", PooledSeed(15, None, ()), 5)  # proven winnable (tests/winning_lines.py solves it)
        race = await seated_race(server.url, RaceSettings(solvable_only=True))
        try:
            assert deals(race.countdown, 15)
            await finish(race)
            await race.ann.rematch(race.race_id)
            with refused("seed_pool_empty"):  # the pool is empty: the offer stands, accepting can be retried
                await race.bob.rematch(race.race_id)
            await pool.add("classic", PooledSeed(42, None, ()), 5)
            accepted = await race.bob.rematch(race.race_id)
            assert isinstance(accepted, Seated) and accepted.race.settings.solvable_only
            assert deals(await race.bob.wait_for(Countdown), 42)
        finally:
            await race.close()


async def test_a_rematch_offer_lapses_after_the_rematch_window_and_a_late_answer_is_a_new_offer(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, rematch_window_seconds=0.3)) as server:
        race = await seated_race(server.url, RaceSettings(seed=3))
        try:
            await finish(race)
            await race.ann.rematch(race.race_id)
            offer = await race.bob.wait_for(RematchOffered)
            assert (offer.slot, offer.until) == (0, offer.at + 300)
            assert await race.ann.wait_for(RematchOffered) == offer  # both players see each offer
            await asyncio.sleep(0.5)  # Ann's offer lapses

            late = await race.bob.rematch(race.race_id)
            assert isinstance(late, Ok)  # not a new race for Ann, who asked long ago: Bob's own offer
            counter = await race.ann.wait_for(RematchOffered)
            assert (counter.slot, counter.until) == (1, counter.at + 300)
            accepted = await race.ann.rematch(race.race_id)
            assert isinstance(accepted, Seated) and accepted.slot == 0
            assert (await race.ann.wait_for(RematchStarted)).new_race == accepted.race.race
        finally:
            await race.close()


async def test_a_rematch_offerer_who_never_syncs_the_new_race_is_away_and_its_attempt_ends_abandoned(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(grace=1))
    try:
        await finish(race)
        await race.ann.rematch(race.race_id)
        await race.bob.wait_for(RematchOffered)
        accepted = await race.bob.rematch(race.race_id)
        assert isinstance(accepted, Seated)
        new_race = accepted.race.race
        await race.ann.close()  # Ann offered, then went away without ever following the new race
        away = await race.bob.wait_for(Disconnected)
        assert (away.race, away.slot) == (new_race, 0) and away.grace_until is not None
        ended = await race.bob.wait_for(AttemptEnded)
        assert (ended.race, ended.slot, ended.reason) == (new_race, 0, "abandoned")
    finally:
        await race.close()
