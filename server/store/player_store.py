"""Registered players in Redis (keys under the ``{players}`` hash tag): what is live (login limits, rated claims,
sightings, pair signals, races waiting to be booked) and, without a database, their lasting records too: accounts,
ratings, leaderboards, histories and stats (the fallback of :class:`PlayerRecords`, docs/STORAGE.md).

The store holds plain records; password hashing, Glicko-2 and what a finished
race means for each player are the services' business. A finished race is
booked by one script (``book_race.lua``) that takes it off the pending set, so it
is booked once whichever processes try.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgpack

from server.store import keys
from server.store.connection import RedisClient
from server.store.errors import translate_errors
from server.store.player_records import (
    AccountRecord,
    BoardLine,
    BoardPage,
    HistoryPage,
    SeatBooking,
    StoredRating,
    StoredStats,
    offset_cursor,
    offset_of,
)
from server.store.scripts import Scripts, script_arguments
from shared.protocol import ErrorCode


class LoginLimit(StrEnum):
    """The login or registration limit that refused a request (lua/login_attempt.lua)."""

    ADDRESS = "address"
    """The client address's logins and registrations of the attempt window are spent."""
    GLOBAL = "global"
    """Everybody's are spent, and this address failed lately."""
    HANDLE = "handle"
    """Failed logins to this handle from this address (the lockout of one handle and address)."""
    REGISTRATIONS = "registrations"
    """Accounts registered from this address in the registration window."""


@dataclass(frozen=True, slots=True)
class LoginBudget:
    """The numbers lua/login_attempt.lua checks (a limit of 0 is no limit); the service's ``LoginLimits`` sets them."""

    per_address: int
    overall: int
    attempt_window_ms: int
    failure_window_ms: int
    per_handle_address: int
    per_handle: int
    free_failures: int
    first_delay_ms: int
    longest_delay_ms: int
    registrations: int
    registration_window_ms: int


@dataclass(frozen=True, slots=True)
class LoginAdmission:
    """What :meth:`PlayerStore.login_attempt` decided: go ahead after ``delay_ms``, or ``refused`` by a limit."""

    delay_ms: int = 0
    refused: LoginLimit | None = None
    retry_after_ms: int = 0


@dataclass(frozen=True, slots=True)
class PairRules:
    """What rated_begin.lua checks of a pair besides the one-rated-race-at-a-time claim (docs/PLAYERS.md "Ladder rules")."""

    address_window_ms: int
    """Accounts seen on one client address within this long never play rated against each other (0: no rule)."""
    pair_limit: int
    """Rated races a pair may begin per ``pair_window_ms`` (0: no limit)."""
    pair_window_ms: int
    signals_ttl_ms: int
    """How long a pair's signals are kept after its last one."""


@dataclass(frozen=True, slots=True)
class RatedRefusal:
    """Why rated_begin.lua claimed nobody: ``rated_busy`` (``holder`` the rated race in the way),
    ``rated_same_network`` or ``rated_pair_limit`` (``limit`` the pair limit)."""

    code: ErrorCode
    holder: str | None = None
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class PairSignals:
    """What operators should know of one pair of accounts (``flowergarden admin pairs``)."""

    pair: str
    """The two player ids (:func:`keys.pair_name`)."""
    handles: tuple[str, ...]
    last_at: int
    rated: int
    """Rated races the pair began while the signals were kept."""
    same_address: int
    """Rated joins refused because both accounts were seen on one client address."""
    over_limit: int
    """Rated joins refused at the pair limit."""
    aborted: int
    """Rated races of the pair that ended aborted (too few moves or too short)."""


def seat_arguments(seat: SeatBooking) -> dict[str, Any]:
    """One seat's map in book_race.lua's ``seats`` argument (every ``seat.<name>`` the script reads)."""
    rating = seat.rating
    return {
        "player": seat.player,
        "opponent": seat.opponent,
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

    async def set_secret(self, handle: str, secret_hash: str, salt: str, kdf: str) -> None:
        """Store a new secret hash of an existing account (``change_password``)."""
        await self.redis.hset(keys.account_key(handle), mapping={"secret_hash": secret_hash, "salt": salt, "kdf": kdf})

    async def login_attempt(self, address: str, handle: str | None, limits: LoginBudget) -> LoginAdmission:
        """Check a login to ``handle`` (None: a registration) from client ``address`` against every limit and count it
        in the same script, before its hash runs (a login counts as a failed one until :meth:`login_refund`)."""
        result: list[Any] = await self.scripts.login_attempt(
            keys=keys.login_guard_keys(address, handle),
            args=script_arguments(
                login=handle is not None, per_address=limits.per_address, overall=limits.overall,
                attempt_window_ms=limits.attempt_window_ms, failure_window_ms=limits.failure_window_ms,
                per_handle_address=limits.per_handle_address, per_handle=limits.per_handle,
                free_failures=limits.free_failures, first_delay_ms=limits.first_delay_ms,
                longest_delay_ms=limits.longest_delay_ms, registrations=limits.registrations,
                registration_window_ms=limits.registration_window_ms,
            ),
        )  # fmt: skip
        if result[0] == 1:
            return LoginAdmission(delay_ms=int(result[1]))
        return LoginAdmission(refused=LoginLimit(_text(result[2])), retry_after_ms=int(result[3]))

    async def login_refund(self, address: str, handle: str) -> None:
        """The login counted by :meth:`login_attempt` had the right password, or its hash never ran: no failure."""
        await self.scripts.login_refund(keys=keys.login_guard_keys(address, handle), args=script_arguments())

    # --- ratings ------------------------------------------------------------------------------

    async def ratings(self, profile: str, players: Sequence[str]) -> list[StoredRating | None]:
        """Each player's rating of ``profile`` (None: never rated)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hgetall(keys.rating_key(profile, player))
            raws: list[Any] = await pipe.execute()
        return [_rating(_decoded(raw)) if raw else None for raw in raws]

    async def begin_rated(
        self, race_id: str, players: tuple[str, str], handles: tuple[str, str], ttl_ms: int, rules: PairRules
    ) -> RatedRefusal | None:
        """Claim both players for a rated race (one rated race per player at a time) unless they share a client
        address or reached the pair limit (``rules``); None when claimed."""
        pair = keys.pair_name(players)
        script_keys = [
            *(keys.rated_busy_key(player) for player in players), *(keys.sightings_key(player) for player in players),
            keys.pair_races_key(pair), keys.pair_signals_key(pair), keys.SUSPICIOUS_PAIRS,
        ]  # fmt: skip
        args = script_arguments(
            race=race_id, ttl_ms=ttl_ms, address_window_ms=rules.address_window_ms, pair_limit=rules.pair_limit,
            pair_window_ms=rules.pair_window_ms, pair=pair, handles=",".join(handles), signals_ttl_ms=rules.signals_ttl_ms,
        )  # fmt: skip
        result: list[Any] = await self.scripts.rated_begin(keys=script_keys, args=args)
        if result[0] == 1:
            return None
        code = ErrorCode(_text(result[1]))
        if code is ErrorCode.RATED_BUSY:
            return RatedRefusal(code, holder=_text(result[2]))
        return RatedRefusal(code, limit=int(result[2]) if len(result) > 2 else None)

    async def saw(self, player: str, address: str, window_ms: int) -> None:
        """An account's player was seen on client ``address`` (IPv4, IPv6 /64): kept for the ladder's address window."""
        key = keys.sightings_key(player)
        now_s, now_us = await self.redis.time()  # the store's clock, as rated_begin.lua reads it
        now = int(now_s) * 1000 + int(now_us) // 1000
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, {address: now})
            pipe.zremrangebyscore(key, "-inf", now - window_ms)
            pipe.zremrangebyrank(key, 0, -keys.SIGHTINGS_KEPT - 1)
            pipe.pexpire(key, window_ms)
            await pipe.execute()

    async def signal_pair(self, players: tuple[str, str], handles: tuple[str, str], signal: str, at_ms: int, ttl_ms: int) -> None:
        """Count one ``signal`` (a field of :class:`PairSignals`) of a pair and list the pair for the operators."""
        pair = keys.pair_name(players)
        key = keys.pair_signals_key(pair)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(key, signal, 1)
            pipe.hset(key, mapping={"handles": ",".join(handles), "last_at": at_ms})
            pipe.pexpire(key, ttl_ms)
            pipe.zadd(keys.SUSPICIOUS_PAIRS, {pair: at_ms})
            await pipe.execute()

    async def suspicious_pairs(self, limit: int) -> list[PairSignals]:
        """The pairs with a signal, the newest signal first (pairs whose signals expired are dropped from the list)."""
        members: list[Any] = await self.redis.zrevrange(keys.SUSPICIOUS_PAIRS, 0, limit - 1)
        pairs = [_text(member) for member in members]
        async with self.redis.pipeline(transaction=False) as pipe:
            for pair in pairs:
                pipe.hgetall(keys.pair_signals_key(pair))
            raws: list[Any] = await pipe.execute()
        found, gone = [], []
        for pair, raw in zip(pairs, raws):
            fields = _decoded(raw)
            if not fields:
                gone.append(pair)
                continue
            found.append(
                PairSignals(
                    pair=pair, handles=tuple(fields.get("handles", "").split(",")), last_at=int(fields.get("last_at", 0)),
                    rated=int(fields.get("rated", 0)), same_address=int(fields.get("same_address", 0)),
                    over_limit=int(fields.get("over_limit", 0)), aborted=int(fields.get("aborted", 0)),
                )
            )  # fmt: skip
        if gone:
            await self.redis.zrem(keys.SUSPICIOUS_PAIRS, *gone)
        return found

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

    async def book(self, race_id: str, finished_at: int, profile: str, seats: Sequence[SeatBooking], *, min_opponents: int = 0) -> bool:
        """Book a finished race once; False if it was booked already (by this or another process). A rated player
        enters the leaderboard once established and with ``min_opponents`` distinct rated opponents."""
        script_keys = [keys.PLAYERS_PENDING, keys.leaderboard_key(profile)]
        booked: list[dict[str, Any]] = []
        for seat in seats:
            script_keys += [
                keys.rating_key(profile, seat.player),
                keys.history_key(seat.player),
                keys.history_items_key(seat.player),
                keys.stats_key(seat.player, profile),
                keys.rated_busy_key(seat.player),
                keys.opponents_key(profile, seat.player),
            ]
            booked.append(seat_arguments(seat))
        args = script_arguments(race=race_id, finished_at=finished_at, min_opponents=min_opponents, seats=booked)
        return bool(await self.scripts.book_race(keys=script_keys, args=args))

    async def settle_booked(self, race_id: str, players: Sequence[str]) -> None:
        """A race is booked (by :meth:`book` or by the database's records): off the pending set, its rated claims
        released (book_race.lua did both already; doing it again changes nothing)."""
        await self.untrack(race_id)
        await self.end_rated(race_id, players)

    # --- reads --------------------------------------------------------------------------------

    async def leaderboard(self, profile: str, limit: int, *, offset: int = 0, after: str | None = None) -> BoardPage:
        """See :meth:`PlayerRecords.leaderboard` (this store's cursor is a position)."""
        if after is not None:
            offset = offset_of(after)
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
        lines = []
        for player, raw in zip(players, raws):
            fields = _decoded(raw)
            lines.append(
                BoardLine(
                    player=player, handle=fields.get("handle", "?"), bot=fields.get("bot") == "1", rating=float(fields.get("rating", 0)),
                    deviation=float(fields.get("deviation", 0)), games=int(fields.get("games", 0)),
                )
            )  # fmt: skip
        end = offset + len(lines)
        return BoardPage(lines, offset + 1, int(total), offset_cursor(end) if end < int(total) else None)

    async def rank_of(self, profile: str, player: str) -> int | None:
        """The player's 0-based leaderboard rank (None when not on it)."""
        rank: Any = await self.redis.zrevrank(keys.leaderboard_key(profile), player)
        return None if rank is None else int(rank)

    async def rating(self, profile: str, player: str) -> StoredRating | None:
        """The player's rating of ``profile`` (None: never rated)."""
        fields = _decoded(await self.redis.hgetall(keys.rating_key(profile, player)))
        return _rating(fields) if fields else None

    async def history(self, player: str, limit: int, *, offset: int = 0, before: str | None = None) -> HistoryPage:
        """See :meth:`PlayerRecords.history` (this store's cursor is a position)."""
        if before is not None:
            offset = offset_of(before)
        history = keys.history_key(player)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(history, offset, offset + limit - 1)
            pipe.zcard(history)
            races, total = await pipe.execute()
        items = []
        if races:
            raws: list[Any] = await self.redis.hmget(keys.history_items_key(player), races)
            items = [msgpack.unpackb(raw, raw=False) for raw in raws if raw is not None]
        end = offset + len(races)
        return HistoryPage(items, int(total), offset_cursor(end) if end < int(total) else None)

    async def stats(self, player: str, profile: str) -> StoredStats | None:
        """The player's counters in ``profile`` (None: never raced it)."""
        fields = _decoded(await self.redis.hgetall(keys.stats_key(player, profile)))
        if not fields:
            return None
        best = fields.get("best_clear_ms")
        return StoredStats(
            races=int(fields.get("races", 0)), wins=int(fields.get("wins", 0)), losses=int(fields.get("losses", 0)),
            draws=int(fields.get("draws", 0)), clears=int(fields.get("clears", 0)), foundations=int(fields.get("foundations", 0)),
            best_clear_ms=None if best is None else int(best),
        )  # fmt: skip


def _rating(raw: Mapping[str, str]) -> StoredRating:
    return StoredRating(
        rating=float(raw["rating"]),
        deviation=float(raw["deviation"]),
        volatility=float(raw["volatility"]),
        games=int(raw.get("games", 0)),
        last_at=int(raw.get("last_at", 0)),
    )
