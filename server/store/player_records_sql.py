"""The lasting records of registered players in PostgreSQL, the system of record (migration 0002,
docs/STORAGE.md "Player records"): the only code that knows their SQL.

A booking is one transaction that first claims the race in ``booked_races`` (a second booking of it, by this or
another process, finds the claim and changes nothing), then writes each seat's rated result and rating, history
row and stats. The leaderboard is a query over ``ratings``; pages are keyset pages on the indexes of 0002.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import asyncpg
import msgpack

from server.store.database import sql_errors
from server.store.player_records import (
    AccountRecord,
    BoardLine,
    BoardPage,
    HistoryPage,
    InvalidCursor,
    SeatBooking,
    StoredRating,
    StoredStats,
)
from shared.protocol import Outcome


def at(ms: int) -> datetime:
    """Milliseconds since the epoch as a timestamptz."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def ms(moment: datetime) -> int:
    """A timestamptz as milliseconds since the epoch."""
    return round(moment.timestamp() * 1000)


def _split(cursor: str) -> tuple[str, str]:
    head, colon, tail = cursor.partition(":")
    if not colon or not head or not tail:
        raise InvalidCursor(f"{cursor!r} is not a page cursor of this server")
    return head, tail


def _board_cursor(rating: float, player: str) -> str:
    return f"{rating!r}:{player}"


def _board_position(cursor: str) -> tuple[float, str]:
    rating, player = _split(cursor)
    try:
        return float(rating), player
    except ValueError:
        raise InvalidCursor(f"{cursor!r} is not a page cursor of this server") from None


def _history_position(cursor: str) -> tuple[datetime, str]:
    finished, race = _split(cursor)
    if not finished.isdigit():
        raise InvalidCursor(f"{cursor!r} is not a page cursor of this server")
    return at(int(finished)), race


_BOARD = (
    "SELECT r.player_id, a.handle, a.bot, r.rating, r.deviation, r.games FROM ratings r JOIN accounts a USING (player_id) "
    "WHERE r.profile = $1 AND r.listed"
)
_STATS_UPSERT = (
    "INSERT INTO stats (player_id, profile, races, wins, losses, draws, clears, foundations, best_clear_ms) "
    "VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8) ON CONFLICT (player_id, profile) DO UPDATE SET "
    "races = stats.races + 1, wins = stats.wins + EXCLUDED.wins, losses = stats.losses + EXCLUDED.losses, "
    "draws = stats.draws + EXCLUDED.draws, clears = stats.clears + EXCLUDED.clears, "
    "foundations = stats.foundations + EXCLUDED.foundations, best_clear_ms = least(stats.best_clear_ms, EXCLUDED.best_clear_ms)"
)
_RATING_UPSERT = (
    "INSERT INTO ratings (profile, player_id, rating, deviation, volatility, games, last_at, listed) "
    "VALUES ($1, $2, $3, $4, $5, 1, $6, $7) ON CONFLICT (player_id, profile) DO UPDATE SET rating = EXCLUDED.rating, "
    "deviation = EXCLUDED.deviation, volatility = EXCLUDED.volatility, games = ratings.games + 1, "
    "last_at = EXCLUDED.last_at, listed = EXCLUDED.listed"
)


class PostgresPlayerRecords:
    """:class:`server.store.player_records.PlayerRecords` in PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    # --- accounts ------------------------------------------------------------------------------

    async def register(self, account: AccountRecord) -> bool:
        """See :meth:`PlayerRecords.register`."""
        async with sql_errors():
            status = await self.pool.execute(
                "INSERT INTO accounts (player_id, handle, handle_lower, bot, secret_hash, salt, kdf, created_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
                account.player, account.handle, account.handle.lower(), account.bot, account.secret_hash, account.salt,
                account.kdf, at(account.created_at),
            )  # fmt: skip
        return bool(status == "INSERT 0 1")

    async def account(self, handle: str) -> AccountRecord | None:
        """See :meth:`PlayerRecords.account`."""
        async with sql_errors():
            row = await self.pool.fetchrow(
                "SELECT handle, player_id, bot, secret_hash, salt, kdf, created_at FROM accounts WHERE handle_lower = $1", handle.lower()
            )
        if row is None:
            return None
        return AccountRecord(
            handle=row["handle"], player=row["player_id"], bot=row["bot"], secret_hash=row["secret_hash"], salt=row["salt"],
            kdf=row["kdf"], created_at=ms(row["created_at"]),
        )  # fmt: skip

    async def set_secret(self, handle: str, secret_hash: str, salt: str, kdf: str) -> None:
        """See :meth:`PlayerRecords.set_secret`."""
        async with sql_errors():
            await self.pool.execute(
                "UPDATE accounts SET secret_hash = $2, salt = $3, kdf = $4 WHERE handle_lower = $1", handle.lower(), secret_hash, salt, kdf
            )

    # --- ratings and bookings -----------------------------------------------------------------

    async def ratings(self, profile: str, players: Sequence[str]) -> list[StoredRating | None]:
        """See :meth:`PlayerRecords.ratings`."""
        async with sql_errors():
            rows = await self.pool.fetch(
                "SELECT player_id, rating, deviation, volatility, games, last_at FROM ratings WHERE profile = $1 AND player_id = ANY($2)",
                profile, list(players),
            )  # fmt: skip
        found = {row["player_id"]: StoredRating(row["rating"], row["deviation"], row["volatility"], row["games"], ms(row["last_at"])) for row in rows}
        return [found.get(player) for player in players]

    async def rating(self, profile: str, player: str) -> StoredRating | None:
        """The player's rating of ``profile`` (None: never rated)."""
        (found,) = await self.ratings(profile, [player])
        return found

    async def book(self, race_id: str, finished_at: int, profile: str, seats: Sequence[SeatBooking], *, min_opponents: int = 0) -> bool:
        """See :meth:`PlayerRecords.book`."""
        when = at(finished_at)
        async with sql_errors(), self.pool.acquire() as connection, connection.transaction():
            claimed = await connection.execute("INSERT INTO booked_races (race_id) VALUES ($1) ON CONFLICT DO NOTHING", race_id)
            if claimed != "INSERT 0 1":
                return False
            for seat in seats:
                await _book_seat(connection, race_id, when, profile, seat, min_opponents)
        return True

    # --- reads --------------------------------------------------------------------------------

    async def leaderboard(self, profile: str, limit: int, *, offset: int = 0, after: str | None = None) -> BoardPage:
        """See :meth:`PlayerRecords.leaderboard`: keyset pages on ``ratings_leaderboard``."""
        order = " ORDER BY r.rating DESC, r.player_id DESC LIMIT "
        async with sql_errors(), self.pool.acquire() as connection:
            if after is not None:
                rating, player = _board_position(after)
                rows = await connection.fetch(_BOARD + " AND (r.rating, r.player_id) < ($2, $3)" + order + "$4", profile, rating, player, limit + 1)
                first_rank = 2 + await _ahead(connection, profile, rating, player)  # the line after the cursor's
            else:
                rows = await connection.fetch(_BOARD + order + "$2 OFFSET $3", profile, limit + 1, offset)
                first_rank = offset + 1
            total = await connection.fetchval("SELECT count(*) FROM ratings WHERE profile = $1 AND listed", profile)
        lines = [BoardLine(row["player_id"], row["handle"], row["bot"], row["rating"], row["deviation"], row["games"]) for row in rows[:limit]]
        last = lines[-1] if lines else None
        return BoardPage(lines, first_rank, int(total), _board_cursor(last.rating, last.player) if last and len(rows) > limit else None)

    async def rank_of(self, profile: str, player: str) -> int | None:
        """See :meth:`PlayerRecords.rank_of`."""
        async with sql_errors(), self.pool.acquire() as connection:
            rating = await connection.fetchval("SELECT rating FROM ratings WHERE profile = $1 AND player_id = $2 AND listed", profile, player)
            return None if rating is None else await _ahead(connection, profile, rating, player)

    async def history(self, player: str, limit: int, *, offset: int = 0, before: str | None = None) -> HistoryPage:
        """See :meth:`PlayerRecords.history`: keyset pages on ``history_newest_first``; the total is the stats' races."""
        select = "SELECT race_id, finished_at, item FROM history WHERE player_id = $1"
        order = " ORDER BY finished_at DESC, race_id DESC LIMIT "
        async with sql_errors(), self.pool.acquire() as connection:
            if before is not None:
                finished, race = _history_position(before)
                rows = await connection.fetch(select + " AND (finished_at, race_id) < ($2, $3)" + order + "$4", player, finished, race, limit + 1)
            else:
                rows = await connection.fetch(select + order + "$2 OFFSET $3", player, limit + 1, offset)
            total = await connection.fetchval("SELECT coalesce(sum(races), 0) FROM stats WHERE player_id = $1", player)
        items = [msgpack.unpackb(row["item"], raw=False) for row in rows[:limit]]
        last = rows[limit - 1] if len(rows) > limit else None
        return HistoryPage(items, int(total), f"{ms(last['finished_at'])}:{last['race_id']}" if last is not None else None)

    async def stats(self, player: str, profile: str) -> StoredStats | None:
        """See :meth:`PlayerRecords.stats`."""
        async with sql_errors():
            row = await self.pool.fetchrow(
                "SELECT races, wins, losses, draws, clears, foundations, best_clear_ms FROM stats WHERE player_id = $1 AND profile = $2",
                player, profile,
            )  # fmt: skip
        if row is None:
            return None
        return StoredStats(row["races"], row["wins"], row["losses"], row["draws"], row["clears"], row["foundations"], row["best_clear_ms"])


async def _ahead(connection: asyncpg.pool.PoolConnectionProxy, profile: str, rating: float, player: str) -> int:
    """How many listed players rank before (``rating``, ``player``) on the leaderboard."""
    ahead = await connection.fetchval(
        "SELECT count(*) FROM ratings WHERE profile = $1 AND listed AND (rating, player_id) > ($2, $3)", profile, rating, player
    )
    return int(ahead)


async def _book_seat(
    connection: asyncpg.pool.PoolConnectionProxy, race_id: str, when: datetime, profile: str, seat: SeatBooking, min_opponents: int
) -> None:
    """One seat's rows of a booking (inside its transaction)."""
    rating = seat.rating
    if rating is not None:
        await connection.execute(
            "INSERT INTO rated_results (race_id, player_id, profile, opponent_id, finished_at, outcome, rating, deviation, volatility) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            race_id, seat.player, profile, seat.opponent, when, seat.outcome.value, rating.rating, rating.deviation, rating.volatility,
        )  # fmt: skip
        opponents = await connection.fetchval(
            "SELECT count(DISTINCT opponent_id) FROM rated_results WHERE player_id = $1 AND profile = $2", seat.player, profile
        )
        listed = not seat.provisional and opponents >= min_opponents
        await connection.execute(
            _RATING_UPSERT, profile, seat.player, rating.rating, rating.deviation, rating.volatility, at(rating.last_at), listed
        )
    await connection.execute(
        "INSERT INTO history (player_id, race_id, finished_at, item) VALUES ($1, $2, $3, $4)",
        seat.player, race_id, when, msgpack.packb(seat.item, use_bin_type=True),
    )  # fmt: skip
    outcome = seat.outcome
    await connection.execute(
        _STATS_UPSERT, seat.player, profile, int(outcome is Outcome.WON), int(outcome is Outcome.LOST), int(outcome is Outcome.DRAW),
        int(seat.cleared), seat.count, seat.time_ms if seat.cleared else None,
    )  # fmt: skip
