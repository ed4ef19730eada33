"""Player sessions: a secret token (stored only as its SHA-256) -> the player id and display name.

:class:`SessionStore` is what the services may rely on; :class:`RedisSessionStore` keeps sessions in Redis (the
server's), :class:`MemorySessionStore` in a dict (the test double of the unit tier). tests/test_session_store_contract.py
holds both to the same promises.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

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


def lifetime(ttl_ms: int, left_ms: int) -> int:
    """A session's next lifetime: ``ttl_ms``, cut to the ``left_ms`` left of its absolute lifetime (at least 1 ms)."""
    return max(1, min(ttl_ms, left_ms))


DEFAULT_TTL_MS = 7 * 24 * 3600 * 1000
DEFAULT_PROVISIONAL_TTL_MS = 3600 * 1000
DEFAULT_MAX_AGE_MS = 30 * 24 * 3600 * 1000


class SessionStore(Protocol):
    """Where sessions live: a session lives ``provisional_ttl_ms`` after its last ``hello`` until it is used, then
    ``ttl_ms``; never longer than ``max_age_ms`` after it began (its creation, or the ``login``/``register`` that gave
    it its token). StoreUnavailable when the store cannot be reached."""

    async def create(self, token: str, record: SessionRecord) -> None:
        """Store a new, provisional session (anonymous: only the record's player and name are kept)."""

    async def log_in(self, old_token: str, token: str, record: SessionRecord) -> None:
        """The session of ``old_token`` now plays as an account (``record``) under the fresh ``token``: stored for the
        long lifetime from now on, counted among the account's sessions, its seats carried over; the old token ends."""

    async def end(self, token: str, player: str) -> None:
        """End the session of ``token`` (player ``player``): its token stops working."""

    async def end_others(self, player: str, keep_token: str) -> int:
        """End every session of the account of ``player`` but the one of ``keep_token``; how many ended."""

    async def resume(self, token: str) -> SessionRecord | None:
        """The session of ``token`` with its lifetime renewed (the long one once kept, never past its absolute
        lifetime), or None if unknown, ended or expired."""

    async def keep(self, token: str) -> None:
        """The session was used: keep it for the long lifetime from now on."""

    async def add_seat(self, token: str, race_id: str, at_ms: int) -> None:
        """The session took (or synced) a seat in ``race_id`` at ``at_ms``; only its newest
        :data:`~server.store.keys.SESSION_SEATS_KEPT` races are remembered, as long as the session lives."""

    async def seat_races(self, token: str) -> list[str]:
        """The races the session took seats in (newest first), finished ones included until :meth:`forget_seats`."""

    async def forget_seats(self, token: str, race_ids: list[str]) -> None:
        """Forget races the session no longer plays in (finished, left or expired)."""

    async def count_new(self, address: str, window_ms: int) -> int:
        """Count a new session of client ``address``; returns its new sessions in the current window (a fixed window
        that starts with its first session)."""


@translate_errors
class RedisSessionStore:
    """:class:`SessionStore` in Redis: a hash per token digest with a Redis expiry, a sorted set of its seats, a set
    of the account's token digests. A session lives ``provisional_ttl_ms`` after its last ``hello`` until it is used, then ``ttl_ms``; never longer
    than ``max_age_ms`` after it began (its creation, or the ``login``/``register`` that gave it its token)."""

    def __init__(
        self, redis: RedisClient, *, ttl_ms: int = DEFAULT_TTL_MS, provisional_ttl_ms: int = DEFAULT_PROVISIONAL_TTL_MS,
        max_age_ms: int = DEFAULT_MAX_AGE_MS,
    ) -> None:  # fmt: skip
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.provisional_ttl_ms = provisional_ttl_ms
        self.max_age_ms = max_age_ms

    def _lifetime(self, ttl_ms: int, since: int, now: int) -> int:
        """``ttl_ms``, cut to what is left of the absolute lifetime of a session that began at ``since``."""
        return lifetime(ttl_ms, since + self.max_age_ms - now)

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


@dataclass(slots=True)
class _MemorySession:
    """One session of :class:`MemorySessionStore`: its record, when it began, when it expires, its seats by time."""

    record: SessionRecord
    since: int
    expires_at: int
    seats: dict[str, int] = field(default_factory=dict)


def _newest_first(seats: dict[str, int]) -> list[str]:
    """Seated races newest first, as Redis orders a sorted set read in reverse (ties: the greater id first)."""
    return [race for race, _ in sorted(seats.items(), key=lambda seat: (seat[1], seat[0]), reverse=True)]


class MemorySessionStore:
    """:class:`SessionStore` in a dict, for tests of the services and handlers alone (the unit tier): the same
    promises as :class:`RedisSessionStore`, lifetimes included (an expired session is gone at its next read).

    Keyed by the token itself (nothing outlives the process); the seats expire with their session.
    """

    def __init__(
        self, *, ttl_ms: int = DEFAULT_TTL_MS, provisional_ttl_ms: int = DEFAULT_PROVISIONAL_TTL_MS, max_age_ms: int = DEFAULT_MAX_AGE_MS,
    ) -> None:  # fmt: skip
        self.ttl_ms = ttl_ms
        self.provisional_ttl_ms = provisional_ttl_ms
        self.max_age_ms = max_age_ms
        self.sessions: dict[str, _MemorySession] = {}
        self.accounts: dict[str, set[str]] = {}
        """The tokens of each account's player (:meth:`end_others`)."""
        self.windows: dict[str, tuple[int, int]] = {}
        """Each client address's count of new sessions and when its window ends."""

    def _live(self, token: str) -> _MemorySession | None:
        """The session of ``token`` unless it expired (then forgotten)."""
        session = self.sessions.get(token)
        if session is not None and session.expires_at <= _now_ms():
            del self.sessions[token]
            return None
        return session

    async def create(self, token: str, record: SessionRecord) -> None:
        """See :meth:`SessionStore.create`."""
        now = _now_ms()
        self.sessions[token] = _MemorySession(SessionRecord(record.player, record.name), now, now + self.provisional_ttl_ms)

    async def log_in(self, old_token: str, token: str, record: SessionRecord) -> None:
        """See :meth:`SessionStore.log_in`."""
        old = self._live(old_token)
        now = _now_ms()
        kept = SessionRecord(record.player, record.name, kept=True, account=record.account or None, bot=record.bot)
        self.sessions[token] = _MemorySession(kept, now, now + self.ttl_ms, dict(old.seats) if old is not None else {})
        self.accounts.setdefault(record.player, set()).add(token)
        self.sessions.pop(old_token, None)

    async def end(self, token: str, player: str) -> None:
        """See :meth:`SessionStore.end`."""
        self.sessions.pop(token, None)
        self.accounts.get(player, set()).discard(token)

    async def end_others(self, player: str, keep_token: str) -> int:
        """See :meth:`SessionStore.end_others`."""
        others = self.accounts.get(player, set()) - {keep_token}
        ended = sum(self._live(token) is not None for token in others)
        for token in others:
            self.sessions.pop(token, None)
        self.accounts[player] = self.accounts.get(player, set()) & {keep_token}
        return ended

    async def resume(self, token: str) -> SessionRecord | None:
        """See :meth:`SessionStore.resume`."""
        session = self._live(token)
        if session is None:
            return None
        now = _now_ms()
        if now - session.since >= self.max_age_ms:
            del self.sessions[token]
            return None
        ttl_ms = self.ttl_ms if session.record.kept else self.provisional_ttl_ms
        session.expires_at = now + lifetime(ttl_ms, session.since + self.max_age_ms - now)
        return session.record

    async def keep(self, token: str) -> None:
        """See :meth:`SessionStore.keep`."""
        session = self._live(token)
        if session is not None:
            session.record = replace(session.record, kept=True)
            session.expires_at = _now_ms() + self.ttl_ms

    async def add_seat(self, token: str, race_id: str, at_ms: int) -> None:
        """See :meth:`SessionStore.add_seat`."""
        session = self._live(token)
        if session is not None:
            session.seats[race_id] = at_ms
            session.seats = {race: session.seats[race] for race in _newest_first(session.seats)[: keys.SESSION_SEATS_KEPT]}

    async def seat_races(self, token: str) -> list[str]:
        """See :meth:`SessionStore.seat_races`."""
        session = self._live(token)
        return _newest_first(session.seats) if session is not None else []

    async def forget_seats(self, token: str, race_ids: list[str]) -> None:
        """See :meth:`SessionStore.forget_seats`."""
        session = self._live(token)
        if session is not None:
            for race_id in race_ids:
                session.seats.pop(race_id, None)

    async def count_new(self, address: str, window_ms: int) -> int:
        """See :meth:`SessionStore.count_new`."""
        now = _now_ms()
        count, ends_at = self.windows.get(address, (0, now + window_ms))
        if ends_at <= now:
            count, ends_at = 0, now + window_ms
        self.windows[address] = (count + 1, ends_at)
        return count + 1
