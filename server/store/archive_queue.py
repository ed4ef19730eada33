"""The Redis side of the archive: the queue of finished races waiting for PostgreSQL, and their records.

A race script's result is followed by an XADD to :data:`keys.ARCHIVE_QUEUE` (:meth:`RaceStore.queue_finished`).
Each process's archiver takes entries through the consumer group (its own unconfirmed ones first, then those of a
process silent for :data:`RECLAIM_IDLE_MS`, then new ones), reads the races' keys, writes them to PostgreSQL, and
only then confirms: XACK + XDEL, and the race's keys get the cache TTL (they were kept until then). An archiver
that dies or a PostgreSQL that is down leaves the entries pending: they are taken again (at least once; the archive
keeps the first copy of a race id).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.exceptions import ResponseError

from server.store import keys
from server.store.connection import RedisClient, time_ms_at
from server.store.database import ArchivedRace
from server.store.errors import translate_errors

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

    async def take(self, count: int) -> list[tuple[str, str]]:
        """Up to ``count`` entries (entry id, race id) to archive: this process's unconfirmed ones, else ones another
        process left unconfirmed for :data:`RECLAIM_IDLE_MS`, else new ones."""
        await self._ensure_group()
        own: Any = await self.redis.xreadgroup(keys.ARCHIVE_GROUP, self.consumer, {keys.ARCHIVE_QUEUE: "0"}, count=count)
        entries = own[0][1] if own else []
        if not entries:
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

    async def records(self, race_ids: Sequence[str]) -> dict[str, ArchivedRace]:
        """The finished races among ``race_ids`` as Redis holds them (a race gone or not finished is left out)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for race_id in race_ids:
                race_keys = keys.race_keys(race_id)
                pipe.hgetall(race_keys[keys.STATE])
                pipe.lrange(race_keys[keys.MOVES_0], 0, -1)
                pipe.lrange(race_keys[keys.MOVES_1], 0, -1)
                pipe.xrange(race_keys[keys.EVENTS], "-", "+")
            replies: list[Any] = await pipe.execute()
        found = {}
        for index, race_id in enumerate(race_ids):
            state_raw, moves_0, moves_1, events = replies[4 * index : 4 * index + 4]
            state = {_text(key): _text(value) for key, value in state_raw.items()}
            if state.get("status") != "finished":
                continue
            found[race_id] = ArchivedRace(
                race_id,
                state,
                (tuple(_text(m) for m in moves_0), tuple(_text(m) for m in moves_1)),
                tuple((int(_text(entry_id).split("-")[1]), bytes(fields[b"e"])) for entry_id, fields in events),
            )
        return found

    async def confirm(self, entries: Sequence[tuple[str, str]], archived: Sequence[str]) -> None:
        """The ``entries`` are done: their races in ``archived`` are in PostgreSQL, so their keys get the cache TTL
        (unless theirs is shorter); then the entries leave the queue."""
        race_keys = [key for race_id in archived for key in keys.race_keys(race_id)]
        if race_keys:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in race_keys:
                    pipe.pttl(key)
                ttls: list[int] = await pipe.execute()
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, ttl in zip(race_keys, ttls):
                    if ttl == -1 or ttl > self.cache_ttl_ms:  # -1: kept for ever (a rated record); -2: no such key
                        pipe.pexpire(key, self.cache_ttl_ms)
                await pipe.execute()
        if entries:
            ids = [entry_id for entry_id, _ in entries]
            await self.redis.xack(keys.ARCHIVE_QUEUE, keys.ARCHIVE_GROUP, *ids)
            await self.redis.xdel(keys.ARCHIVE_QUEUE, *ids)

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
