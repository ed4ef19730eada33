"""The daily deal in Redis: each day's deal, its attempts with their moves, its counted players, the archive's index
and each account's cleared days (docs/STORAGE.md "The daily deal"). Keys of one day share the hash tag
``{daily:<day>}``, so each of its scripts touches one Cluster slot.

With a database, a finished day goes to PostgreSQL (:class:`DailyArchive`, :meth:`DailyStore.archive_days`): its
deal and counted attempts are written once, then its Redis keys are kept only as a cache (a TTL) and it leaves the
Redis index and the calendars; every read of a past day falls back to the archive when Redis no longer has it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.store import keys
from server.store.connection import RedisClient, repeatable, time_ms_at
from server.store.errors import translate_errors
from server.store.race_store import StoreRefusal
from server.store.scripts import Scripts, script_arguments
from shared.daily import DAY_MS, AttemptFacts
from shared.protocol import AttemptState, Difficulty, ErrorCode


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """A day's deal as stored: the secret seed, salt and solver's line, and what is public from the day's start."""

    day: str
    seed: int
    salt: str
    """Hex."""
    line: tuple[str, ...]
    commitment: str
    profile: str
    difficulty: Difficulty | None
    time_limit_ms: int
    opens_at: int
    closes_at: int

    def fields(self) -> dict[str, str | int]:
        """The deal's hash fields."""
        return {
            "seed": str(self.seed), "salt": self.salt, "line": json.dumps(list(self.line)), "commitment": self.commitment,
            "profile": self.profile, "difficulty": "" if self.difficulty is None else self.difficulty.value,
            "time_limit_ms": self.time_limit_ms, "opens_at": self.opens_at, "closes_at": self.closes_at,
        }  # fmt: skip

    @staticmethod
    def parse(day: str, stored: Mapping[bytes, bytes]) -> DailyDeal:
        """The deal of ``day`` from its hash."""
        text = {name.decode(): value.decode() for name, value in stored.items()}
        return DailyDeal(
            day=day, seed=int(text["seed"]), salt=text["salt"], line=tuple(json.loads(text["line"])), commitment=text["commitment"],
            profile=text["profile"], difficulty=Difficulty(text["difficulty"]) if text["difficulty"] else None,
            time_limit_ms=int(text["time_limit_ms"]), opens_at=int(text["opens_at"]), closes_at=int(text["closes_at"]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class StoredAttempt:
    """One attempt as stored: whose, whether counted, its facts and its moves (with their times after its start)."""

    day: str
    attempt: str
    """Its key within the day (the wire's attempt id is ``<day>/<attempt>``)."""
    player: str
    handle: str | None
    counted: bool
    facts: AttemptFacts
    moves: tuple[str, ...]
    times: tuple[int, ...]


def _attempt(day: str, attempt: str, stored: Mapping[bytes, bytes], entries: list[bytes]) -> StoredAttempt:
    text = {name.decode(): value.decode() for name, value in stored.items()}
    moves, times = [], []
    for entry in entries:
        at, move = entry.decode().split(" ", 1)
        times.append(int(at))
        moves.append(move)
    ended = text.get("ended_at", "")
    facts = AttemptFacts(
        started_at=int(text["started_at"]), deadline=int(text["deadline"]), state=AttemptState(text["state"]),
        count=int(text.get("count", "0")), moves=len(moves), ended_at=int(ended) if ended else None,
    )  # fmt: skip
    handle = text.get("handle") or None
    return StoredAttempt(day, attempt, text["player"], handle, text.get("counted") == "1", facts, tuple(moves), tuple(times))


class DailyArchive(Protocol):
    """Where finished days go for good (PostgreSQL: :class:`server.store.daily_records_sql.PostgresDailyArchive`).
    Every method raises StoreUnavailable when the database cannot be reached."""

    async def put_day(self, deal: DailyDeal, attempts: Sequence[StoredAttempt]) -> bool:
        """Store a finished day's deal and its counted ``attempts`` once; False if it was stored already."""

    async def archived(self, days: Sequence[str]) -> set[str]:
        """The days among ``days`` that are stored."""

    async def deal(self, day: str) -> DailyDeal | None:
        """A stored day's deal."""

    async def days(self) -> dict[str, int]:
        """Every stored day and when it opened (ms)."""

    async def counted(self, day: str) -> dict[str, str]:
        """Handle (in lower case) -> attempt key of a stored day's counted attempts."""

    async def attempt(self, day: str, attempt: str) -> StoredAttempt | None:
        """A stored counted attempt with its moves."""

    async def counted_attempts(self, day: str) -> list[StoredAttempt]:
        """A stored day's counted attempts with their moves."""

    async def cleared_days(self, player: str) -> list[str]:
        """The stored days ``player``'s counted attempt cleared, in order."""


@translate_errors
class DailyStore:
    """Days, attempts and moves of the daily deal; every change of an attempt is one script (checked and atomic)."""

    def __init__(self, redis: RedisClient, *, practice_ttl_ms: int, archive: DailyArchive | None = None, cache_ttl_ms: int = DAY_MS) -> None:
        """``practice_ttl_ms``: how long an uncounted attempt (a guest's, a past day's) is kept after its start;
        ``archive``: where finished days go (None: they stay in Redis); ``cache_ttl_ms``: how long an archived day's
        keys stay in Redis."""
        self.redis = redis
        self.scripts = Scripts(redis)
        self.practice_ttl_ms = practice_ttl_ms
        self.archive = archive
        self.cache_ttl_ms = cache_ttl_ms

    @repeatable
    async def now_ms(self) -> int:
        """Redis' clock (the default clock of the daily deal)."""
        return await time_ms_at(self.redis, keys.DAILY_DAYS)

    @repeatable
    async def deal(self, day: str) -> DailyDeal | None:
        """The deal of ``day``, None if it has none."""
        stored: Any = await self.redis.hgetall(keys.daily_deal(day))
        if stored:
            return DailyDeal.parse(day, stored)
        return None if self.archive is None else await self.archive.deal(day)

    @repeatable
    async def open_day(self, deal: DailyDeal) -> DailyDeal:
        """Fix ``deal`` as its day's unless another was fixed first; the day's deal in force either way."""
        await self.scripts.daily_open(keys=[keys.daily_deal(deal.day)], args=script_arguments(fields=deal.fields()))
        await self.redis.zadd(keys.DAILY_DAYS, {deal.day: deal.opens_at})
        fixed = await self.deal(deal.day)
        assert fixed is not None
        return fixed

    @repeatable
    async def days_before(self, day: str, offset: int, limit: int) -> tuple[list[str], int]:
        """Days with a deal before ``day``, newest first (a page), and how many there are (with an archive: those of
        Redis's index and the archive's, a few hundred a year)."""
        if self.archive is not None:
            listed: Any = await self.redis.zrange(keys.DAILY_DAYS, 0, -1)
            every = sorted({*(name.decode() for name in listed), *await self.archive.days()}, reverse=True)
            before = [name for name in every if name < day]
            return before[offset : offset + limit], len(before)
        opens = await self.redis.zscore(keys.DAILY_DAYS, day)
        top = f"({int(opens)}" if opens is not None else "+inf"
        names: Any = await self.redis.zrevrangebyscore(keys.DAILY_DAYS, top, "-inf", start=offset, num=limit)
        total = int(await self.redis.zcount(keys.DAILY_DAYS, "-inf", top))
        return [name.decode() for name in names], total

    @repeatable
    async def start(self, day: str, attempt: str, *, player: str, handle: str | None, counted: bool, started_at: int, deadline: int) -> bool:
        """Open an attempt unless one of that key exists (True if this call opened it); a counted one is listed as
        ``handle``'s of the day."""
        fields = {
            "id": attempt, "player": player, "handle": handle or "", "counted": int(counted), "started_at": started_at,
            "deadline": deadline, "state": AttemptState.PLAYING.value, "count": 0, "moves": 0,
        }  # fmt: skip
        opened = await self.scripts.daily_start(
            keys=[keys.daily_attempt(day, attempt), keys.daily_counted(day)],
            args=script_arguments(fields=fields, handle=handle.lower() if counted and handle else None, ttl_ms=0 if counted else self.practice_ttl_ms),
        )
        return bool(opened)

    @repeatable
    async def attempt(self, day: str, attempt: str) -> StoredAttempt | None:
        """One attempt with its moves, None if there is none."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.daily_attempt(day, attempt))
            pipe.lrange(keys.daily_moves(day, attempt), 0, -1)
            stored, entries = await pipe.execute()
        if stored:
            return _attempt(day, attempt, stored, entries)
        return None if self.archive is None else await self.archive.attempt(day, attempt)

    async def record(
        self, day: str, attempt: str, *, player: str, seq: int | None, entry: str, count: int, ends: AttemptState | None, now: int
    ) -> int:
        """Append a move (``seq`` the moves made before it) and/or end the attempt (``ends``); the moves made after it.
        StoreRefusal ``unknown_attempt`` (not this player's), ``attempt_over`` or ``out_of_sequence`` (expected: the
        moves made)."""
        reply: Any = await self.scripts.daily_move(
            keys=[keys.daily_attempt(day, attempt), keys.daily_moves(day, attempt)],
            args=script_arguments(
                player=player, seq=seq, entry=entry, count=count, ends=None if ends is None else ends.value, now=now,
                ttl_ms=0 if attempt.startswith(COUNTED_PREFIX) else self.practice_ttl_ms,
            ),
        )  # fmt: skip
        if int(reply[0]) != 1:
            raise StoreRefusal(ErrorCode(reply[1].decode()), expected=int(reply[2]))
        return int(reply[1])

    @repeatable
    async def counted(self, day: str) -> dict[str, str]:
        """Handle (in lower case) -> attempt key of every counted attempt of ``day``."""
        stored: Any = await self.redis.hgetall(keys.daily_counted(day))
        if not stored and self.archive is not None:
            return await self.archive.counted(day)
        return {handle.decode(): attempt.decode() for handle, attempt in stored.items()}

    @repeatable
    async def counted_attempts(self, day: str) -> list[StoredAttempt]:
        """Every counted attempt of ``day`` with its moves."""
        listed = await self.counted(day)
        found = []
        for attempt in listed.values():  # one day's players: read once when the day is shown after its end
            stored = await self.attempt(day, attempt)
            if stored is not None:
                found.append(stored)
        return found

    @repeatable
    async def mark_cleared(self, player: str, day: str) -> None:
        """Remember that ``player``'s counted attempt of ``day`` cleared it (idempotent)."""
        await self.redis.sadd(keys.daily_calendar(player), day)

    @repeatable
    async def cleared_days(self, player: str) -> list[str]:
        """The days ``player``'s counted attempt cleared."""
        days: Any = await self.redis.smembers(keys.daily_calendar(player))
        archived = [] if self.archive is None else await self.archive.cleared_days(player)
        return sorted({*(day.decode() for day in days), *archived})

    async def archive_days(self, closed_by: int) -> list[str]:
        """Move the days of Redis's index that closed by ``closed_by`` (ms) to the archive: each day's deal and
        counted attempts written once (another process may have written it), then its keys get the cache TTL and
        it leaves the index and its players' calendars. The days handled; none without an archive."""
        if self.archive is None:
            return []
        names: Any = await self.redis.zrangebyscore(keys.DAILY_DAYS, "-inf", closed_by - DAY_MS)
        days = [name.decode() for name in names]
        done = await self.archive.archived(days) if days else set()
        handled = []
        for day in days:
            stored: Any = await self.redis.hgetall(keys.daily_deal(day))
            deal = DailyDeal.parse(day, stored) if stored else None
            if deal is None or deal.closes_at > closed_by:
                continue
            listed = await self.counted(day)
            if day not in done:
                attempts = [found for key in listed.values() if (found := await self.attempt(day, key)) is not None]
                await self.archive.put_day(deal, attempts)
            await self._keep_as_cache(day, list(listed.values()))
            handled.append(day)
        return handled

    async def _keep_as_cache(self, day: str, attempts: list[str]) -> None:
        """An archived day's keys get the cache TTL; it leaves the index and its counted players' calendars."""
        ttl = self.cache_ttl_ms
        async with self.redis.pipeline(transaction=False) as pipe:
            for key in (keys.daily_deal(day), keys.daily_counted(day)):
                pipe.pexpire(key, ttl)
            for attempt in attempts:
                pipe.pexpire(keys.daily_attempt(day, attempt), ttl)
                pipe.pexpire(keys.daily_moves(day, attempt), ttl)
                if attempt.startswith(COUNTED_PREFIX):
                    pipe.srem(keys.daily_calendar(attempt[len(COUNTED_PREFIX) :]), day)
            pipe.zrem(keys.DAILY_DAYS, day)
            await pipe.execute()


COUNTED_PREFIX = "c"
"""The key of a counted attempt within its day: ``c`` and the account's player id (one per account and day)."""
