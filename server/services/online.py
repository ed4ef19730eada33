"""How many are online and racing, over every server process sharing the store: each process reports its own
players every :data:`REPORT_SECONDS` and learns the total (the lobby says it, ``online`` request)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from server.services.background import BackgroundLoop
from server.store import OnlineStore, StoreError

log = logging.getLogger(__name__)

REPORT_SECONDS = 2.0
"""How often a process writes its counts and reads the total."""
STALE_MS = round(3 * REPORT_SECONDS * 1000)
"""A process's line not renewed within this long no longer counts (the process stopped or died)."""


@dataclass(frozen=True, slots=True)
class PlayerCounts:
    """Players one process serves, or all of them: ``online`` said hello on an open connection, ``racing`` of them
    sit in a race that has both its players (counting down, running, or just finished and still open)."""

    online: int = 0
    racing: int = 0


def nobody() -> PlayerCounts:
    """The counts of a process that serves no connection yet (before its transport starts)."""
    return PlayerCounts()


class OnlineCounter:
    """Reports this process's :class:`PlayerCounts` (``local``, read from its connections) and keeps the others'."""

    def __init__(self, store: OnlineStore, process_id: str, local: Callable[[], PlayerCounts] = nobody) -> None:
        self.store = store
        self.process_id = process_id
        self.local = local
        """This process's own counts, now (the assembly sets it once the transport exists)."""
        self._reported = PlayerCounts()
        self._total = PlayerCounts()
        self._loop = BackgroundLoop("online: counts")

    def totals(self) -> PlayerCounts:
        """Everybody's counts: the other processes' as of the last report, this process's as they are now."""
        own = self.local()
        return PlayerCounts(
            online=max(0, self._total.online - self._reported.online + own.online),
            racing=max(0, self._total.racing - self._reported.racing + own.racing),
        )

    async def report(self) -> None:
        """Write this process's counts and read everybody's."""
        own = self.local()
        online, racing = await self.store.report(self.process_id, own.online, own.racing)
        self._reported, self._total = own, PlayerCounts(online, racing)

    async def run(self) -> None:
        """Report every :data:`REPORT_SECONDS` until stopped; then take this process's line out."""
        await self._loop.run(self._step, retry_seconds=REPORT_SECONDS)
        try:
            await self.store.forget(self.process_id)
        except StoreError as error:
            log.info("online: could not take this process's line out (%s); it goes stale", error)

    async def _step(self) -> None:
        await self.report()
        await self._loop.pause(REPORT_SECONDS)

    def stop(self) -> None:
        """End :meth:`run`."""
        self._loop.stop()
