"""Race deadlines (end of countdown, time limit; later the reconnect grace) enforced from Redis.

Deadlines live in the race's record and in a shared index (sorted set) that
every server process polls; the tick script checks them against Redis' clock
and is idempotent, so any process can take over another's races, and several
processes firing the same deadline do no harm.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server.services.background import BackgroundLoop
from server.store import RaceStore

log = logging.getLogger(__name__)


class TimerSweeper:
    """Polls the deadline index every ``interval`` seconds and fires what is due."""

    def __init__(self, store: RaceStore, *, interval: float = 0.1, after_tick: Callable[[str], Awaitable[None]] | None = None) -> None:
        """``after_tick`` runs after each fired race (the lobby drops races that started)."""
        self.store = store
        self.interval = interval
        self.after_tick = after_tick
        self._loop = BackgroundLoop("timers: sweep")

    async def sweep_once(self) -> int:
        """Fire every due deadline once; returns how many races were ticked."""
        due = await self.store.due_races()
        for race_id in due:
            next_due = await self.store.tick(race_id)
            if next_due is None:
                await self.store.unschedule(race_id)
            else:
                await self.store.schedule(race_id, next_due)
            if self.after_tick is not None:
                await self.after_tick(race_id)
        return len(due)

    def stop(self) -> None:
        """Make :meth:`run` return."""
        self._loop.stop()

    async def run(self) -> None:
        """Sweep until stopped; survives Redis outages by retrying."""

        async def step() -> None:
            await self.sweep_once()
            await asyncio.sleep(self.interval)

        await self._loop.run(step, retry_seconds=self.interval)
