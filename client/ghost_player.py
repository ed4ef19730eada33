"""A ghost: plays a recorded attempt's moves in a race at the pace they were recorded (ghost races,
docs/COMMUNITY.md). The server's bot host runs one on a :class:`RaceClient` connected to its own port, so the ghost is
an ordinary player to the race (its result, its replay, its spectators)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from client.practice_bot import play_seat
from client.race_client import RaceClient, ServerError
from shared.protocol import RaceResult


class GhostPlayer:
    """Replays ``moves`` (``times``: ms after the recorded attempt's start) in one seat, then resigns at ``end_ms``
    if its attempt still runs (a recorded attempt that was stopped, or ran out of time)."""

    def __init__(self, client: RaceClient, moves: Sequence[str], times: Sequence[int], end_ms: int) -> None:
        self.client = client
        self.moves = list(moves)
        self.times = list(times)
        self.end_ms = end_ms

    async def play(self, race_id: str, slot: int) -> RaceResult:
        """Play the seat until the race has a result, and return it."""
        return await play_seat(self.client, race_id, slot, lambda _: self._moves(race_id))

    async def _moves(self, race_id: str) -> None:
        """Each move when it is due (measured from the start as this client saw it), then the recorded end."""
        started = time.monotonic()
        try:
            for move, at in zip(self.moves, self.times, strict=True):
                await asyncio.sleep(max(0.0, started + at / 1000 - time.monotonic()))
                await self.client.move(race_id, move)
            await asyncio.sleep(max(0.0, started + self.end_ms / 1000 - time.monotonic()))
            await self.client.resign(race_id)
        except ServerError:  # the attempt or the race ended meanwhile (the ghost cleared, or the race was decided)
            return
