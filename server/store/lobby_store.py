"""The lobby in Redis: the list of open races, its change feed, invite codes and the owners' heartbeats.

These keys live outside the races' hash tags (one ``{lobby}`` tag for all of
them), so the lobby is written by the services next to each race script, as
the timer index is: the race script first, then the lobby script. Every lobby
script is atomic and idempotent; a lost update is repaired by the heartbeat
sweep (docs/STORAGE.md "Lobby").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgpack

from server.store import keys
from server.store.connection import RedisClient, repeatable, time_ms_at
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments
from shared.protocol import LobbyOp


@dataclass(frozen=True, slots=True)
class InviteLimits:
    """How many wrong invite codes may be sent (docs/PROTOCOL.md "Invite codes"): per player, per source (an IPv4
    address or an IPv6 /64) with a lockout that doubles each time, and by everybody together, per window."""

    window_ms: int = 60_000
    per_player: int = 20
    per_source: int = 20
    overall: int = 600
    first_lockout_ms: int = 60_000
    longest_lockout_ms: int = 3_600_000
    strikes_kept_ms: int = 24 * 3_600_000
    """How long a source's lockouts count for the next one's length."""
    overall_delay_ms: int = 2_000
    """Past ``overall`` misses of everybody in a window, every guess waits this long before its code is looked up (a
    right code too, never refused: someone else's misses cannot keep it out)."""


class GuessLimit(StrEnum):
    """The invite guessing limit that refused a guess (lua/invite_attempt.lua)."""

    PLAYER = "player"
    SOURCE = "source"
    """The source address: locked out, or its window's misses spent."""


@dataclass(frozen=True, slots=True)
class InviteRefusal:
    """Why a guess was refused: the ``limit`` reached and when to try again."""

    limit: GuessLimit
    retry_after_ms: int


@dataclass(frozen=True, slots=True)
class LobbyChange:
    """One entry of the lobby feed: what changed (``op``) for which race."""

    feed_id: str
    op: LobbyOp
    race: str
    entry: dict[str, Any] | None
    """The race's lobby entry as stored (None for a removal)."""
    at: int
    """Redis time of the change (ms), from the feed id."""


def _change(entry_id: bytes, fields: dict[bytes, bytes]) -> LobbyChange:
    feed_id = entry_id.decode()
    raw = fields.get(b"entry")
    return LobbyChange(
        feed_id=feed_id,
        op=LobbyOp(fields[b"op"].decode()),
        race=fields[b"race"].decode(),
        entry=None if raw is None else msgpack.unpackb(raw, raw=False),
        at=int(feed_id.split("-")[0]),
    )


@translate_errors
class LobbyStore:
    """Open races (listed or private) and the lobby list; ``max_listed`` bounds the list."""

    def __init__(self, redis: RedisClient, *, max_listed: int = 500, feed_length: int = 1000) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)
        self.max_listed = max_listed
        self.feed_length = feed_length

    @repeatable
    async def open(self, race_id: str, entry: dict[str, Any] | None, created_at: int) -> bool:
        """A race waits for an opponent (listed with ``entry``, or unlisted with None); False if the list is full."""
        packed = b"" if entry is None else msgpack.packb(entry, use_bin_type=True)
        args = script_arguments(
            race=race_id, listed=entry is not None, entry=packed, created_at=created_at, max_listed=self.max_listed, feed_length=self.feed_length
        )
        return bool(await self.scripts.lobby_open(keys=keys.lobby_keys(), args=args))

    @repeatable
    async def change(self, race_id: str, entry: dict[str, Any]) -> bool:
        """Replace a listed race's entry (and tell the watchers); False if it is not listed."""
        packed = msgpack.packb(entry, use_bin_type=True)
        return bool(await self.scripts.lobby_change(keys=keys.lobby_keys(), args=script_arguments(race=race_id, entry=packed, feed_length=self.feed_length)))

    @repeatable
    async def close(self, race_id: str, invite: str | None = None) -> bool:
        """The race is no longer open: out of the list and the heartbeat index, its invite freed; True if it was listed."""
        return bool(await self.scripts.lobby_close(keys=keys.lobby_keys(invite), args=script_arguments(race=race_id, feed_length=self.feed_length)))

    @repeatable
    async def snapshot(self) -> tuple[str, list[dict[str, Any]]]:
        """The id of the latest change and the listed entries, oldest race first, read at one instant."""
        result: list[Any] = await self.scripts.lobby_snapshot(keys=keys.lobby_keys(), args=script_arguments(max_entries=self.max_listed))
        last, *entries = result
        return last.decode(), [msgpack.unpackb(raw, raw=False) for raw in entries]

    @repeatable
    async def heartbeat(self, race_ids: Iterable[str]) -> None:
        """Races whose owner is still connected: refresh their heartbeat (only those still in the index)."""
        race_ids = list(race_ids)
        if not race_ids:
            return
        now = await self.now_ms()
        await self.redis.zadd(keys.LOBBY_ALIVE, {race_id: now for race_id in race_ids}, xx=True)

    @repeatable
    async def stale(self, older_than_ms: int, limit: int = 100) -> list[str]:
        """Open races whose heartbeat is older than ``older_than_ms`` (their owner's process went away)."""
        raw: list[Any] = await self.redis.zrangebyscore(keys.LOBBY_ALIVE, "-inf", f"({older_than_ms}", start=0, num=limit)
        return [item.decode() for item in raw]

    # --- invite codes ---------------------------------------------------------------------------

    async def claim_invite(self, code: str, race_id: str, ttl_ms: int) -> bool:
        """Reserve ``code`` for ``race_id``; False if another race holds it."""
        return bool(await self.redis.set(keys.invite_key(code), race_id, nx=True, px=ttl_ms))

    @repeatable
    async def release_invite(self, code: str) -> None:
        """Free a code whose race was never created."""
        await self.redis.delete(keys.invite_key(code))

    @repeatable
    async def race_of_invite(self, code: str) -> str | None:
        """The open race an invite code belongs to."""
        value: Any = await self.redis.get(keys.invite_key(code))
        return None if value is None else value.decode()

    async def invite_attempt(self, player: str, source: str, limits: InviteLimits) -> InviteRefusal | int:
        """Count a guess of ``player`` from ``source`` as a miss, unless a limit refuses it (then nothing is counted);
        when counted, the ms to wait before looking its code up (0 unless everybody's misses passed the overall limit)."""
        result: list[Any] = await self.scripts.invite_attempt(
            keys=keys.invite_guard_keys(player, source),
            args=script_arguments(
                window_ms=limits.window_ms, per_player=limits.per_player, per_source=limits.per_source, overall=limits.overall,
                first_lockout_ms=limits.first_lockout_ms, longest_lockout_ms=limits.longest_lockout_ms,
                strikes_kept_ms=limits.strikes_kept_ms, overall_delay_ms=limits.overall_delay_ms,
            ),
        )  # fmt: skip
        if result[0] == 1:
            return int(result[1])
        return InviteRefusal(limit=GuessLimit(result[2].decode()), retry_after_ms=int(result[3]))

    async def invite_refund(self, player: str, source: str) -> None:
        """The guess counted by :meth:`invite_attempt` named an open race's code: it was no miss."""
        await self.scripts.invite_refund(keys=keys.invite_guard_keys(player, source), args=script_arguments())

    @repeatable
    async def now_ms(self) -> int:
        """Redis' clock (on a Cluster: the lobby's node, which compares the heartbeats)."""
        return await time_ms_at(self.redis, keys.LOBBY_ALIVE)


@translate_errors
class LobbyFeedReader:
    """Blocking reads of the lobby feed on a dedicated connection (XREAD BLOCK stays below its socket timeout)."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis

    async def latest_id(self) -> str:
        """The id of the feed's latest change ('0-0' when empty): where a new reader starts."""
        entries: Any = await self.redis.xrevrange(keys.LOBBY_FEED, count=1)
        return entries[0][0].decode() if entries else "0-0"

    async def read(self, after_id: str, block_ms: int) -> list[LobbyChange]:
        """Changes after ``after_id``, waiting up to ``block_ms`` for one."""
        response = await self.redis.xread({keys.LOBBY_FEED: after_id}, block=block_ms, count=500)
        items: Sequence[Any] = list(response.items()) if isinstance(response, dict) else (response or [])
        return [_change(entry_id, fields) for _key, entries in items for entry_id, fields in entries]
