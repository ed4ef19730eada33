"""Rated races: who may play them, Glicko-2 changes in the result exactly as the reference computes them, abandoning
loses, records kept, one rated race at a time; then the leaderboard, history and stats they feed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from conftest import ON_BOTH_RECORDS
from lobby_helpers import players, refused
from player_helpers import booked, new_handle, rated_race, registered
from race_helpers import server_config

from server.app import RaceServer
from server.store import keys
from shared.glicko2 import Game, Rating, update
from shared.protocol import RaceSettings


@pytest_asyncio.fixture
async def open_board_server(redis_url: str, database_url: str) -> AsyncIterator[RaceServer]:
    """A server on which every rated player is on the leaderboard at once (no provisional period)."""
    async with RaceServer(server_config(redis_url, database_url=database_url, migrate=True, provisional_deviation=1000.0)) as server:
        yield server


async def test_rated_races_are_for_accounts_with_a_server_chosen_deal_and_no_undo(race_server: RaceServer) -> None:
    ann = await registered(race_server.url, new_handle("Ann"))
    async with players(race_server.url, "Guest") as (guest,):
        with refused("account_required"):
            await guest.create(RaceSettings(rated=True))
        with refused("account_required"):
            await guest.quick_match(RaceSettings(rated=True))
        with refused("bad_field"):
            await ann.create(RaceSettings(rated=True, seed=7))
        with refused("bad_field"):
            await ann.create(RaceSettings(rated=True, undo=True))
        seated = await ann.create(RaceSettings(rated=True))
        assert seated.race.settings.rated
        with refused("account_required"):
            await guest.join(seated.race.race)
    await ann.close()


@ON_BOTH_RECORDS
async def test_a_rated_result_carries_both_rating_changes_as_the_reference_computes_them(race_server: RaceServer) -> None:
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    ann, bob = await registered(race_server.url, ann_handle), await registered(race_server.url, bob_handle)
    result = await rated_race(ann, bob)
    assert (result.winner, result.reason) == (0, "abandoned")
    winner, loser = result.players
    assert (winner.account, loser.account, loser.ended) == (ann_handle, bob_handle, "abandoned")
    won, lost = update(Rating(), [Game(Rating(), 1.0)]), update(Rating(), [Game(Rating(), 0.0)])
    assert winner.rating is not None and loser.rating is not None
    assert (winner.rating.before, winner.rating.after, winner.rating.deviation) == (1500, round(won.rating), round(won.deviation))
    assert (loser.rating.before, loser.rating.after, loser.rating.deviation) == (1500, round(lost.rating), round(lost.deviation))
    assert winner.rating.delta == round(won.rating) - 1500 > 0 > loser.rating.delta
    assert winner.rating.provisional and loser.rating.provisional  # one race leaves the deviation far above 110
    await booked(race_server, result.race)
    board = await ann.leaderboard()
    assert board.own is None and ann_handle not in [entry.handle for entry in board.entries]  # provisional: not listed
    assert board.own_rating is not None and (board.own_rating.rating, board.own_rating.provisional) == (round(won.rating), True)
    assert race_server.redis is not None
    cache_ms = race_server.config.archive_cache_seconds * 1000
    for key in keys.race_keys(result.race)[:2]:  # state and events (nobody moved: no move lists)
        kept = await race_server.redis.pttl(key)
        if race_server.database is None:
            assert kept == -1  # rated records are kept forever by default
        else:
            assert kept == -1 or 0 < kept <= cache_ms  # kept until archived, then a cache of the archive
    stats = await ann.stats()
    (classic,) = stats.profiles
    assert (classic.races, classic.wins, classic.losses, classic.rating and classic.rating.rating) == (1, 1, 0, round(won.rating))
    bob_stats = await ann.stats(bob_handle)
    assert (bob_stats.profiles[0].losses, bob_stats.profiles[0].rating and bob_stats.profiles[0].rating.games) == (1, 1)
    # The second race starts from the stored ratings: its change is the reference update of those.
    carl = await registered(race_server.url, new_handle("Carl"))
    second = await rated_race(ann, carl)
    assert second.players[0].rating is not None
    assert second.players[0].rating.before == round(won.rating)
    again = update(won, [Game(Rating(), 1.0)])
    assert second.players[0].rating.after == pytest.approx(round(again.rating), abs=1)  # the deviation aged for a few ms
    await ann.close()


@ON_BOTH_RECORDS
async def test_a_player_plays_one_rated_race_at_a_time(race_server: RaceServer) -> None:
    ann, bob, cid = [await registered(race_server.url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
    first = await ann.create(RaceSettings(rated=True))
    await bob.join(first.race.race)
    second = await cid.create(RaceSettings(rated=True))
    with refused("rated_busy"):
        await bob.join(second.race.race)
    casual = await cid.create(RaceSettings())
    await bob.join(casual.race.race)  # casual races are not limited
    for client in (ann, bob, cid):
        await client.close()


async def test_a_player_in_a_rated_race_cannot_create_another_that_nobody_could_join(race_server: RaceServer) -> None:
    ann, bob = [await registered(race_server.url, new_handle(name)) for name in ("Ann", "Bob")]
    first = await ann.create(RaceSettings(rated=True))
    await bob.join(first.race.race)
    for player in (ann, bob):  # the campaign: seated, then every join of it refused rated_busy
        with refused("rated_busy"):
            await player.create(RaceSettings(rated=True))
    await ann.create(RaceSettings())  # casual races are not limited
    for client in (ann, bob):
        await client.close()


@ON_BOTH_RECORDS
async def test_the_leaderboard_lists_established_players_by_rating_with_the_askers_own_rank(open_board_server: RaceServer) -> None:
    url = open_board_server.url
    handles = [new_handle(name) for name in ("Top", "Mid", "Low")]
    top, mid, low = [await registered(url, handle) for handle in handles]
    results = [await rated_race(top, mid), await rated_race(top, low)]  # the second starts before the first is booked
    for result in results:
        await booked(open_board_server, result.race)
    board = await top.leaderboard(limit=100)
    ranked = [entry.handle for entry in board.entries if entry.handle in handles]
    assert ranked[0] == handles[0]
    ratings = [entry.rating for entry in board.entries]
    assert ratings == sorted(ratings, reverse=True)
    assert board.own is not None and board.own.handle == handles[0] and board.own.games == 2
    assert board.own_rating is not None and board.own_rating.games == 2
    assert [entry.rank for entry in board.entries] == list(range(1, len(board.entries) + 1))
    await top.close()


async def test_a_rated_race_closed_in_its_countdown_does_not_keep_its_players_claimed(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server:
        ann, bob, cid = [await registered(server.url, new_handle(name)) for name in ("Ann", "Bob", "Cid")]
        first = await ann.create(RaceSettings(rated=True))
        await bob.join(first.race.race)
        await ann.leave(first.race.race)  # the creator leaves the countdown: the race closes
        second = await cid.create(RaceSettings(rated=True))
        joined = await bob.join(second.race.race)
        assert joined.race.status == "countdown"
        third = await ann.create(RaceSettings(rated=True))
        await bob.leave(second.race.race)  # the second player leaves: its claim goes with it
        assert (await bob.join(third.race.race)).race.status == "countdown"
        for client in (ann, bob, cid):
            await client.close()
