"""Player sessions: a secret token (stored only as its SHA-256) -> the player id and display name."""

from __future__ import annotations

import time
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


def _now_ms() -> int:
    return int(time.time() * 1000)


@translate_errors
class SessionStore:
    """A session lives ``provisional_ttl_ms`` after its last ``hello`` until it is used, then ``ttl_ms``; never longer
    than ``max_age_ms`` after it began (its creation, or the ``login``/``register`` that gave it its token)."""

    def __init__(
        self, redis: RedisClient, *, ttl_ms: int = 7 * 24 * 3600 * 1000, provisional_ttl_ms: int = 3600 * 1000,
        max_age_ms: int = 30 * 24 * 3600 * 1000,
    ) -> None:  # fmt: skip
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.provisional_ttl_ms = provisional_ttl_ms
        self.max_age_ms = max_age_ms

    def _lifetime(self, ttl_ms: int, since: int, now: int) -> int:
        """``ttl_ms``, cut to what is left of the absolute lifetime of a session that began at ``since``."""
        return max(1, min(ttl_ms, since + self.max_age_ms - now))

    @repeatable
    async def create(self, token: str, record: SessionRecord) -> None:
        """Store a new, provisional session."""
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={"player": record.player, "name": record.name, "since": _now_ms()})
            pipe.pexpire(key, self.provisional_ttl_ms)
            await pipe.execute()

    async def log_in(self, old_token: str, token: str, record: SessionRecord) -> None:
        """The session of ``old_token`` now plays as an account (``record``) under the fresh ``token``: stored for the
        long lifetime from now on, counted among the account's sessions, its seats carried over; the old token ends."""
        seats: list[Any] = await self.redis.zrange(keys.session_seats_key(old_token), 0, -1, withscores=True)
        key = keys.session_key(token)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(
                key,
                mapping={
                    "player": record.player, "name": record.name, "account": record.account or "", "bot": int(record.bot),
                    "kept": 1, "since": _now_ms(),
                },
            )  # fmt: skip
            pipe.pexpire(key, self.ttl_ms)
            if seats:
                pipe.zadd(keys.session_seats_key(token), dict(seats))
                pipe.pexpire(keys.session_seats_key(token), self.ttl_ms)
            pipe.sadd(keys.account_sessions_key(record.player), keys.token_digest(token))
            pipe.pexpire(keys.account_sessions_key(record.player), self.max_age_ms)
            pipe.delete(keys.session_key(old_token), keys.session_seats_key(old_token))
            await pipe.execute()

    async def end(self, token: str, player: str) -> None:
        """End the session of ``token`` (player ``player``): its token stops working."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(keys.session_key(token), keys.session_seats_key(token))
            pipe.srem(keys.account_sessions_key(player), keys.token_digest(token))
            await pipe.execute()

    async def end_others(self, player: str, keep_token: str) -> int:
        """End every session of the account of ``player`` but the one of ``keep_token``; how many ended."""
        index = keys.account_sessions_key(player)
        keep = keys.token_digest(keep_token)
        digests = [member.decode() if isinstance(member, bytes) else str(member) for member in await self.redis.smembers(index)]
        others = [digest for digest in digests if digest != keep]
        async with self.redis.pipeline(transaction=False) as pipe:
            for digest in others:
                pipe.delete(keys.session_key_of(digest), keys.session_seats_key_of(digest))
            if others:
                pipe.srem(index, *others)
            ended: list[Any] = await pipe.execute()
        return sum(int(count) > 0 for count in ended[: len(others)])

    @repeatable
    async def resume(self, token: str) -> SessionRecord | None:
        """The session of ``token`` with its lifetime renewed (the long one once kept, never past its absolute
        lifetime), or None if unknown, ended or expired."""
        key = keys.session_key(token)
        raw: dict[Any, Any] = await self.redis.hgetall(key)
        if not raw:
            return None
        now = _now_ms()
        if b"since" not in raw:  # stored before sessions had an absolute lifetime: it runs from now
            await self.redis.hsetnx(key, "since", now)
        since = int(raw.get(b"since", now))
        if now - since >= self.max_age_ms:
            await self.redis.delete(key, keys.session_seats_key(token))
            return None
        record = SessionRecord(
            player=raw[b"player"].decode(),
            name=raw[b"name"].decode(),
            kept=raw.get(b"kept") == b"1",
            account=raw.get(b"account", b"").decode() or None,
            bot=raw.get(b"bot") == b"1",
        )
        await self.redis.pexpire(key, self._lifetime(self.ttl_ms if record.kept else self.provisional_ttl_ms, since, now))
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
