"""Overload degrades, never errs (issue 28.3): a server whose Redis commands queue far behind (its command pool
squeezed to two connections in a real server process, Redis made slow by a busy script looping beside it) acknowledges every accepted move
late, never ``unavailable`` (then ``out_of_sequence`` for the moves pipelined behind it), while Redis is up; and
while its commands queue behind the pool it refuses new races and spectators with ``overloaded`` and a retry-after.

On the old code a request waited at most 10 s for a pooled connection and then failed with "No connection
available": the first move of each player (which reads the race through the pool) failed, and every move sent
behind it was refused as out of sequence.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path

import pytest
from race_helpers import Race, player, seated_race
from redis.asyncio import Redis
from server_processes import start_servers
from winning_lines import winning_deal

from client import RaceClient, ServerError
from shared.protocol import OVERLOAD_RETRY_SECONDS, RaceSettings

RACES = 16
MOVES = 4
BUSY_SCRIPT = """
local started = redis.call('TIME')
local began = tonumber(started[1]) * 1000000 + tonumber(started[2])
while true do
    local now = redis.call('TIME')
    if tonumber(now[1]) * 1000000 + tonumber(now[2]) - began >= tonumber(ARGV[1]) then return 1 end
end
"""
"""Keeps Redis busy for ARGV[1] microseconds: every other command waits for it, as on a Redis that is up but slow."""


@contextlib.asynccontextmanager
async def slowed(redis_url: str, busy_us: int = 600_000) -> AsyncIterator[None]:
    """Redis runs the busy script back to back while the block runs: each round trip of the server waits up to
    ``busy_us``, one command per pooled connection per turn, far below the 5 s socket timeout."""
    client = Redis.from_url(redis_url, socket_timeout=None)
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            await client.eval(BUSY_SCRIPT, 0, busy_us)
            await asyncio.sleep(0.002)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        stop.set()
        await task
        await client.aclose()


async def pipelined(client: RaceClient, race_id: str, moves: tuple[str, ...]) -> list[int | str]:
    """Send ``moves`` one after the other without waiting for the acks; each one's new seq, or its error code."""
    client.move_retry_delays = ()  # the first `unavailable` is the defect: no resend to hide it
    client.request_timeout = 300.0  # late is the expected answer: this client waits for it

    async def one(seq: int, move: str) -> int | str:
        try:
            return (await client.move(race_id, move, seq=seq, move_id=f"{race_id}-{client.token}-{seq}")).seq
        except ServerError as error:
            return error.code

    return list(await asyncio.gather(*(one(seq, move) for seq, move in enumerate(moves))))


async def refusal(request: Awaitable[object]) -> tuple[str, int | None]:
    """The code and ``expected`` of the refusal ``request`` gets (AssertionError if it is not refused)."""
    try:
        await request
    except ServerError as error:
        return error.code, error.expected
    raise AssertionError("the request was not refused")


async def first_overload_refusal(newcomer: RaceClient, moves: asyncio.Future[list[list[int | str]]], seed: int, race_id: str) -> list[tuple[str, int | None]]:
    """Ask for a new race until the server refuses it as overloaded (while the moves are still queued), then to watch
    a race: both refusals (AssertionError if the moves were all answered before any overload refusal)."""
    while True:
        assert not moves.done(), "the moves were answered before the server ever refused new work as overloaded"
        try:
            seated = await newcomer.create(RaceSettings(seed=seed))
        except ServerError as error:
            assert error.code == "overloaded", error
            return [(error.code, error.expected), await refusal(newcomer.watch(race_id))]
        await newcomer.leave(seated.race.race)  # taken before the queue formed: give its place back, ask again


async def test_an_overloaded_server_acknowledges_moves_late_and_refuses_new_races_and_spectators_first(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, line = winning_deal()
    monkeypatch.setenv("FLOWERGARDEN_REDIS_POOL_SIZE", "2")  # a real server process, its command pool squeezed
    (server,) = await start_servers(redis_url, tmp_path, 1)
    try:
        races: list[Race] = [await seated_race(server.url, RaceSettings(seed=seed)) for _ in range(RACES)]
        newcomer = await player(server.url, "Cy")
        newcomer.request_timeout = 300.0
        try:
            async with slowed(redis_url):
                moves = asyncio.gather(*(pipelined(seat, race.race_id, line[:MOVES]) for race in races for seat in (race.ann, race.bob)))
                refusals = await first_overload_refusal(newcomer, moves, seed, races[0].race_id)
                outcomes = await moves
            assert refusals == [("overloaded", OVERLOAD_RETRY_SECONDS)] * 2
            assert outcomes == [list(range(1, MOVES + 1))] * (2 * RACES)
        finally:
            await newcomer.close()
            for race in races:
                await race.close()
    finally:
        server.stop()
