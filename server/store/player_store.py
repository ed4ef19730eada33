"""Accounts, ratings, leaderboards, histories and stats in Redis (keys under the ``{players}`` hash tag).

The store holds plain records; password hashing, Glicko-2 and what a finished
race means for each player are the services' business. A finished race is
booked by one script (``book_race.lua``) that takes it off the pending set, so it
is booked once whichever processes try.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import translate_errors
from server.store.scripts import Scripts, script_arguments
from shared.protocol import Outcome


@dataclass(frozen=True, slots=True)
class AccountRecord:
    """A registered account: its handle as registered, player id, kind and the salted slow hash of its secret."""

    handle: str
    player: str
    bot: bool
    secret_hash: str
    """Hex of the derived key."""
    salt: str
    """Hex of the random salt."""
    kdf: str
    """How the hash was derived, e.g. ``scrypt:n=16384,r=8,p=1,len=32`` (so parameters can change later)."""
    created_at: int


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A player's Glicko-2 state of one profile, at full precision."""

    rating: float
    deviation: float
    volatility: float
    games: int
    last_at: int
    """When the last rated race finished (ms): the deviation grows from then on."""


@dataclass(frozen=True, slots=True)
class SeatBooking:
    """What a finished race changes for one registered player."""

    player: str
    handle: str
    bot: bool
    profile: str
    item: dict[str, Any]
    """The history item (a HistoryItem map)."""
    outcome: Outcome
    """``won``, ``lost`` or ``draw``."""
    cleared: bool
    time_ms: int
    count: int
    rating: StoredRating | None = None
    """The new rating, for rated races."""
    provisional: bool = True


def seat_arguments(seat: SeatBooking) -> dict[str, Any]:
    """One seat's map in book_race.lua's ``seats`` argument (every ``seat.<name>`` the script reads)."""
    rating = seat.rating
    return {
        "player": seat.player,
        "rate": int(rating is not None),
        "rating": repr(rating.rating) if rating else 0,  # repr: every digit (Lua would print 14)
        "deviation": repr(rating.deviation) if rating else 0,
        "volatility": repr(rating.volatility) if rating else 0,
        "last_at": rating.last_at if rating else 0,
        "provisional": int(seat.provisional),
        "handle": seat.handle,
        "bot": int(seat.bot),
        "item": msgpack.packb(seat.item, use_bin_type=True),
        "outcome": seat.outcome.value,
        "cleared": int(seat.cleared),
        "clear_ms": seat.time_ms,
        "count": seat.count,
    }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _decoded(raw: Mapping[Any, Any]) -> dict[str, str]:
    return {_text(key): _text(value) for key, value in raw.items()}


@translate_errors
class PlayerStore:
    """Reads and writes everything about registered players."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self.scripts = Scripts(redis)

    # --- accounts ------------------------------------------------------------------------------

    async def register(self, account: AccountRecord) -> bool:
        """Store a new account; False if its handle (in any case) is taken."""
        fields: dict[str, str | int] = {
            "handle": account.handle,
            "player": account.player,
            "bot": int(account.bot),
            "secret_hash": account.secret_hash,
            "salt": account.salt,
            "kdf": account.kdf,
            "created_at": account.created_at,
        }
        created = await self.scripts.account_register(
            keys=[keys.account_key(account.handle), keys.PLAYERS_BY_ID],
            args=script_arguments(player=account.player, handle=account.handle.lower(), fields=fields),
        )
        return bool(created)

    async def account(self, handle: str) -> AccountRecord | None:
        """The account of ``handle`` (any case), if registered."""
        raw = _decoded(await self.redis.hgetall(keys.account_key(handle)))
        if not raw:
            return None
        return AccountRecord(
            handle=raw["handle"],
            player=raw["player"],
            bot=raw["bot"] == "1",
            secret_hash=raw["secret_hash"],
            salt=raw["salt"],
            kdf=raw["kdf"],
            created_at=int(raw["created_at"]),
        )

    async def count_login_failure(self, handle: str, window_ms: int) -> int:
        """Count a failed login to ``handle`` (registered or not) in the current window; the failures so far."""
        return await self._count(keys.login_failures_key(handle), window_ms)

    async def count_registration(self, address: str, window_ms: int) -> int:
        """Count a registration from client ``address`` in the current window; the registrations so far."""
        return await self._count(keys.registrations_key(address), window_ms)

    async def _count(self, key: str, window_ms: int) -> int:
        """INCR a counter whose window starts with its first count."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.pttl(key)
            count, ttl = await pipe.execute()
        if int(ttl) < 0:
            await self.redis.pexpire(key, window_ms)
        return int(count)

    async def login_failures(self, handle: str) -> int:
        """Failed logins to ``handle`` in the current window."""
        value = await self.redis.get(keys.login_failures_key(handle))
        return 0 if value is None else int(value)

    # --- ratings ------------------------------------------------------------------------------

    async def ratings(self, profile: str, players: Sequence[str]) -> list[StoredRating | None]:
        """Each player's rating of ``profile`` (None: never rated)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hgetall(keys.rating_key(profile, player))
            raws: list[Any] = await pipe.execute()
        return [_rating(_decoded(raw)) if raw else None for raw in raws]

    async def begin_rated(self, race_id: str, players: Sequence[str], ttl_ms: int) -> str | None:
        """Claim the players for a rated race (one rated race per player at a time); None when claimed, else the
        rated race that holds one of them."""
        result: list[Any] = await self.scripts.rated_begin(keys=[keys.rated_busy_key(player) for player in players], args=script_arguments(race=race_id, ttl_ms=ttl_ms))
        return None if result[0] == 1 else _text(result[1])

    async def rated_claim(self, player: str) -> str | None:
        """The rated race that claims ``player`` (it may be over: see :meth:`PlayerBooks.rated_race_of`), or None."""
        held = await self.redis.get(keys.rated_busy_key(player))
        return None if held is None else _text(held)

    async def end_rated(self, race_id: str, players: Sequence[str]) -> None:
        """Release the claims of a rated race that will not be booked (it never started, or its record expired)."""
        await self.scripts.rated_end(keys=[keys.rated_busy_key(player) for player in players], args=script_arguments(race=race_id))

    # --- finished races ---------------------------------------------------------------------------

    async def track(self, race_id: str, start_at: int) -> None:
        """Remember to book the race's result for its registered players."""
        await self.redis.zadd(keys.PLAYERS_PENDING, {race_id: start_at})

    async def pending(self, limit: int = 200) -> list[str]:
        """Races waiting to be booked, oldest start first."""
        raw: list[Any] = await self.redis.zrange(keys.PLAYERS_PENDING, 0, limit - 1)
        return [_text(item) for item in raw]

    async def untrack(self, race_id: str) -> None:
        """Forget a pending race that will never finish (closed or expired)."""
        await self.redis.zrem(keys.PLAYERS_PENDING, race_id)

    async def book(self, race_id: str, finished_at: int, profile: str, seats: Sequence[SeatBooking]) -> bool:
        """Book a finished race once; False if it was booked already (by this or another process)."""
        script_keys = [keys.PLAYERS_PENDING, keys.leaderboard_key(profile)]
        booked: list[dict[str, Any]] = []
        for seat in seats:
            script_keys += [
                keys.rating_key(profile, seat.player),
                keys.history_key(seat.player),
                keys.history_items_key(seat.player),
                keys.stats_key(seat.player, profile),
                keys.rated_busy_key(seat.player),
            ]
            booked.append(seat_arguments(seat))
        args = script_arguments(race=race_id, finished_at=finished_at, seats=booked)
        return bool(await self.scripts.book_race(keys=script_keys, args=args))

    # --- reads --------------------------------------------------------------------------------

    async def leaderboard(self, profile: str, offset: int, limit: int) -> tuple[list[tuple[str, dict[str, str]]], int]:
        """Players ``offset`` to ``offset + limit`` by rating, best first, with their rating hashes; and the board's size."""
        board = keys.leaderboard_key(profile)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(board, offset, offset + limit - 1)
            pipe.zcard(board)
            members, total = await pipe.execute()
        players = [_text(member) for member in members]
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hgetall(keys.rating_key(profile, player))
            raws: list[Any] = await pipe.execute()
        return [(player, _decoded(raw)) for player, raw in zip(players, raws)], int(total)

    async def rank_of(self, profile: str, player: str) -> int | None:
        """The player's 0-based leaderboard rank (None when not on it)."""
        rank: Any = await self.redis.zrevrank(keys.leaderboard_key(profile), player)
        return None if rank is None else int(rank)

    async def rating_fields(self, profile: str, player: str) -> dict[str, str]:
        """The player's rating hash of ``profile`` (empty: never rated)."""
        return _decoded(await self.redis.hgetall(keys.rating_key(profile, player)))

    async def history(self, player: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The player's history items newest first, and how many there are."""
        history = keys.history_key(player)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(history, offset, offset + limit - 1)
            pipe.zcard(history)
            races, total = await pipe.execute()
        if not races:
            return [], int(total)
        raws: list[Any] = await self.redis.hmget(keys.history_items_key(player), races)
        return [msgpack.unpackb(raw, raw=False) for raw in raws if raw is not None], int(total)

    async def stats(self, player: str, profile: str) -> dict[str, str]:
        """The player's counters in ``profile`` (empty: never raced it)."""
        return _decoded(await self.redis.hgetall(keys.stats_key(player, profile)))


def _rating(raw: Mapping[str, str]) -> StoredRating:
    return StoredRating(
        rating=float(raw["rating"]),
        deviation=float(raw["deviation"]),
        volatility=float(raw["volatility"]),
        games=int(raw.get("games", 0)),
        last_at=int(raw.get("last_at", 0)),
    )


def rating_of(raw: Mapping[str, str]) -> StoredRating | None:
    """A rating hash as a record (None when empty)."""
    return _rating(raw) if raw else None
