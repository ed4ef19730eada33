"""The quick-match queues in Redis: one sorted set per settings key, paired atomically by a Lua script.

A waiting player's entry is ``<race id>:<player id>`` (the unlisted race it
waits in) scored by its owner's last heartbeat; entries not refreshed for the
staleness period (their server process went away) are dropped by the next
pairing in that queue. A player has at most one entry (``players`` hash).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from server.store import keys
from server.store.connection import RedisClient, repeatable
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """Where a player waits: its queue (settings key) and its race."""

    settings_key: str
    race_id: str
    player: str

    @property
    def member(self) -> str:
        """The entry's member in its queue."""
        return f"{self.race_id}:{self.player}"


@dataclass(frozen=True, slots=True)
class Partner:
    """A waiting player taken off the queue by a pairing: join its race."""

    race_id: str
    player: str


@translate_errors
class QuickMatchStore:
    """Queues of players waiting for an opponent with the same settings."""

    def __init__(self, redis: RedisClient, *, stale_ms: int) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)
        self.stale_ms = stale_ms

    async def pair_or_wait(
        self,
        settings_key: str,
        player: str,
        race_id: str | None,
        *,
        rating: float | None = None,
        waiting: bool = False,
        window: tuple[int, int, int, int] = (0, 0, 1, 0),
    ) -> Partner | None:
        """Take the waiting partner for these settings, if any; else queue ``race_id`` (when given) and return None.

        Rated queues (``rating`` given) pair the closest rating within ``window`` (base points, points per step, step
        ms, wait ms after which any rating pairs) of the longer wait, and avoid repeating a player's last pairing;
        ``waiting``: the player already waits in ``race_id`` (a later attempt: never queued twice; when paired, its own
        entry leaves the queue too).
        """
        result: list[Any] = await self.scripts.quick_match(
            keys=[keys.quick_match_queue(settings_key), keys.QUICK_MATCH_PLAYERS, keys.QUICK_MATCH_RATINGS, keys.QUICK_MATCH_LAST],
            args=script_arguments(
                player=player, race=race_id or None, settings_key=settings_key, stale_ms=self.stale_ms,
                rating=None if rating is None else repr(rating), waiting=waiting, window_base=window[0], window_points=window[1],
                window_step_ms=window[2], window_any_ms=window[3],
            ),
        )
        if result[0] == 1:
            return Partner(race_id=result[1].decode(), player=result[2].decode())
        return None

    @repeatable
    async def entry_of(self, player: str) -> QueueEntry | None:
        """The player's queue entry, if it has one."""
        value: Any = await self.redis.hget(keys.QUICK_MATCH_PLAYERS, player)
        if value is None:
            return None
        settings_key, member = value.decode().split("|", 1)
        race_id = member.split(":", 1)[0]
        return QueueEntry(settings_key=settings_key, race_id=race_id, player=player)

    async def cancel(self, entry: QueueEntry) -> bool:
        """Remove a waiting entry; False if it was paired (or dropped) meanwhile."""
        removed = await self.scripts.quick_match_cancel(
            keys=[keys.quick_match_queue(entry.settings_key), keys.QUICK_MATCH_PLAYERS, keys.QUICK_MATCH_RATINGS],
            args=script_arguments(player=entry.player, settings_key=entry.settings_key, member=entry.member),
        )
        return bool(removed)

    async def requeue(self, entry: QueueEntry, *, rating: float | None, queued_at: int) -> bool:
        """Queue ``entry`` again (its race waits again after a pairing fell through), its wait counted from
        ``queued_at``; False if the player holds another entry already (it asked again meanwhile)."""
        queued = await self.scripts.quick_match_requeue(
            keys=[keys.quick_match_queue(entry.settings_key), keys.QUICK_MATCH_PLAYERS, keys.QUICK_MATCH_RATINGS],
            args=script_arguments(
                player=entry.player, member=entry.member, settings_key=entry.settings_key,
                rating=None if rating is None else repr(rating), queued_at=queued_at,
            ),
        )
        return bool(queued)

    @repeatable
    async def crowded(self, settings_keys: Iterable[str]) -> set[str]:
        """The settings keys whose queue holds more than one entry (two players wait who could be paired)."""
        wanted = list(settings_keys)
        async with self.redis.pipeline(transaction=False) as pipe:
            for settings_key in wanted:
                pipe.zcard(keys.quick_match_queue(settings_key))
            counts: list[int] = await pipe.execute()
        return {settings_key for settings_key, count in zip(wanted, counts) if count > 1}

    @repeatable
    async def heartbeat(self, entries: Iterable[QueueEntry], now_ms: int) -> None:
        """Refresh entries whose owner is still connected (entries no longer queued stay out)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for entry in entries:
                pipe.zadd(keys.quick_match_queue(entry.settings_key), {entry.member: now_ms}, xx=True)
            await pipe.execute()
