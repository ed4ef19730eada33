"""``summon_bot``: the creator of a waiting race asks the server for a practice bot; the server process runs one
against itself through the ordinary protocol, labelled a bot, one per player at a time."""

from __future__ import annotations

import contextlib

from lobby_helpers import wait_until
from race_helpers import player, server_config
from winning_lines import winning_deal

from client import RaceClient, ServerError
from server.app import RaceServer
from shared.protocol import PlayerJoined, RaceResult, RaceSettings, Started


async def test_a_summoned_bot_takes_the_seat_plays_to_a_result_and_is_labelled_a_bot(redis_url: str) -> None:
    seed, _line = winning_deal()
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server:
        ann = await player(server.url, "Ann")
        try:
            race_id = (await ann.create(RaceSettings(seed=seed))).race.race
            await ann.summon_bot(race_id, level=5)
            joined = await ann.wait_for(PlayerJoined, timeout=30)
            while joined.slot != 1:
                joined = await ann.wait_for(PlayerJoined, timeout=30)
            assert joined.bot and joined.account is not None and joined.account.startswith("FlowerBot5_")
            await ann.wait_for(Started)
            with contextlib.suppress(ServerError):  # unless it cleared the board already, the bot wins once a card is home
                await ann.resign(race_id)
            result = await ann.wait_for(RaceResult, timeout=60)
        finally:
            await ann.close()
    assert (result.winner, result.players[1].bot, result.players[1].account) == (1, True, joined.account)
    assert not result.players[0].bot


async def test_a_bot_called_into_a_private_race_below_the_delay_minimum_accepts_the_delay_its_creator_chose(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=0.0, min_spectator_delay_seconds=60.0)) as server:
        ann = await player(server.url, "Ann")
        try:
            race = (await ann.create(RaceSettings(private=True, spectator_delay=0))).race
            assert race.settings.spectator_delay == 0
            await ann.summon_bot(race.race, level=1)
            joined = await ann.wait_for(PlayerJoined, timeout=30)
            while joined.slot != 1:
                joined = await ann.wait_for(PlayerJoined, timeout=30)
            assert joined.bot
            await ann.wait_for(Started)
            await ann.resign(race.race)
        finally:
            await ann.close()


async def test_only_the_creator_may_summon_and_one_bot_per_player_at_a_time(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=1.0)) as server:
        ann = await player(server.url, "Ann")
        bob = await player(server.url, "Bob")
        try:
            first = (await ann.create(RaceSettings())).race.race
            second = (await ann.create(RaceSettings())).race.race
            try:
                await bob.summon_bot(first)
                raise AssertionError("a player who did not open the race summoned a bot into it")
            except ServerError as error:
                assert error.code == "not_seated"
            await ann.summon_bot(first, level=1)
            try:
                await ann.summon_bot(second, level=1)
                raise AssertionError("a second bot while the first plays")
            except ServerError as error:
                assert error.code == "rate_limited"
        finally:
            await ann.close()
            await bob.close()


async def test_a_server_with_no_bots_allowed_refuses_to_summon(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, max_summoned_bots=0)) as server:
        ann = await player(server.url, "Ann")
        try:
            race_id = (await ann.create(RaceSettings())).race.race
            try:
                await ann.summon_bot(race_id)
                raise AssertionError("summoned past the server's limit")
            except ServerError as error:
                assert error.code == "rate_limited"
        finally:
            await ann.close()


async def test_bots_of_one_level_at_once_use_two_accounts_and_a_later_bot_reuses_one(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server:
        people = [await player(server.url, name) for name in ("Ann", "Bob", "Cid")]
        try:
            handles, races = [], []
            for person in people[:2]:
                races.append((await person.create(RaceSettings())).race.race)
                await person.summon_bot(races[-1], level=5)
                handles.append(await bot_handle(person))
            assert handles[0] != handles[1]  # one account plays one race at a time (rated races need it)
            for person, race_id in zip(people[:2], races, strict=True):
                await person.wait_for(Started)
                with contextlib.suppress(ServerError):  # the bot may have cleared the board already
                    await person.resign(race_id)
                await person.wait_for(RaceResult, timeout=60)

            async def all_done() -> bool:
                return server.bots is not None and server.bots.playing == 0

            await wait_until(all_done, timeout=30, what="the bots' games to end")
            race_id = (await people[2].create(RaceSettings())).race.race
            await people[2].summon_bot(race_id, level=5)
            assert await bot_handle(people[2]) in handles
        finally:
            for person in people:
                await person.close()


async def bot_handle(person: RaceClient) -> str:
    """The handle of the bot that joined ``person``'s race."""
    joined = await person.wait_for(PlayerJoined, timeout=30)
    while joined.slot != 1:
        joined = await person.wait_for(PlayerJoined, timeout=30)
    assert joined.bot and joined.account is not None
    return joined.account
