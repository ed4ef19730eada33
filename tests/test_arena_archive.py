"""Finished arena tournaments in PostgreSQL (docs/STORAGE.md "Arena tournaments"), on the real PostgreSQL and a
Redis of the test's own (it is flushed): once an arena is archived its final table and every player's races no
longer need Redis."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import asyncpg
import pytest
from redis.asyncio import Redis

from server.embedded_redis import EmbeddedRedis
from server.store import ArenaStore, connect_redis, keys
from server.store.arena_records_sql import PostgresArenaArchive
from server.store.arena_store import ArenaMeta
from server.store.connection import time_ms_at
from server.store.race_store import Identity
from shared.arena import ArenaGame, Standing, standings
from shared.protocol import Outcome

pytestmark = pytest.mark.postgres

GRACE, STALE = 60_000, 3_600_000


Table = tuple[ArenaMeta | None, dict[str, Identity], dict[str, float], dict[str, Sequence[ArenaGame]], list[Standing], int]


async def table(store: ArenaStore, arena: str) -> Table:
    """Everything the arena's pages show of a finished arena, read through the store."""
    ratings = await store.ratings(arena)
    games: dict[str, Sequence[ArenaGame]] = {player: await store.games(arena, player) for player in ratings}
    return await store.meta(arena), await store.identities(arena), ratings, games, standings(games), (await store.counts(arena)).players


async def test_a_finished_arenas_table_and_races_outlive_a_flushed_redis_once_archived(pool: asyncpg.Pool, tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "redis", persistent=False) as own_redis:
        redis = connect_redis(own_redis.url, max_connections=4)
        assert isinstance(redis, Redis)
        archive = PostgresArenaArchive(pool)
        store = ArenaStore(redis, archive=archive, cache_ttl_ms=600_000)
        now = await time_ms_at(redis, keys.ARENAS_ENDING)
        meta = ArenaMeta("Evening arena", now, now + 600_000, 180, rated=True, private=False, max_players=8)
        assert await store.create("a1", meta)
        people = [Identity("p-ann", "Ann", "ann"), Identity("p-bob", "Bob", "bob"), Identity("p-bot", "Bot", "bot1", bot=True)]
        for who, rating in zip(people, (1610.0, 1490.0, 1500.0), strict=True):
            assert await store.join("a1", who, rating, now)
        for race, (a, b, outcome, berserk) in enumerate([("p-ann", "p-bob", Outcome.WON, True), ("p-bot", "p-ann", Outcome.DRAW, False)]):
            games = {
                a: ArenaGame(f"r{race}", b, outcome, berserk, 40, 1500.0),
                b: ArenaGame(f"r{race}", a, Outcome.LOST if outcome is Outcome.WON else outcome, False, 35, 1600.0),
            }
            assert await store.book("a1", f"r{race}", games, now + 1000)
        before = await table(store, "a1")
        assert before[4][0].player == "p-ann" and before[5] == 3

        assert await store.archive_finished(meta.end_at + GRACE - 1, grace_ms=GRACE, stale_ms=STALE) == []  # within the grace
        assert await store.archive_finished(meta.end_at + GRACE, grace_ms=GRACE, stale_ms=STALE) == ["a1"]
        assert await store.archive_finished(meta.end_at + GRACE, grace_ms=GRACE, stale_ms=STALE) == []  # done once
        assert 0 < await redis.pttl(keys.arena_keys("a1")["players"]) <= 600_000  # a cache now
        assert await table(store, "a1") == before

        await redis.flushall()
        assert await table(ArenaStore(redis, archive=archive), "a1") == before
        await redis.aclose()


async def test_an_arena_with_a_race_under_way_waits_for_its_booking(pool: asyncpg.Pool, tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "redis", persistent=False) as own_redis:
        redis = connect_redis(own_redis.url, max_connections=4)
        assert isinstance(redis, Redis)
        store = ArenaStore(redis, archive=PostgresArenaArchive(pool))
        now = await time_ms_at(redis, keys.ARENAS_ENDING)
        meta = ArenaMeta("Short", now, now + 60_000, 60)
        await store.create("a2", meta)
        for who in (Identity("p-ann", "Ann", "ann"), Identity("p-bob", "Bob", "bob")):
            await store.join("a2", who, 1500.0, now)
        assert await store.claim("a2", [("p-ann", "p-bob", "r9")], now) == ["r9"]
        after = meta.end_at + GRACE
        assert await store.archive_finished(after, grace_ms=GRACE, stale_ms=STALE) == []  # its last race is not booked
        assert await store.archive_finished(meta.end_at + STALE, grace_ms=GRACE, stale_ms=STALE) == ["a2"]  # a dead process's
        await redis.aclose()
