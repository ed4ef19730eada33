"""Berserk in an arena on a real server and Redis: chosen during the countdown (refused after the start with
``berserk_too_late``), it halves that player's time alone — its attempt ends at half the time limit while the
opponent plays on — shows in the race's snapshot and events, and a win with at least 7 moves books one point more
(here a rated arena's race, won when the opponent abandons it: whatever the deal, Ann wins)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from lobby_helpers import refused, wait_until
from player_helpers import new_handle, registered
from race_helpers import server_config, store_of

from client import RaceClient
from server.app import RaceServer
from shared import Board, Move, Rules, move_text
from shared.arena import BERSERK_MIN_MOVES
from shared.protocol import ArenaPaired, AttemptEnded, AttemptState, RaceResult, Started, WentBerserk

TIME_LIMIT = 10
"""Seconds of each race (the least an arena allows): a berserk player has 5."""


@pytest_asyncio.fixture
async def slow_countdown_server(redis_url: str) -> AsyncIterator[RaceServer]:
    """A server whose countdowns last 3 s (time to choose berserk after ``arena_paired``), whose grace period is 1 s
    and that proves no position dead (the test's moves are any legal ones: only the clock may end Ann's attempt)."""
    async with RaceServer(server_config(redis_url, countdown_seconds=3.0, grace_seconds=1.0), dead_check=lambda board: False) as server:
        yield server


def legal_moves_left_open(seed: int, length: int) -> list[str]:
    """``length`` legal moves of the deal, each leaving the most moves open (so the engine does not end the attempt
    as blocked)."""
    board = Board.deal(seed, Rules())

    def open_moves(move: Move) -> int:
        board.push(move)
        count = len(board.legal_moves())
        board.pop()
        return count

    line = []
    for _ in range(length):
        move = max(board.legal_moves(), key=open_moves)
        board.push(move)
        line.append(move_text(move))
    return line


async def test_a_berserk_player_has_half_the_time_and_a_point_more_for_a_win_of_seven_moves(slow_countdown_server: RaceServer) -> None:
    server = slow_countdown_server
    ann, bob = [await registered(server.url, new_handle(name)) for name in ("ann", "bob")]
    clients: list[RaceClient] = [ann, bob]
    try:
        arena = (await ann.arena_create("berserk arena", minutes=10, time_limit=TIME_LIMIT, rated=True)).arena.arena
        for client in clients:
            await client.arena_join(arena)
        race = (await ann.wait_for(ArenaPaired, timeout=20)).race
        assert (await bob.wait_for(ArenaPaired, timeout=20)).race == race
        with refused("not_seated"):
            await bob.arena_berserk(arena, "notyourrace")
        await ann.arena_berserk(arena, race)  # during the countdown
        await ann.arena_berserk(arena, race)  # again: the same, no second bonus
        synced = {client: await client.sync(race) for client in clients}
        ann_slot = next(seat.slot for seat in synced[ann].race.players if seat.account == ann.session.account)  # type: ignore[union-attr]
        seen = {seat.slot: seat for seat in synced[bob].race.players}
        assert seen[ann_slot].berserk and not seen[1 - ann_slot].berserk
        start_at, race_deadline = synced[ann].race.start_at, synced[ann].race.deadline
        assert start_at is not None and race_deadline == start_at + TIME_LIMIT * 1000
        assert seen[ann_slot].deadline == start_at + TIME_LIMIT * 500
        went = await bob.wait_for(WentBerserk)
        assert (went.slot, went.deadline) == (ann_slot, start_at + TIME_LIMIT * 500)

        await bob.wait_for(Started)
        with refused("berserk_too_late"):
            await bob.arena_berserk(arena, race)
        record = await store_of(server).load_race(race)
        assert record is not None and record.deal.seed is not None
        for move in legal_moves_left_open(record.deal.seed, BERSERK_MIN_MOVES):
            await ann.move(race, move)
        ended = await bob.wait_for(AttemptEnded, timeout=15)  # Ann's half of the time runs out; Bob plays on
        assert (ended.slot, ended.reason) == (ann_slot, AttemptState.TIME_LIMIT)
        assert seen[ann_slot].deadline <= ended.at < race_deadline
        await bob.close()  # Bob's attempt still runs: abandoned after the grace period, which loses a rated race
        result = await ann.wait_for(RaceResult, timeout=20)
        assert (result.winner, result.reason) == (ann_slot, "abandoned")

        async def booked() -> bool:
            return any(line.games for line in (await ann.arena_standings(arena)).standings)


        await wait_until(booked, timeout=20, what="the race booked")
        table = {line.handle: line for line in (await ann.arena_standings(arena)).standings}
        assert ann.session is not None and bob.session is not None
        first = table[ann.session.account or ""]
        assert (first.score, first.berserks, first.games) == (2 + 1, 1, 1)
        assert (table[bob.session.account or ""].score, table[bob.session.account or ""].berserks) == (0, 0)
    finally:
        for client in clients:
            await client.close()
