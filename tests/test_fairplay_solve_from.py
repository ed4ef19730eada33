"""``solve_from``: the server's solver on any point of a finished race's player line — never before the result, to
anyone; its line wins from that position; answers are cached in Redis; solver runs are limited per session and
per client address."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from lobby_helpers import players, refused
from race_helpers import Race, play, seated_race, server_config
from redis.asyncio import Redis
from test_fairplay_analysis import FATAL, SEED, WINNING_PREFIX
from test_fairplay_race import run_cli

from server.app import RaceServer
from server.services.analysis import SolveFromLimits
from server.store import keys
from shared import Board, Rules, parse_action
from shared.protocol import RaceResult, RaceSettings, Spectators

ANN_LINE = [*WINNING_PREFIX, FATAL]
"""Ann's line in every race here: nine moves of a winning line of seed 7, then the move that loses the deal."""


def position_after(actions: list[str]) -> Board:
    """The board of seed 7 after ``actions``, by the shared engine."""
    board = Board.deal(SEED, Rules())
    for text in actions:
        board.play(parse_action(text))
    return board


async def finished_race(url: str, spectators: Spectators = Spectators.ANYONE) -> Race:
    """Ann plays ``ANN_LINE``, Bob two moves of the winning line; both resign."""
    race = await seated_race(url, RaceSettings(seed=SEED, spectators=spectators))
    await play(race.ann, race.race_id, ANN_LINE)
    await play(race.bob, race.race_id, WINNING_PREFIX[:2])
    await race.ann.resign(race.race_id)
    await race.bob.resign(race.race_id)
    await race.ann.wait_for(RaceResult)
    return race


@pytest_asyncio.fixture
async def solving_server(redis_url: str) -> AsyncIterator[RaceServer]:
    """A server whose solve_from budget proves seed 7's lost position even on a loaded machine."""
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.solve_from_key("address", "127.0.0.1"))  # earlier tests asked from this address too
    async with RaceServer(server_config(redis_url, solve_from=SolveFromLimits(seconds=30))) as server:
        yield server


async def test_solve_from_is_refused_before_the_result_to_players_and_spectators(solving_server: RaceServer) -> None:
    race = await seated_race(solving_server.url, RaceSettings(seed=SEED))
    try:
        await play(race.ann, race.race_id, WINNING_PREFIX[:3])
        with refused("not_finished"):
            await race.ann.solve_from(race.race_id, 0, 3)
        with refused("not_finished"):
            await race.bob.solve_from(race.race_id, 0, 3)  # the opponent's line: the answer key, never during the race
        async with players(solving_server.url, "Eve") as (eve,):
            await eve.watch(race.race_id)
            with refused("not_finished"):
                await eve.solve_from(race.race_id, 0, 0)
        with refused("unknown_race"):
            await race.ann.solve_from("nosuchrace00", 0, 0)
    finally:
        await race.close()


async def test_the_line_from_a_winnable_point_wins_there_and_the_point_after_the_fatal_move_is_proven_lost(
    solving_server: RaceServer,
) -> None:
    race = await finished_race(solving_server.url)
    try:
        async with players(solving_server.url, "Eve") as (eve,):  # anyone may ask once the race is over
            before = await eve.solve_from(race.race_id, 0, len(WINNING_PREFIX))
            assert (before.verdict, before.slot, before.actions, before.cached) == ("solved", 0, len(WINNING_PREFIX), False)
            board = position_after(WINNING_PREFIX)
            for move in before.line:
                board.play(parse_action(move))
            assert board.is_won()
            after = await eve.solve_from(race.race_id, 0, len(ANN_LINE))
            assert (after.verdict, after.line) == ("unsolvable", [])
            start = await eve.solve_from(race.race_id, 1, 0)  # the deal, from Bob's side
            board = position_after([])
            for move in start.line:
                board.play(parse_action(move))
            assert start.verdict == "solved" and board.is_won()
            assert before.budget_ms == 30_000
            with refused("bad_field"):
                await eve.solve_from(race.race_id, 1, 3)  # Bob made two actions
    finally:
        await race.close()


async def test_a_race_nobody_may_watch_is_solved_for_its_players_only(solving_server: RaceServer) -> None:
    race = await finished_race(solving_server.url, Spectators.NOBODY)
    try:
        async with players(solving_server.url, "Eve") as (eve,):
            with refused("no_spectators"):
                await eve.solve_from(race.race_id, 0, 1)
        assert (await race.bob.solve_from(race.race_id, 0, 1)).verdict == "solved"
    finally:
        await race.close()


async def test_a_repeated_position_is_answered_from_the_cache(solving_server: RaceServer, redis_url: str) -> None:
    race = await finished_race(solving_server.url)
    try:
        first = await race.ann.solve_from(race.race_id, 0, 4)
        async with Redis.from_url(redis_url) as redis:
            assert await redis.exists(keys.race_solution(race.race_id, 0, 4))
        again = await race.bob.solve_from(race.race_id, 0, 4)
        assert first.cached is False and again.cached is True
        assert (again.verdict, again.line) == (first.verdict, first.line)
    finally:
        await race.close()


async def test_solver_runs_are_limited_per_session_and_per_address_and_cached_answers_are_free(redis_url: str) -> None:
    async with Redis.from_url(redis_url) as redis:
        await redis.delete(keys.solve_from_key("address", "127.0.0.1"))
    limits = SolveFromLimits(seconds=30, per_session=2, per_address=3)
    async with RaceServer(server_config(redis_url, solve_from=limits)) as server:
        race = await finished_race(server.url)
        try:
            await race.ann.solve_from(race.race_id, 0, 0)
            await race.ann.solve_from(race.race_id, 0, 1)
            with refused("rate_limited"):
                await race.ann.solve_from(race.race_id, 0, 2)  # a third solver run of this session
            assert (await race.ann.solve_from(race.race_id, 0, 1)).cached  # still answered: from the cache
            await race.bob.solve_from(race.race_id, 0, 2)  # another session: the address' third
            with refused("rate_limited"):
                await race.bob.solve_from(race.race_id, 0, 3)  # the address' fourth
        finally:
            await race.close()


async def test_analyse_from_prints_the_servers_line_from_a_point_and_solves_a_file_locally(
    solving_server: RaceServer, tmp_path: Path
) -> None:
    race = await finished_race(solving_server.url)
    await race.close()
    code, output = await run_cli("analyse", race.race_id, "--server", solving_server.url, "--player", "1", "--from", str(len(WINNING_PREFIX)))
    assert code == 0, output
    assert output.startswith(f"From Ann's position after {len(WINNING_PREFIX)} actions: winnable: a winning line")
    moves = output.split("moves): ", 1)[1].strip().split(", ")
    board = position_after(WINNING_PREFIX)
    for move in moves:
        board.play(parse_action(move))
    assert board.is_won()
    record = tmp_path / "race.json"
    record.write_text(json.dumps({"seed": SEED, "lines": [ANN_LINE]}))
    code, output = await run_cli("analyse", str(record), "--from", str(len(ANN_LINE)), "--budget", "30", "--json")
    assert code == 0, output
    assert json.loads(output)["verdict"] == "unsolvable"


async def test_a_busy_solver_refuses_what_it_cannot_queue_but_still_answers_from_the_cache(solving_server: RaceServer) -> None:
    race = await finished_race(solving_server.url)
    analyst = solving_server.analyst
    assert analyst is not None
    try:
        await race.ann.solve_from(race.race_id, 0, 1)
        analyst.solver_queue.waiting = analyst.solve_limits.max_waiting  # as if that many requests were waiting for the worker
        try:
            with refused("rate_limited"):
                await race.ann.solve_from(race.race_id, 0, 2)
            assert (await race.ann.solve_from(race.race_id, 0, 1)).cached
        finally:
            analyst.solver_queue.waiting = 0
        assert (await race.ann.solve_from(race.race_id, 0, 2)).verdict == "solved"
    finally:
        await race.close()


async def test_the_deal_is_one_position_for_both_seats_and_is_solved_once(solving_server: RaceServer) -> None:
    race = await finished_race(solving_server.url)
    try:
        first = await race.ann.solve_from(race.race_id, 0, 0)
        other_seat = await race.bob.solve_from(race.race_id, 1, 0)
        assert first.cached is False and other_seat.cached is True
        assert (other_seat.slot, other_seat.verdict, other_seat.line) == (1, first.verdict, first.line)
    finally:
        await race.close()
