"""Player sessions: a secret token (stored only as its SHA-256) -> the player id and display name."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from server.store import keys
from server.store.connection import repeatable
from server.store.errors import translate_errors


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Who a token belongs to."""

    player: str
    name: str


@translate_errors
class SessionStore:
    """Sessions live ``ttl_ms`` after their last ``hello``."""

    def __init__(self, redis: Redis, *, ttl_ms: int = 7 * 24 * 3600 * 1000) -> None:
        self.redis = redis
        self.ttl_ms = ttl_ms

    @repeatable
    async def create(self, token: str, record: SessionRecord) -> None:
        """Store a new session."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"player": record.player, "name": record.name})
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    @repeatable
    async def resume(self, token: str) -> SessionRecord | None:
        """The session of ``token`` with its lifetime renewed, or None if unknown or expired."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(key)
            pipe.pexpire(key, self.ttl_ms)
            raw, _ = await pipe.execute()
        if not raw:
            return None
        return SessionRecord(player=raw[b"player"].decode(), name=raw[b"name"].decode())
