"""The lasting records of registered players, as the services see them: accounts, ratings, the booking of a
finished race, the leaderboard, histories and stats (docs/STORAGE.md "Player records").

Two stores keep them: PostgreSQL (:class:`server.store.player_records_sql.PostgresPlayerRecords`, the system of
record whenever a database is configured) and, without a database, Redis (:class:`server.store.PlayerStore`, the
documented fallback). Pages are keyset pages: a reply's ``next`` cursor asks for the page after it without
counting the rows before it (an ``offset`` still works, at the cost of skipping the rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from server.store.errors import StoreError
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
    opponent: str
    """The other seat's player id (counted among the player's rated opponents when the race is rated)."""
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


class InvalidCursor(StoreError):
    """A page cursor this store did not make (the caller's mistake: its request names a bad field)."""


@dataclass(frozen=True, slots=True)
class BoardLine:
    """One leaderboard line: the player, its account and its stored rating (not aged)."""

    player: str
    handle: str
    bot: bool
    rating: float
    deviation: float
    games: int


@dataclass(frozen=True, slots=True)
class BoardPage:
    """A page of the leaderboard: its lines, the rank of the first (1-based), the board's size, and the cursor of the
    next page (None: this is the last)."""

    lines: list[BoardLine]
    first_rank: int
    total: int
    next: str | None


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of a player's history, newest first: the HistoryItem maps, how many races the history holds, and the
    cursor of the next page (None: this is the last)."""

    items: list[dict[str, Any]]
    total: int
    next: str | None


@dataclass(frozen=True, slots=True)
class StoredStats:
    """A player's counters in one profile."""

    races: int
    wins: int
    losses: int
    draws: int
    clears: int
    foundations: int
    """Cards put on foundations, summed over the races (the average count is this over ``races``)."""
    best_clear_ms: int | None


class PlayerRecords(Protocol):
    """Accounts, ratings, bookings and the views of them. Every method raises StoreUnavailable when its store cannot
    be reached (account creation and login then answer ``unavailable``)."""

    async def register(self, account: AccountRecord) -> bool:
        """Store a new account; False if its handle (in any case) is taken."""

    async def account(self, handle: str) -> AccountRecord | None:
        """The account of ``handle`` (any case), if registered."""

    async def set_secret(self, handle: str, secret_hash: str, salt: str, kdf: str) -> None:
        """Store a new secret hash of an existing account (``change_password``)."""

    async def ratings(self, profile: str, players: Sequence[str]) -> list[StoredRating | None]:
        """Each player's rating of ``profile`` (None: never rated)."""

    async def book(self, race_id: str, finished_at: int, profile: str, seats: Sequence[SeatBooking], *, min_opponents: int = 0) -> bool:
        """Book a finished race once: ratings (and a rated result per rated seat), histories, stats; False if it was
        booked already. A rated player is listed on the leaderboard once established with ``min_opponents``
        distinct rated opponents. The race's pending entry and rated claims are the caller's
        (:meth:`PlayerStore.settle_booked`)."""

    async def leaderboard(self, profile: str, limit: int, *, offset: int = 0, after: str | None = None) -> BoardPage:
        """``limit`` lines of the leaderboard, best first: after the cursor ``after`` (InvalidCursor when it is not
        one of this store's), else from ``offset``."""

    async def rank_of(self, profile: str, player: str) -> int | None:
        """The player's 0-based leaderboard rank (None when not on it)."""

    async def history(self, player: str, limit: int, *, offset: int = 0, before: str | None = None) -> HistoryPage:
        """``limit`` of the player's history items, newest first: older than the cursor ``before`` (InvalidCursor
        when it is not one of this store's), else from ``offset``."""

    async def stats(self, player: str, profile: str) -> StoredStats | None:
        """The player's counters in ``profile`` (None: never raced it)."""


def offset_cursor(offset: int) -> str:
    """A cursor that is a position (the Redis store's: its sorted sets page by rank)."""
    return f"@{offset}"


def offset_of(cursor: str) -> int:
    """The position of an :func:`offset_cursor`; InvalidCursor otherwise."""
    if not cursor.startswith("@") or not cursor[1:].isdigit():
        raise InvalidCursor(f"{cursor!r} is not a page cursor of this server")
    return int(cursor[1:])
