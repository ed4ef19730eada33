"""The daily deal's finished days in PostgreSQL, the system of record once a day is over (migration 0003,
docs/STORAGE.md "The daily deal"): the only code that knows their SQL. A day is written once, in one transaction:
its deal and its counted attempts with their moves; a second write of it (another process) changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from server.store.daily_store import DailyDeal, StoredAttempt
from server.store.database import sql_errors
from server.store.player_records_sql import at, ms
from shared.daily import AttemptFacts
from shared.protocol import AttemptState, Difficulty

_ATTEMPT = "SELECT day, attempt, player_id, handle, started_at, deadline, state, count, ended_at, moves, times FROM daily_attempts"


def _deal(row: Any) -> DailyDeal:
    return DailyDeal(
        day=row["day"], seed=row["seed"], salt=row["salt"], line=tuple(row["line"]), commitment=row["commitment"], profile=row["profile"],
        difficulty=None if row["difficulty"] is None else Difficulty(row["difficulty"]), time_limit_ms=row["time_limit_ms"],
        opens_at=ms(row["opens_at"]), closes_at=ms(row["closes_at"]),
    )  # fmt: skip


def _attempt(row: Any) -> StoredAttempt:
    moves = tuple(row["moves"])
    facts = AttemptFacts(
        started_at=ms(row["started_at"]), deadline=ms(row["deadline"]), state=AttemptState(row["state"]), count=row["count"],
        moves=len(moves), ended_at=None if row["ended_at"] is None else ms(row["ended_at"]),
    )  # fmt: skip
    return StoredAttempt(row["day"], row["attempt"], row["player_id"], row["handle"], True, facts, moves, tuple(row["times"]))


def _row(one: StoredAttempt) -> tuple[Any, ...]:
    """A counted attempt's ``daily_attempts`` row."""
    facts = one.facts
    ended = None if facts.ended_at is None else at(facts.ended_at)
    return (
        one.day, one.attempt, one.player, one.handle, at(facts.started_at), at(facts.deadline), facts.state.value, facts.count, ended,
        list(one.moves), list(one.times),
    )  # fmt: skip


class PostgresDailyArchive:
    """:class:`server.store.daily_store.DailyArchive` in PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put_day(self, deal: DailyDeal, attempts: Sequence[StoredAttempt]) -> bool:
        """See :meth:`DailyArchive.put_day`."""
        async with sql_errors(), self.pool.acquire() as connection, connection.transaction():
            status = await connection.execute(
                "INSERT INTO daily_days (day, seed, salt, line, commitment, profile, difficulty, time_limit_ms, opens_at, closes_at) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
                deal.day, deal.seed, deal.salt, list(deal.line), deal.commitment, deal.profile,
                None if deal.difficulty is None else deal.difficulty.value, deal.time_limit_ms, at(deal.opens_at), at(deal.closes_at),
            )  # fmt: skip
            if status != "INSERT 0 1":
                return False
            await connection.executemany(
                "INSERT INTO daily_attempts (day, attempt, player_id, handle, started_at, deadline, state, count, ended_at, moves, times) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                [_row(one) for one in attempts if one.counted],
            )
        return True

    async def archived(self, days: Sequence[str]) -> set[str]:
        """See :meth:`DailyArchive.archived`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT day FROM daily_days WHERE day = ANY($1)", list(days))
        return {row["day"] for row in rows}

    async def deal(self, day: str) -> DailyDeal | None:
        """See :meth:`DailyArchive.deal`."""
        async with sql_errors():
            row = await self.pool.fetchrow("SELECT * FROM daily_days WHERE day = $1", day)
        return None if row is None else _deal(row)

    async def days(self) -> dict[str, int]:
        """See :meth:`DailyArchive.days`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT day, opens_at FROM daily_days")
        return {row["day"]: ms(row["opens_at"]) for row in rows}

    async def counted(self, day: str) -> dict[str, str]:
        """See :meth:`DailyArchive.counted`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT lower(handle) AS handle, attempt FROM daily_attempts WHERE day = $1 AND handle IS NOT NULL", day)
        return {row["handle"]: row["attempt"] for row in rows}

    async def attempt(self, day: str, attempt: str) -> StoredAttempt | None:
        """See :meth:`DailyArchive.attempt`."""
        async with sql_errors():
            row = await self.pool.fetchrow(_ATTEMPT + " WHERE day = $1 AND attempt = $2", day, attempt)
        return None if row is None else _attempt(row)

    async def counted_attempts(self, day: str) -> list[StoredAttempt]:
        """See :meth:`DailyArchive.counted_attempts`."""
        async with sql_errors():
            rows = await self.pool.fetch(_ATTEMPT + " WHERE day = $1", day)
        return [_attempt(row) for row in rows]

    async def cleared_days(self, player: str) -> list[str]:
        """See :meth:`DailyArchive.cleared_days`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT day FROM daily_attempts WHERE player_id = $1 AND state = 'cleared' ORDER BY day", player)
        return [row["day"] for row in rows]
