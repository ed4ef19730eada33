"""The archiver: moves finished races from Redis to PostgreSQL in the background (docs/STORAGE.md "The archive").

The hot path never waits on it: a race's result only adds an entry to a Redis stream. Every process runs one
archiver; each pass takes batches of up to :data:`BATCH` entries, reads their races from Redis, writes each batch
to the archive in one transaction (COPY), and only then confirms it in Redis, reading the next batch meanwhile. A
failure (PostgreSQL down, killed) leaves the entries unconfirmed, so the next pass takes them again: nothing is
lost, and the archive keeps one copy per race id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server import metrics
from server.services.background import BackgroundLoop
from server.store.archive_queue import ArchiveQueue
from server.store.arena_store import ArenaStore
from server.store.database import PackedRace, RaceArchive

log = logging.getLogger(__name__)

BATCH = 500
"""Races archived in one batch (one transaction, one COPY)."""

ARENA_GRACE_MS = 60_000
"""How long after an arena's clock ran out it may be archived (its last races, begun before the end, are booked
first: an arena waits while any is under way)."""

ARENA_STALE_MS = 3_600_000
"""How long after its end an arena is archived even with a race still marked under way (its process died)."""

Batch = tuple[list[tuple[str, str]], dict[str, PackedRace]]
"""Queue entries (entry id, race id) and the finished races among them, read from Redis."""


class Archiver:
    """One process's archiver loop; :attr:`lag` is what ``/ready`` and ``/metrics`` show."""

    def __init__(self, queue: ArchiveQueue, archive: RaceArchive, *, interval: float = 0.5) -> None:
        self.queue = queue
        self.archive = archive
        self.arenas: ArenaStore | None = None
        """The arenas whose finished ones go to the database too (their store has the archive), with ``now_ms``."""
        self.now_ms: Callable[[], Awaitable[int]] | None = None
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
        await self.drain()
        if self.arenas is not None and self.now_ms is not None:
            for arena in await self.arenas.archive_finished(await self.now_ms(), grace_ms=ARENA_GRACE_MS, stale_ms=ARENA_STALE_MS):
                log.info("archiver: arena %s archived", arena)
        self.lag = await self.queue.lag()
        metrics.archive_lag(*self.lag)
        await asyncio.sleep(self.interval)

    async def drain(self) -> int:
        """Archive until a batch comes back short; how many entries were handled. While one batch is written to
        PostgreSQL and confirmed, the next is taken and read from Redis: the two servers work at the same time, and
        a batch costs the longer of the two, not their sum. StoreError/StoreUnavailable leaves the entries of the
        batches under way to a later pass (this process's unconfirmed entries are the first it takes again)."""
        batch = await self._read(new_only=False)
        handled = 0
        while batch[0]:
            following = self._read(new_only=True) if len(batch[0]) == BATCH else _nothing()
            handled += len(batch[0])
            batch = await _both(following, self._write(*batch))
        return handled

    async def archive_batch(self) -> int:
        """One batch on its own: take, read, write, confirm; how many entries it handled. StoreError/StoreUnavailable
        (Redis or PostgreSQL) leaves its entries to a later pass."""
        batch = await self._read(new_only=False)
        if batch[0]:
            await self._write(*batch)
        return len(batch[0])

    async def _read(self, *, new_only: bool) -> Batch:
        """A batch of entries and their races (``new_only``: the batch before is not confirmed yet, skip it)."""
        entries = await self.queue.take(BATCH, new_only=new_only)
        return entries, await self.queue.records([race_id for _, race_id in entries])

    async def _write(self, entries: list[tuple[str, str]], races: dict[str, PackedRace]) -> None:
        """Write a batch's races to the archive, then confirm its entries in Redis."""
        new = await self.archive.put_many(list(races.values()))
        self.archived += new
        metrics.archived(new)
        await self.queue.confirm(entries, list(races))
        gone = len(entries) - len(races)
        if gone:
            log.info("archiver: %d queued races were no longer in Redis (or not finished): nothing to archive", gone)

    def stop(self) -> None:
        """End :meth:`run` after the pass under way."""
        self._loop.stop()

    async def close(self) -> None:
        """Nothing to release (the pool belongs to the server)."""



async def _nothing() -> Batch:
    """No next batch (the last one came back short)."""
    return [], {}


async def _both(read: Awaitable[Batch], write: Awaitable[None]) -> Batch:
    """Run a read and a write at once and wait for both (neither is left running), then raise the write's failure,
    else the read's; the batch read."""
    taken, written = await asyncio.gather(read, write, return_exceptions=True)
    if isinstance(written, BaseException):
        raise written
    if isinstance(taken, BaseException):
        raise taken
    return taken
