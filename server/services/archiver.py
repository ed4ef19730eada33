"""The archiver: moves finished races from Redis to PostgreSQL in the background (docs/STORAGE.md "The archive").

The hot path never waits on it: a race's result only adds an entry to a Redis stream. Every process runs one
archiver; each pass takes up to :data:`BATCH` entries, reads their races from Redis, writes them to the archive in
one batch (COPY), and only then confirms them in Redis. A failure (PostgreSQL down, killed) leaves the entries
unconfirmed, so the next pass takes them again: nothing is lost, and the archive keeps one copy per race id.
"""

from __future__ import annotations

import asyncio
import logging

from server import metrics
from server.services.background import BackgroundLoop
from server.store.archive_queue import ArchiveQueue
from server.store.database import RaceArchive

log = logging.getLogger(__name__)

BATCH = 500
"""Races archived in one pass (one COPY)."""


class Archiver:
    """One process's archiver loop; :attr:`lag` is what ``/ready`` and ``/metrics`` show."""

    def __init__(self, queue: ArchiveQueue, archive: RaceArchive, *, interval: float = 0.5) -> None:
        self.queue = queue
        self.archive = archive
        self.interval = interval
        self.lag: tuple[int, float] = (0, 0.0)
        """Finished races not archived yet and the age (s) of the oldest, as of the last pass."""
        self.archived = 0
        """Races this process wrote to the archive (a race found there already is not counted)."""
        self._loop = BackgroundLoop("archiver")

    @property
    def failures(self) -> int:
        """Passes that failed so far (PostgreSQL or Redis unavailable): each left its batch for a later pass."""
        return self._loop.failures

    async def run(self) -> None:
        """Archive until stopped."""
        await self._loop.run(self._pass, retry_seconds=self.interval)

    async def _pass(self) -> None:
        while await self.archive_batch() == BATCH:
            pass  # a full batch: more may be waiting
        self.lag = await self.queue.lag()
        metrics.archive_lag(*self.lag)
        await asyncio.sleep(self.interval)

    async def archive_batch(self) -> int:
        """One batch: take, read, write, confirm; how many entries it handled. StoreError/StoreUnavailable (Redis or
        PostgreSQL) leaves its entries to a later pass."""
        entries = await self.queue.take(BATCH)
        if not entries:
            return 0
        races = await self.queue.records([race_id for _, race_id in entries])
        new = await self.archive.put_many(list(races.values()))
        self.archived += new
        metrics.archived(new)
        await self.queue.confirm(entries, list(races))
        gone = len(entries) - len(races)
        if gone:
            log.info("archiver: %d queued races were no longer in Redis (or not finished): nothing to archive", gone)
        return len(entries)

    def stop(self) -> None:
        """End :meth:`run` after the pass under way."""
        self._loop.stop()

    async def close(self) -> None:
        """Nothing to release (the pool belongs to the server)."""

