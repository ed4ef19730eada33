"""Berserk in an arena on a real server and Redis: chosen during the countdown (refused after the start with
``berserk_too_late``), it halves that player's time alone — its attempt ends at half the time limit while the
opponent plays on — shows in the race's snapshot and events, and a win with at least 7 moves books one point more."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from lobby_helpers import refused, wait_until
from player_helpers import new_handle, registered
from race_helpers import server_config, store_of

from client import RaceClient
from server.app import RaceServer
from shared import Board, Rules, move_text
from shared.arena import BERSERK_MIN_MOVES
from shared.protocol import ArenaPaired, AttemptEnded, AttemptState, RaceResult, Started, WentBerserk

TIME_LIMIT = 10
"""Seconds of each race (the least an arena allows): a berserk player has 5."""


@pytest_asyncio.fixture
async def slow_countdown_server(redis_url: str) -> AsyncIterator[RaceServer]:
    """A server whose countdowns last 3 s (time to choose berserk after ``arena_paired``) and that proves no
    position dead (the test's moves are any legal ones: only the clock may end Ann's attempt)."""
    async with RaceServer(server_config(redis_url, countdown_seconds=3.0), dead_check=lambda board: False) as server:
        yield server


def a_winning_line(seed: int, length: int) -> list[str]:
    """At least ``length`` legal moves of the deal, one card on the foundations by the end (depth-first search)."""
    board = Board.deal(seed, Rules())

    def search(depth: int) -> list[str] | None:
        if board.foundation_count >= 1:
            return []
        if depth == 0:
            return None
        for move in board.legal_moves():
            board.push(move)
            rest = search(depth - 1)
            board.pop()
            if rest is not None:
                return [move_text(move), *rest]
        return None

    line = search(6)
    assert line is not None, f"no foundation card within 6 moves of deal {seed}"
    for text in line:
        board.push(next(move for move in board.legal_moves() if move_text(move) == text))
    while len(line) < length:  # without undo a count never falls: any further legal move keeps the card up
        move = board.legal_moves()[0]
        board.push(move)
        line.append(move_text(move))
    return line


async def test_a_berserk_player_has_half_the_time_and_a_point_more_for_a_win_of_seven_moves(slow_countdown_server: RaceServer) -> None:
    server = slow_countdown_server
    ann, bob = [await registered(server.url, new_handle(name)) for name in ("ann", "bob")]
    clients: list[RaceClient] = [ann, bob]
    try:
        arena = (await ann.arena_create("berserk arena", minutes=10, time_limit=TIME_LIMIT)).arena.arena
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
        for move in a_winning_line(record.deal.seed, BERSERK_MIN_MOVES):
            await ann.move(race, move)
        ended = await bob.wait_for(AttemptEnded, timeout=15)  # Ann's half of the time runs out; Bob plays on
        assert (ended.slot, ended.reason) == (ann_slot, AttemptState.TIME_LIMIT)
        assert seen[ann_slot].deadline <= ended.at < race_deadline
        await bob.resign(race)  # accepted: Bob's attempt still ran
        result = await ann.wait_for(RaceResult)
        assert result.winner == ann_slot

        async def booked() -> bool:
            return any(line.games for line in (await bob.arena_standings(arena)).standings)


        await wait_until(booked, timeout=20, what="the race booked")
        table = {line.handle: line for line in (await bob.arena_standings(arena)).standings}
        assert ann.session is not None and bob.session is not None
        first = table[ann.session.account or ""]
        assert (first.score, first.berserks, first.games) == (2 + 1, 1, 1)
        assert (table[bob.session.account or ""].score, table[bob.session.account or ""].berserks) == (0, 0)
    finally:
        for client in clients:
            await client.close()
