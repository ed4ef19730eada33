"""Overload degrades, never errs (issue 28.3): a server whose Redis commands queue far behind (its command pool
squeezed to two connections in a real server process, Redis holding every command for 4 s by ``CLIENT PAUSE``) acknowledges every accepted move
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
PAUSE_MS = 4_000
"""How long Redis holds every command: below the server's 5 s socket timeout, so a held command is late, not failed."""
QUEUE_FORMS_S = 1.0
"""Time for the pipelined moves to reach the server and queue behind the two pooled connections the pause holds."""


@contextlib.asynccontextmanager
async def paused(redis_url: str) -> AsyncIterator[None]:
    """Redis holds every client's commands for :data:`PAUSE_MS` (``CLIENT PAUSE ... ALL``), as a Redis that is up but
    slow does: nothing the server sends is answered until the pause ends, whatever the machine's speed, so the
    server's queue for a connection is certain to form. The pause ends by itself."""
    client = Redis.from_url(redis_url)
    try:
        await client.client_pause(PAUSE_MS, all=True)
        yield
    finally:
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
            async with paused(redis_url):
                moves = asyncio.gather(*(pipelined(seat, race.race_id, line[:MOVES]) for race in races for seat in (race.ann, race.bob)))
                await asyncio.sleep(QUEUE_FORMS_S)
                refusals = [await refusal(newcomer.create(RaceSettings(seed=seed))), await refusal(newcomer.watch(races[0].race_id))]
                assert not moves.done(), "the moves were answered while Redis was paused"
            outcomes = await moves
            assert refusals == [("overloaded", OVERLOAD_RETRY_SECONDS)] * 2
            assert outcomes == [list(range(1, MOVES + 1))] * (2 * RACES)
        finally:
            await newcomer.close()
            for race in races:
                await race.close()
    finally:
        server.stop()
