"""The Redis side of the archive: the queue of finished races waiting for PostgreSQL, and their records.

A race script's result is followed by an XADD to :data:`keys.ARCHIVE_QUEUE` (:meth:`RaceStore.queue_finished`).
Each process's archiver takes entries through the consumer group (its own unconfirmed ones first, then those of a
process silent for :data:`RECLAIM_IDLE_MS`, then new ones), reads the races' keys, writes them to PostgreSQL, and
only then confirms: XACK + XDEL, and the race's keys get the cache TTL (they were kept until then). An archiver
that dies or a PostgreSQL that is down leaves the entries pending: they are taken again (at least once; the archive
keeps the first copy of a race id).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, cast

from redis.asyncio import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ResponseError

from server.store import keys
from server.store.connection import RedisClient, time_ms_at
from server.store.database import PackedRace
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments

RECLAIM_IDLE_MS = 60_000
"""An entry taken by another process and not confirmed for this long is taken over (that process died or hangs)."""


@translate_errors
class ArchiveQueue:
    """One process's end of the archive queue (``consumer``: its process id)."""

    def __init__(self, redis: RedisClient, consumer: str, *, cache_ttl_ms: int) -> None:
        """``cache_ttl_ms``: how long a race's keys stay in Redis once archived (at most: a shorter TTL is kept)."""
        self.redis = redis
        self.consumer = consumer
        self.cache_ttl_ms = cache_ttl_ms
        self._group_made = False
        self.scripts = Scripts(redis)

    async def take(self, count: int, *, new_only: bool = False) -> list[tuple[str, str]]:
        """Up to ``count`` entries (entry id, race id) to archive: this process's unconfirmed ones, else ones another
        process left unconfirmed for :data:`RECLAIM_IDLE_MS`, else new ones (``new_only``: new ones only, for a
        batch taken while the one before is still being written)."""
        await self._ensure_group()
        entries: list[Any] = []
        if not new_only:
            own: Any = await self.redis.xreadgroup(keys.ARCHIVE_GROUP, self.consumer, {keys.ARCHIVE_QUEUE: "0"}, count=count)
            entries = own[0][1] if own else []
        if not entries and not new_only:
            claimed: Any = await self.redis.xautoclaim(
                keys.ARCHIVE_QUEUE, keys.ARCHIVE_GROUP, self.consumer, RECLAIM_IDLE_MS, "0-0", count=count
            )
            entries = claimed[1]
        if not entries:
            new: Any = await self.redis.xreadgroup(keys.ARCHIVE_GROUP, self.consumer, {keys.ARCHIVE_QUEUE: ">"}, count=count)
            entries = new[0][1] if new else []
        return [(_text(entry_id), _text(fields[b"race"])) for entry_id, fields in entries if fields]

    async def _ensure_group(self) -> None:
        if self._group_made:
            return
        try:
            await self.redis.xgroup_create(keys.ARCHIVE_QUEUE, keys.ARCHIVE_GROUP, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        self._group_made = True

    async def records(self, race_ids: Sequence[str]) -> dict[str, PackedRace]:
        """The finished races among ``race_ids`` as Redis holds them, packed for their rows (a race gone or not
        finished is left out)."""
        reads = [[k[keys.STATE], k[keys.EVENTS], k[keys.MOVES_0], k[keys.MOVES_1]] for k in map(keys.race_keys, race_ids)]
        replies = await self._each(self.scripts.archive_read, [(read, []) for read in reads])
        found = {}
        for race_id, reply in zip(race_ids, replies):
            if reply:
                record, finished_ms, profile, rated = reply
                finished_at = datetime.fromtimestamp(int(finished_ms) / 1000, UTC)
                found[race_id] = PackedRace(race_id, finished_at, _text(profile), rated == b"1", bytes(record))
        return found

    async def confirm(self, entries: Sequence[tuple[str, str]], archived: Sequence[str]) -> None:
        """The ``entries`` are done: their races in ``archived`` are in PostgreSQL, so their keys get the cache TTL
        (unless theirs is shorter); then the entries leave the queue. One round trip on one Redis."""
        args = script_arguments(ttl_ms=self.cache_ttl_ms)
        calls = [(keys.race_keys(race_id), args) for race_id in archived]
        await self._each(self.scripts.archive_cached, calls, done=[entry_id for entry_id, _ in entries])

    async def _each(self, script: AsyncScript, calls: Sequence[tuple[list[str], list[bytes]]], *, done: Sequence[str] = ()) -> list[Any]:
        """One call of ``script`` per race (a race's keys share one slot), then the queue entries ``done`` acknowledged
        and deleted: all pipelined on one Redis, so a batch is one round trip; on a Cluster the calls one each,
        concurrently (each reloads its script when a node forgot it), then the entries. The scripts' replies."""
        if isinstance(self.redis, RedisCluster):
            answers = list(await asyncio.gather(*(script(keys=race_keys, args=args) for race_keys, args in calls)))
            if done:
                await self.redis.xack(keys.ARCHIVE_QUEUE, keys.ARCHIVE_GROUP, *done)
                await self.redis.xdel(keys.ARCHIVE_QUEUE, *done)
            return answers
        async with self.redis.pipeline(transaction=False) as pipe:
            for race_keys, args in calls:
                await script(keys=race_keys, args=args, client=cast(Any, pipe))  # typed for clients only; pipelines work
            if done:
                pipe.xack(keys.ARCHIVE_QUEUE, keys.ARCHIVE_GROUP, *done)
                pipe.xdel(keys.ARCHIVE_QUEUE, *done)
            replies: list[Any] = await pipe.execute()
        return replies[: len(calls)]

    async def lag(self) -> tuple[int, float]:
        """Finished races not archived yet, and the age (s) of the oldest of them (0 when none)."""
        waiting: int = await self.redis.xlen(keys.ARCHIVE_QUEUE)
        if waiting == 0:
            return 0, 0.0
        first: Any = await self.redis.xrange(keys.ARCHIVE_QUEUE, "-", "+", count=1)
        if not first:
            return 0, 0.0
        now = await time_ms_at(self.redis, keys.ARCHIVE_QUEUE)
        return waiting, max(0.0, (now - int(_text(first[0][0]).split("-")[0])) / 1000)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
