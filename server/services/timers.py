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

    def __init__(self, store: RaceStore, *, interval: float = 0.1, after_ticks: Callable[[list[str]], Awaitable[None]] | None = None) -> None:
        """``after_ticks`` runs after each sweep with the races it ticked (the lobby drops races that started)."""
        self.store = store
        self.interval = interval
        self.after_ticks = after_ticks
        self._loop = BackgroundLoop("timers: sweep")

    async def sweep_once(self) -> int:
        """Fire every due deadline once; returns how many races were ticked. The due races' ticks are issued
        together (one write on the store's pipelined connection); then each race is re-indexed at its next deadline
        or taken out (one command each for all), and the races are handed to ``after_ticks``."""
        due = await self.store.due_races()
        if not due:
            return 0
        ticked = await asyncio.gather(*(self.store.tick(race_id) for race_id in due), return_exceptions=True)
        failed = next((outcome for outcome in ticked if isinstance(outcome, BaseException)), None)
        done = [race_id for race_id, next_due in zip(due, ticked, strict=True) if next_due is None]
        await self.store.schedule_many({race_id: next_due for race_id, next_due in zip(due, ticked, strict=True) if isinstance(next_due, int)})
        await self.store.unschedule(*done)
        if failed is not None:  # those races keep their entries, due now: the next sweep ticks them again
            raise failed
        if self.after_ticks is not None:
            await self.after_ticks(due)
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
