"""``flowergarden db import-redis``: the players' records and finished races an earlier release (or a server
without a database) kept in Redis, moved into PostgreSQL (docs/STORAGE.md "Player records", OPERATIONS.md).

Each kind of record is walked with SCAN, a batch at a time; a batch's rows and the SCAN cursor after it are
committed in one transaction (table ``redis_import``), so a run that stops, however it stops, resumes after its
last committed batch, and a batch done twice writes nothing twice: every insert is idempotent (accounts and
history lines are kept as first imported; a rating or a stats row is replaced only by one with more games or races,
so a second run after more races were played in Redis brings them up to date). Redis is only read, except that an
imported finished race gets the archive's cache TTL, as the archiver gives it.

Only a single Redis is walked (a Redis Cluster's SCAN is per node).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import asyncpg
import msgpack
from redis.exceptions import RedisError

from server.store import database, keys
from server.store.archive_queue import ArchiveQueue
from server.store.connection import RedisClient, connect_redis
from server.store.database import PostgresRaceArchive, sql_errors
from server.store.errors import StoreUnavailable
from server.store.player_records_sql import at

BATCH = 500
"""Keys read per SCAN call (and at most per committed batch)."""


class RecordKind(StrEnum):
    """What the import moves, in the order it moves them (accounts before what refers to them)."""

    ACCOUNTS = "accounts"
    RATINGS = "ratings"
    HISTORIES = "histories"
    STATS = "stats"
    RACES = "races"
    """Finished races not archived yet (rated ones were kept in Redis for ever)."""


_PATTERNS = {
    RecordKind.ACCOUNTS: keys.account_key("*"),
    RecordKind.RATINGS: keys.rating_key("*", "*").replace(":*:*", ":*"),
    RecordKind.HISTORIES: keys.history_items_key("*"),
    RecordKind.STATS: keys.stats_key("*", "*").replace(":*:*", ":*"),
    RecordKind.RACES: keys.race_keys("*")[keys.STATE],
}


@dataclass(frozen=True, slots=True)
class KindProgress:
    """How far one kind got: rows written by this run and in all, and whether its walk is complete."""

    kind: RecordKind
    imported: int
    total: int
    finished: bool


Progress = Callable[[KindProgress], None]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _fields(raw: dict[Any, Any]) -> dict[str, str]:
    return {_text(key): _text(value) for key, value in raw.items()}


async def import_into(database_url: str, redis_url: str, progress: Progress, *, cache_ttl_ms: int) -> list[KindProgress]:
    """:func:`import_redis` from the Redis at ``redis_url`` into the database at ``database_url``, migrated first.
    StoreUnavailable when either cannot be reached (a run again resumes)."""
    redis = connect_redis(redis_url, max_connections=2)
    try:
        pool = await database.connect(database_url)
        try:
            await database.migrate(pool)
            return await import_redis(redis, pool, progress, cache_ttl_ms=cache_ttl_ms)
        finally:
            await pool.close()
    except (RedisError, OSError) as error:
        raise StoreUnavailable(f"Redis at {redis_url}: {error}") from error
    finally:
        await redis.aclose()


async def import_redis(redis: RedisClient, pool: asyncpg.Pool, progress: Progress, *, cache_ttl_ms: int) -> list[KindProgress]:
    """Import every kind, resuming where an earlier run stopped; each kind's final progress. A kind finished by an
    earlier run is walked again from the start (a second run after more races brings them up to date)."""
    done = []
    for kind in RecordKind:
        done.append(await _import_kind(redis, pool, kind, progress, cache_ttl_ms))
    return done


async def _import_kind(redis: RedisClient, pool: asyncpg.Pool, kind: RecordKind, progress: Progress, cache_ttl_ms: int) -> KindProgress:
    async with sql_errors():
        row = await pool.fetchrow("SELECT cursor, imported, finished_at FROM redis_import WHERE kind = $1", kind.value)
    cursor = 0 if row is None or row["finished_at"] is not None else int(row["cursor"])
    total = 0 if row is None else int(row["imported"])
    written = 0
    write = _WRITERS[kind]
    while True:
        cursor, found = await redis.scan(cursor, match=_PATTERNS[kind], count=BATCH)
        names = [_text(name) for name in found]
        async with sql_errors(), pool.acquire() as connection, connection.transaction():
            count, finished = await write(redis, connection, names) if names else (0, [])
            total += count
            await connection.execute(
                "INSERT INTO redis_import (kind, cursor, imported, finished_at) VALUES ($1, $2, $3, CASE WHEN $4 THEN now() END) "
                "ON CONFLICT (kind) DO UPDATE SET cursor = EXCLUDED.cursor, imported = EXCLUDED.imported, finished_at = EXCLUDED.finished_at",
                kind.value, str(cursor), total, cursor == 0,
            )  # fmt: skip
        written += count
        if finished:  # in PostgreSQL now: Redis keeps them as a cache, as the archiver leaves them
            await ArchiveQueue(redis, "import", cache_ttl_ms=cache_ttl_ms).confirm([], finished)
        state = KindProgress(kind, written, total, cursor == 0)
        progress(state)
        if cursor == 0:
            return state


async def _hashes(redis: RedisClient, names: list[str]) -> list[dict[str, str]]:
    async with redis.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.hgetall(name)
        raws: list[Any] = await pipe.execute()
    return [_fields(raw) for raw in raws]


def _status_count(status: str) -> int:
    return int(status.split()[-1])


async def _accounts(redis: RedisClient, connection: Any, names: list[str]) -> tuple[int, list[str]]:
    rows = [
        (f["player"], f["handle"], f["handle"].lower(), f.get("bot") == "1", f["secret_hash"], f["salt"], f["kdf"], at(int(f.get("created_at") or 0)))
        for f in await _hashes(redis, names)
        if f.get("player") and f.get("handle")
    ]
    if not rows:
        return 0, []
    await connection.execute("CREATE TEMPORARY TABLE IF NOT EXISTS incoming_accounts (LIKE accounts) ON COMMIT DELETE ROWS")
    await connection.copy_records_to_table("incoming_accounts", records=rows)
    status = await connection.execute("INSERT INTO accounts SELECT * FROM incoming_accounts ON CONFLICT DO NOTHING")
    return _status_count(status), []


async def _ratings(redis: RedisClient, connection: Any, names: list[str]) -> tuple[int, list[str]]:
    prefix = keys.rating_key("", "")[:-1]  # fgr:{players}:rating:
    places = [name[len(prefix) :].split(":", 1) for name in names]
    hashes = await _hashes(redis, names)
    async with redis.pipeline(transaction=False) as pipe:
        for profile, player in places:
            pipe.zscore(keys.leaderboard_key(profile), player)
        listed: list[Any] = await pipe.execute()
    count = 0
    for (profile, player), fields, score in zip(places, hashes, listed):
        if "rating" not in fields:
            continue
        status = await connection.execute(
            "INSERT INTO ratings (profile, player_id, rating, deviation, volatility, games, last_at, listed) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (player_id, profile) DO UPDATE SET rating = EXCLUDED.rating, "
            "deviation = EXCLUDED.deviation, volatility = EXCLUDED.volatility, games = EXCLUDED.games, last_at = EXCLUDED.last_at, "
            "listed = EXCLUDED.listed WHERE ratings.games < EXCLUDED.games",
            profile, player, float(fields["rating"]), float(fields["deviation"]), float(fields["volatility"]),
            int(fields.get("games", 0)), at(int(fields.get("last_at", 0))), score is not None,
        )  # fmt: skip
        count += _status_count(status)
    return count, []


async def _histories(redis: RedisClient, connection: Any, names: list[str]) -> tuple[int, list[str]]:
    prefix = keys.history_items_key("")
    count = 0
    for name in names:
        player = name[len(prefix) :]
        raw: dict[Any, Any] = await redis.hgetall(name)
        rows, results = [], []
        for race, packed in raw.items():
            item = msgpack.unpackb(packed, raw=False)
            finished = at(int(item.get("finished_at", 0)))
            rows.append((player, _text(race), finished, bytes(packed)))
            change, opponent = item.get("rating"), item.get("opponent") or {}
            if item.get("rated") and change is not None and opponent.get("player"):
                results.append(
                    (_text(race), player, item.get("profile", ""), opponent["player"], finished, item.get("outcome", ""),
                     float(change["after"]), float(change["deviation"]))
                )  # fmt: skip
        status = await connection.execute(
            "INSERT INTO history (player_id, race_id, finished_at, item) SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bytea[]) "
            "ON CONFLICT DO NOTHING",
            *(list(column) for column in zip(*rows)),
        ) if rows else "INSERT 0 0"  # fmt: skip
        count += _status_count(status)
        if results:
            await connection.executemany(
                "INSERT INTO rated_results (race_id, player_id, profile, opponent_id, finished_at, outcome, rating, deviation) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
                results,
            )
    return count, []


async def _stats(redis: RedisClient, connection: Any, names: list[str]) -> tuple[int, list[str]]:
    prefix = keys.stats_key("", "")[:-1]  # fgr:{players}:stats:
    count = 0
    for name, fields in zip(names, await _hashes(redis, names)):
        player, _, profile = name[len(prefix) :].rpartition(":")
        if not fields or not player:
            continue
        best = fields.get("best_clear_ms")
        status = await connection.execute(
            "INSERT INTO stats (player_id, profile, races, wins, losses, draws, clears, foundations, best_clear_ms) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (player_id, profile) DO UPDATE SET races = EXCLUDED.races, "
            "wins = EXCLUDED.wins, losses = EXCLUDED.losses, draws = EXCLUDED.draws, clears = EXCLUDED.clears, "
            "foundations = EXCLUDED.foundations, best_clear_ms = EXCLUDED.best_clear_ms WHERE stats.races < EXCLUDED.races",
            player, profile, *(int(fields.get(name, 0)) for name in ("races", "wins", "losses", "draws", "clears", "foundations")),
            None if best is None else int(best),
        )  # fmt: skip
        count += _status_count(status)
    return count, []


def _race_of(state_key: str) -> str:
    """The race id of a race's state key (``fgr:{race:<id>}:state``)."""
    return state_key.split("{race:", 1)[1].rsplit("}", 1)[0]


async def _races(redis: RedisClient, connection: Any, names: list[str]) -> tuple[int, list[str]]:
    found = await ArchiveQueue(redis, "import", cache_ttl_ms=0).records([_race_of(name) for name in names])
    return await PostgresRaceArchive.put_on(connection, list(found.values())), list(found)


Writer = Callable[[RedisClient, Any, list[str]], Awaitable[tuple[int, list[str]]]]
"""Writes one batch of keys' records in the open transaction: rows written, and the finished races among them (they
get the archive's cache TTL once committed)."""

_WRITERS: dict[RecordKind, Writer] = {
    RecordKind.ACCOUNTS: _accounts,
    RecordKind.RATINGS: _ratings,
    RecordKind.HISTORIES: _histories,
    RecordKind.STATS: _stats,
    RecordKind.RACES: _races,
}


async def import_pending(redis: RedisClient, pool: asyncpg.Pool) -> bool:
    """Whether Redis holds accounts and the database never finished importing them (the server warns at start)."""
    if not await redis.hlen(keys.PLAYERS_BY_ID):
        return False
    async with sql_errors():
        finished = await pool.fetchval("SELECT finished_at FROM redis_import WHERE kind = $1", RecordKind.ACCOUNTS.value)
    return finished is None
