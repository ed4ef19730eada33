"""Who may watch a race is the players' choice: ``spectators`` anyone (listed), link (by the race id) or nobody."""

from __future__ import annotations

from lobby_helpers import players, refused
from race_helpers import events_until, seated_race

from client import RaceClient
from server.app import RaceServer
from shared.protocol import Queued, RaceResult, RaceSettings


async def live_ids(client: RaceClient) -> set[str]:
    return {info.race for info in await client.live_races(100)}


async def test_the_default_is_anyone_but_link_for_a_private_race(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann") as (ann,):
        assert (await ann.create(RaceSettings())).race.settings.spectators == "anyone"
        assert (await ann.create(RaceSettings(private=True))).race.settings.spectators == "link"
        assert (await ann.create(RaceSettings(private=True, spectators="anyone"))).race.settings.spectators == "anyone"
        queued = await ann.quick_match(RaceSettings(time_limit=77, private=True))
        assert isinstance(queued, Queued) and queued.race.settings.spectators == "anyone"


async def test_only_races_anyone_may_watch_are_listed_and_link_races_are_watched_by_id(race_server: RaceServer) -> None:
    listed = await seated_race(race_server.url, RaceSettings(seed=5, spectators="anyone"))
    unlisted = await seated_race(race_server.url, RaceSettings(seed=5, spectators="link"))
    private = await seated_race(race_server.url, RaceSettings(seed=5, private=True))
    hidden = await seated_race(race_server.url, RaceSettings(seed=5, spectators="nobody"))
    async with players(race_server.url, "Wes") as (watcher,):
        try:
            shown = await live_ids(watcher)
            assert listed.race_id in shown
            assert not {unlisted.race_id, private.race_id, hidden.race_id} & shown
            for race in (listed, unlisted, private):
                assert (await watcher.watch(race.race_id)).race.race == race.race_id
            with refused("no_spectators"):
                await watcher.watch(hidden.race_id)
            with refused("no_spectators"):
                await watch_from_another_connection(race_server.url, hidden.ann, hidden.race_id)  # not even its players
        finally:
            for race in (listed, unlisted, private, hidden):
                await race.close()


async def watch_from_another_connection(url: str, seated: RaceClient, race_id: str) -> None:
    """A seated player's other connection (same session) watches the player's own race."""
    assert seated.session is not None
    other = await RaceClient.connect(url)
    try:
        await other.hello(seated.session.name, token=seated.session.token)
        await other.watch(race_id)
    finally:
        await other.close()


async def test_a_race_nobody_may_watch_is_replayed_and_its_analysis_given_to_its_players_only(race_server: RaceServer) -> None:
    """The analysis names each player's fatal move and a winning line: as private as the replay."""
    race = await seated_race(race_server.url, RaceSettings(seed=5, spectators="nobody"))
    async with players(race_server.url, "Wes") as (stranger,):
        try:
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            await events_until(race.ann, lambda event: isinstance(event, RaceResult))
            page = await race.ann.replay_page(race.race_id)
            assert page.complete and isinstance(page.events[-1], RaceResult)
            assert (await race.ann.analysis(race.race_id)).race == race.race_id
            assert (await race.bob.analysis(race.race_id)).race == race.race_id
            with refused("no_spectators"):
                await stranger.replay_page(race.race_id)
            with refused("no_spectators"):
                await stranger.analysis(race.race_id)
        finally:
            await race.close()


async def test_an_unknown_spectators_value_is_a_bad_field(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann") as (ann,):
        with refused("bad_field"):
            await ann.create(RaceSettings(spectators="friends"))
        with refused("bad_field"):
            await ann.quick_match(RaceSettings(spectators="everyone"))


async def test_quick_match_pairs_only_players_who_chose_the_same_spectators(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob", "Cid") as (ann, bob, cid):
        assert isinstance(await ann.quick_match(RaceSettings(time_limit=71, spectators="nobody")), Queued)
        assert isinstance(await bob.quick_match(RaceSettings(time_limit=71)), Queued)  # anyone: another queue
        paired = await cid.quick_match(RaceSettings(time_limit=71, spectators="nobody"))
        assert not isinstance(paired, Queued) and paired.race.settings.spectators == "nobody"
