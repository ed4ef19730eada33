"""An arena across two real server processes on one Redis, one of them killed (SIGKILL) while the arena runs: its
players come back on the other process; no result is lost (every finished race of the arena is booked, once), nobody
is ever in two races at once, and pairing goes on."""

from __future__ import annotations

import asyncio
import itertools
import signal
from collections.abc import Iterator
from pathlib import Path

from conftest import SpawnServers
from lobby_helpers import wait_until
from player_helpers import PASSWORD, new_handle, registered
from race_helpers import player

from client import ConnectionLost, RaceClient, ServerError
from server.store import ArenaStore, RaceStore, connect_redis
from server.store.connection import RedisClient
from shared.protocol import ArenaPaired, RaceStatus


async def play_on(client: RaceClient) -> None:
    """Take each race the arena pairs this player into and resign it at once (both resign: a draw), until the
    connection is lost."""
    try:
        while True:
            race = (await client.wait_for(ArenaPaired, timeout=120)).race
            await client.sync(race)
            for _ in range(200):
                try:
                    await client.resign(race)
                    break
                except ServerError as error:
                    if error.code != "not_started":
                        break  # the race is over (the opponent was abandoned) or this attempt ended
                    await asyncio.sleep(0.05)
    except ConnectionLost:
        return


def spans(races: list[tuple[int, int]]) -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
    """Each race of a player with the next one, by start."""
    ordered = sorted(races)
    return itertools.pairwise(ordered)


async def booked_races(redis: RedisClient, arena: str) -> set[str]:
    """The races of the arena booked so far."""
    return {key.decode() for key in await redis.hkeys(f"fgr:{{arena:{arena}}}:booked")}


async def check_the_books(redis: RedisClient, arena: str) -> None:
    """Every finished race of the arena booked, each once and for both players; every noted pairing created and
    tagged with the arena; no player's race started before its previous one finished."""
    store, races = ArenaStore(redis), RaceStore(redis)
    paired = {note["race"]: (note["a"], note["b"]) for _, note in await store.notes_after(arena, "0-0") if note.get("kind") == "paired"}

    async def all_finished_booked() -> bool:
        booked = await booked_races(redis, arena)
        records = [await races.load_race(race) for race in paired]
        return all(record is None or record.status is not RaceStatus.FINISHED or record.race_id in booked for record in records)

    await wait_until(all_finished_booked, timeout=30, what="every finished race of the arena booked")
    booked = await booked_races(redis, arena)
    games = {player: await store.games(arena, player) for player in await store.ratings(arena)}
    assert sum(len(played) for played in games.values()) == 2 * len(booked)  # each booked race once, for both
    assert {game.race for played in games.values() for game in played} == booked
    by_player: dict[str, list[tuple[int, int]]] = {}
    for race, pair in paired.items():
        record = await races.load_race(race)
        assert record is not None, f"race {race} was noted paired but never created"
        assert record.settings.arena == arena
        for who in pair:
            by_player.setdefault(who, []).append((record.created_at, record.finished_at or 2**62))
    for who, raced in by_player.items():
        for (_, first_end), (second_start, _) in spans(raced):
            assert second_start >= first_end, f"{who} was paired into a race before its previous one finished"


async def test_a_process_killed_during_an_arena_loses_no_result_and_pairs_nobody_twice(
    redis_url: str, spawn_servers: SpawnServers, tmp_path: Path
) -> None:
    unlimited = tmp_path / "logins.toml"
    unlimited.write_text("[login]\nregistrations_per_address = 0\nper_address = 0\noverall = 0\n")
    doomed, survivor = await spawn_servers(2, "--presence-lease", "1.2", "--grace", "1", "--config", str(unlimited))
    redis = connect_redis(redis_url, max_connections=4)
    store, races = ArenaStore(redis), RaceStore(redis)
    handles = [new_handle(name) for name in ("ann", "bob", "cat", "dan", "eve", "fay")]
    on_doomed = [await registered(doomed.url, handle) for handle in handles[:3]]
    on_survivor = [await registered(survivor.url, handle) for handle in handles[3:]]
    clients = [*on_doomed, *on_survivor]
    tasks: list[asyncio.Task[None]] = []
    try:
        arena = (await on_doomed[0].arena_create("kill -9", minutes=30, time_limit=60)).arena.arena
        for client in clients:
            await client.arena_join(arena)
        tasks = [asyncio.create_task(play_on(client)) for client in clients]

        async def booked_at_least(count: int) -> bool:
            return len(await booked_races(redis, arena)) >= count

        await wait_until(lambda: booked_at_least(3), timeout=60, what="three races booked on two processes")
        doomed.signal(signal.SIGKILL)
        await doomed.exited()
        killed_at = await races.now_ms()
        booked_then = len(await booked_races(redis, arena))
        for index, handle in enumerate(handles[:3]):  # its players come back on the other process
            client = await player(survivor.url, handle)
            await client.login(handle, PASSWORD)
            await client.arena_join(arena)
            clients.append(client)
            tasks.append(asyncio.create_task(play_on(client)))
            on_doomed[index] = client
        back = {client.session.player for client in on_doomed if client.session is not None}

        async def paired_again() -> bool:
            notes = await store.notes_after(arena, "0-0")
            after = [note for entry, note in notes if note.get("kind") == "paired" and int(entry.split("-")[0]) > killed_at]
            return len(await booked_races(redis, arena)) >= booked_then + 4 and any(
                note["a"] in back or note["b"] in back for note in after
            )

        await wait_until(paired_again, timeout=90, what="pairing going on after the kill, with the players who came back")
        for client in on_survivor + on_doomed:
            await client.arena_pause(arena)

        await check_the_books(redis, arena)
    finally:
        for task in tasks:
            task.cancel()
        for client in clients:
            await client.close()
        await redis.aclose()
