"""Player sessions: a secret token (stored only as its SHA-256) -> the player id and display name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.store import keys
from server.store.connection import RedisClient, count_in_window, repeatable
from server.store.errors import translate_errors


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Who a token belongs to, and whether the session was used (took a seat) and is therefore kept long."""

    player: str
    name: str
    kept: bool = False
    account: str | None = None
    """The handle of the account the session is logged in to (None: anonymous)."""
    bot: bool = False


@translate_errors
class SessionStore:
    """A session lives ``provisional_ttl_ms`` after its last ``hello`` until it is used, then ``ttl_ms``."""

    def __init__(self, redis: RedisClient, *, ttl_ms: int = 7 * 24 * 3600 * 1000, provisional_ttl_ms: int = 3600 * 1000) -> None:
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.provisional_ttl_ms = provisional_ttl_ms

    @repeatable
    async def create(self, token: str, record: SessionRecord) -> None:
        """Store a new, provisional session."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"player": record.player, "name": record.name})
            pipe.pexpire(key, self.provisional_ttl_ms)
            await pipe.execute()

    @repeatable
    async def log_in(self, token: str, record: SessionRecord) -> None:
        """The session now plays as an account (``record``): stored for the long lifetime from now on."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(
                key,
                mapping={"player": record.player, "name": record.name, "account": record.account or "", "bot": int(record.bot), "kept": 1},
            )
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    @repeatable
    async def resume(self, token: str) -> SessionRecord | None:
        """The session of ``token`` with its lifetime renewed (the long one once kept), or None if unknown or expired."""
        key = keys.session_key(token)
        raw: dict[Any, Any] = await self.redis.hgetall(key)
        if not raw:
            return None
        record = SessionRecord(
            player=raw[b"player"].decode(),
            name=raw[b"name"].decode(),
            kept=raw.get(b"kept") == b"1",
            account=raw.get(b"account", b"").decode() or None,
            bot=raw.get(b"bot") == b"1",
        )
        await self.redis.pexpire(key, self.ttl_ms if record.kept else self.provisional_ttl_ms)
        return record

    @repeatable
    async def keep(self, token: str) -> None:
        """The session was used: keep it for the long lifetime from now on."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, "kept", 1)
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    @repeatable
    async def add_seat(self, token: str, race_id: str, at_ms: int) -> None:
        """The session took (or synced) a seat in ``race_id``; only its newest races are remembered, as long as the
        session lives."""
        key = keys.session_seats_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {race_id: at_ms})
            pipe.zremrangebyrank(key, 0, -keys.SESSION_SEATS_KEPT - 1)
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    @repeatable
    async def seat_races(self, token: str) -> list[str]:
        """The races the session took seats in (newest first), finished ones included until :meth:`forget_seats`."""
        members: list[Any] = await self.redis.zrevrange(keys.session_seats_key(token), 0, -1)
        return [member.decode() for member in members]

    @repeatable
    async def forget_seats(self, token: str, race_ids: list[str]) -> None:
        """Forget races the session no longer plays in (finished, left or expired)."""
        if race_ids:
            await self.redis.zrem(keys.session_seats_key(token), *race_ids)

    async def count_new(self, address: str, window_ms: int) -> int:
        """Count a new session of client ``address``; returns its new sessions in the current window."""
        return await count_in_window(self.redis, keys.new_sessions_key(address), window_ms)
