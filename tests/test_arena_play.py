"""An arena played on a real server: three registered players join, two are paired into an ordinary race and told
so (``arena_paired``), play it to its result, and the next round pairs the one who waited; the standings are pushed."""

from __future__ import annotations

from lobby_helpers import refused, wait_until
from player_helpers import new_handle, registered
from race_helpers import player

from client import RaceClient
from server.app import RaceServer
from shared.protocol import ArenaPaired, ArenaStandings, RaceResult, Started


async def paired_players(server: RaceServer, arena: str, count: int, after: str | None = None) -> dict[str, str]:
    """Player id -> race id of the races under way, once there are ``count`` players in them (none in race ``after``,
    which finished: the next round booked it)."""
    assert server.arenas is not None
    store = server.arenas.store

    async def enough() -> bool:
        busy = await store.busy(arena)
        return len(busy) >= count and after not in busy.values()

    await wait_until(enough, timeout=20, what=f"{count} players paired")
    return await store.busy(arena)


async def play_a_draw(clients: list[RaceClient], race: str) -> None:
    """Both players take their seats (``sync``) and resign: the race ends drawn."""
    for client in clients:
        paired = await client.wait_for(ArenaPaired, timeout=20)
        assert paired.race == race
        await client.sync(race)
    for client in clients:
        await client.wait_for(Started)
        await client.resign(race)
    for client in clients:
        await client.wait_for(RaceResult)


async def test_three_players_are_paired_race_and_the_one_who_waited_plays_next(race_server: RaceServer) -> None:
    handles = [new_handle(name) for name in ("ann", "bob", "cat")]
    clients = [await registered(race_server.url, handle) for handle in handles]
    guest = await player(race_server.url, "Gus")
    try:
        with refused("account_required"):
            await guest.arena_create("no")
        created = await clients[0].arena_create("evening arena", minutes=10, time_limit=120)
        arena = created.arena.arena
        assert created.arena.time_limit == 120 and created.arena.end_at - created.arena.start_at == 600_000
        with refused("account_required"):
            await guest.arena_join(arena)
        with refused("unknown_arena"):
            await clients[0].arena_join("nosucharena")
        for client in clients:
            await client.arena_join(arena)
        by_player = {client.session.player: client for client in clients if client.session is not None}
        busy = await paired_players(race_server, arena, 2)
        (race,) = set(busy.values())
        first = [by_player[player] for player in busy]
        waiting = next(client for client in clients if client not in first)
        await play_a_draw(first, race)

        busy = await paired_players(race_server, arena, 2, after=race)  # the next round: the one who waited, with one of the two
        (second_race,) = set(busy.values())
        assert second_race != race and waiting.session is not None and waiting.session.player in busy
        standings = await waiting.wait_for(ArenaStandings, timeout=20)
        assert standings.arena == arena
        table = (await guest.arena_standings(arena)).standings
        assert sorted((line.score, line.games) for line in table) == [(0, 0), (1, 1), (1, 1)]
    finally:
        for client in (*clients, guest):
            await client.close()
