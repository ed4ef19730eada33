"""Finished arena tournaments in PostgreSQL, the system of record once an arena is over (migration 0004,
docs/STORAGE.md "Arena tournaments"): the only code that knows their SQL. An arena is written once, in one
transaction: its meta, its final table (each player as it joined, with its score) and every player's races."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg

from server.store.database import sql_errors
from server.store.player_records_sql import at
from shared.arena import ArenaGame
from shared.protocol import Outcome


class PostgresArenaArchive:
    """:class:`server.store.arena_store.ArenaArchive` in PostgreSQL."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put_arena(
        self, arena: str, meta: Mapping[str, str], players: Mapping[str, tuple[dict[str, Any], int]], games: Mapping[str, Sequence[ArenaGame]]
    ) -> bool:
        """See :meth:`ArenaArchive.put_arena`."""
        async with sql_errors(), self.pool.acquire() as connection, connection.transaction():
            status = await connection.execute(
                "INSERT INTO arenas (arena_id, name, start_at, end_at, private, meta) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                arena, meta["name"], at(int(meta["start_at"])), at(int(meta["end_at"])), meta.get("private", "1") == "1", json.dumps(dict(meta)),
            )  # fmt: skip
            if status != "INSERT 0 1":
                return False
            await connection.executemany(
                "INSERT INTO arena_players (arena_id, player_id, handle, name, account, bot, rating, score) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                [
                    (arena, player, entry["handle"], entry.get("name", entry["handle"]), entry.get("account"), bool(entry.get("bot")), float(entry["rating"]), score)
                    for player, (entry, score) in players.items()
                ],
            )  # fmt: skip
            await connection.executemany(
                "INSERT INTO arena_games (arena_id, player_id, seq, race_id, opponent_id, outcome, berserk, moves, opponent_rating) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                [
                    (arena, player, seq, game.race, game.opponent, game.outcome.value, game.berserk, game.moves, game.opponent_rating)
                    for player, played in games.items()
                    for seq, game in enumerate(played)
                ],
            )
        return True

    async def meta(self, arena: str) -> dict[str, str] | None:
        """See :meth:`ArenaArchive.meta`."""
        async with sql_errors():
            stored = await self.pool.fetchval("SELECT meta FROM arenas WHERE arena_id = $1", arena)
        return None if stored is None else dict(json.loads(stored))

    async def entries(self, arena: str) -> dict[str, dict[str, Any]]:
        """See :meth:`ArenaArchive.entries`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT player_id, handle, name, account, bot, rating FROM arena_players WHERE arena_id = $1", arena)
        return {
            row["player_id"]: {"handle": row["handle"], "name": row["name"], "account": row["account"], "bot": row["bot"], "rating": row["rating"]}
            for row in rows
        }

    async def games(self, arena: str, player: str) -> list[ArenaGame]:
        """See :meth:`ArenaArchive.games`."""
        async with sql_errors():
            rows = await self.pool.fetch(
                "SELECT race_id, opponent_id, outcome, berserk, moves, opponent_rating FROM arena_games "
                "WHERE arena_id = $1 AND player_id = $2 ORDER BY seq",
                arena, player,
            )  # fmt: skip
        return [
            ArenaGame(row["race_id"], row["opponent_id"], Outcome(row["outcome"]), row["berserk"], row["moves"], row["opponent_rating"]) for row in rows
        ]

    async def archived(self, arenas: Sequence[str]) -> set[str]:
        """See :meth:`ArenaArchive.archived`."""
        async with sql_errors():
            rows = await self.pool.fetch("SELECT arena_id FROM arenas WHERE arena_id = ANY($1)", list(arenas))
        return {row["arena_id"] for row in rows}
