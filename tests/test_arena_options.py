"""An arena's options on a real server: rated or casual, private (joined by its link, never listed) or listed (the
operator's), a maximum of players taken atomically; its races tagged with the arena; its standings pushed to
spectators (``arena_watch``) as well as players, each player with its own line."""

from __future__ import annotations

import asyncio

from lobby_helpers import refused
from player_helpers import new_handle, registered
from race_helpers import player

from client import RaceClient, ServerError
from server.app import RaceServer
from shared.protocol import ArenaPaired, ArenaStandings, ArenaStatus


async def resign_once_started(client: RaceClient, race: str) -> None:
    """Resign ``race`` as soon as it has started (the suite's countdown is 50 ms)."""
    for _ in range(100):
        try:
            await client.resign(race)
            return
        except ServerError as error:
            assert error.code == "not_started", error
            await asyncio.sleep(0.05)


async def test_a_capped_rated_private_arena_tags_its_races_and_pushes_standings_to_spectators(race_server: RaceServer) -> None:
    assert race_server.arenas is not None
    ann, bob, cat = [await registered(race_server.url, new_handle(name)) for name in ("ann", "bob", "cat")]
    spectator = await player(race_server.url, "Gus")
    clients = [ann, bob, cat, spectator]
    try:
        with refused("bad_field"):
            await ann.arena_create("listed by a player", private=False)
        created = (await ann.arena_create("capped", minutes=10, time_limit=60, rated=True, max_players=2)).arena
        assert (created.rated, created.private, created.max_players, created.status) == (True, True, 2, ArenaStatus.RUNNING)
        arena = created.arena
        watched = await spectator.arena_watch(arena)  # a guest may watch
        assert watched.arena.arena == arena and watched.standings == []
        await ann.arena_join(arena)
        await bob.arena_join(arena)
        with refused("arena_full"):
            await cat.arena_join(arena)
        await ann.arena_join(arena)  # one who joined comes back whatever the cap
        await ann.arena_watch(arena)  # a player's page watches too: its connection is told as a player, with its line

        race = (await ann.wait_for(ArenaPaired, timeout=20)).race
        synced = await ann.sync(race)
        assert synced.race.settings.arena == arena and synced.race.settings.rated
        pushed = await spectator.wait_for(ArenaStandings, timeout=20)
        assert pushed.arena == arena and pushed.own is None and pushed.players == 2 and len(pushed.standings) == 2
        own = await ann.wait_for(ArenaStandings, timeout=20)
        assert own.own is not None and ann.session is not None and own.own.handle == ann.session.account
        await bob.sync(race)
        for client in (ann, bob):
            await resign_once_started(client, race)
        after_the_result = await ann.wait_for(ArenaStandings, timeout=20)  # the next push: the result's, not a spectator's
        assert after_the_result.own is not None and after_the_result.own.games == 1

        listing = await spectator.arena_list()
        assert arena not in [info.arena for info in (*listing.upcoming, *listing.running, *listing.finished)]  # private
        assert race_server.races is not None
        now = await race_server.races.now_ms()
        listed = await race_server.arenas.create("hourly", now, 600_000, private=False)
        later = await race_server.arenas.create("tonight", now + 3_600_000, 600_000, private=False)
        listing = await spectator.arena_list()
        assert listed in [info.arena for info in listing.running] and later in [info.arena for info in listing.upcoming]
        assert next(info for info in listing.upcoming if info.arena == later).status is ArenaStatus.UPCOMING
    finally:
        for client in clients:
            await client.close()
