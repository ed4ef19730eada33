"""``flowergarden db import-redis`` on a populated Redis (a Redis of its own, filled by a server without a database):
everything moves to PostgreSQL once, a stopped run resumes, and a server with the database then keeps those
records out of Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio
from player_helpers import PASSWORD, booked, new_handle, rated_race, registered
from race_helpers import player, server_config
from redis.asyncio import Redis
from server_processes import flowergarden

from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from server.store import connect_redis, keys
from server.store import database as db
from server.store.redis_import import KindProgress, RecordKind, import_redis

pytestmark = pytest.mark.postgres


@pytest_asyncio.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[tuple[str, Redis]]:
    """A Redis of this test alone (the import walks all of it), and a client of it."""
    with EmbeddedRedis(tmp_path / "redis", persistent=False) as server:
        client = connect_redis(server.url, max_connections=4)
        assert isinstance(client, Redis)
        yield server.url, client
        await client.aclose()


async def counts(pool: asyncpg.Pool) -> dict[str, int]:
    """Rows per table of the players' records and the archive."""
    tables = ("accounts", "ratings", "rated_results", "history", "stats", "finished_races")
    return {table: int(await pool.fetchval(f"SELECT count(*) FROM {table}")) for table in tables}


async def test_import_moves_every_record_once_and_the_server_then_keeps_them_out_of_redis(
    own_redis: tuple[str, Redis], postgres_url: str
) -> None:
    url, redis = own_redis
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    async with RaceServer(server_config(url, provisional_deviation=1000.0)) as server:  # no database: all in Redis
        ann, bob = await registered(server.url, ann_handle), await registered(server.url, bob_handle)
        first = await rated_race(ann, bob)
        await booked(server, first.race)
        assert ann.session is not None
        ann_player = ann.session.player
        await ann.close()
    said = flowergarden("db", "import-redis", "--redis", url, "--database-url", postgres_url)
    output, _ = said.communicate(timeout=120)
    assert said.returncode == 0, output
    assert all(f"{kind}: " in output for kind in RecordKind)  # the progress of every kind
    assert "accounts: 2 imported by this run, 2 in all (done)" in output
    pool = await db.connect(postgres_url)
    try:
        imported = await counts(pool)
        assert imported == {"accounts": 2, "ratings": 2, "rated_results": 2, "history": 2, "stats": 2, "finished_races": 1}
        again = flowergarden("db", "import-redis", "--redis", url, "--database-url", postgres_url)
        output, _ = again.communicate(timeout=120)
        assert again.returncode == 0 and "accounts: 0 imported by this run, 2 in all (done)" in output
        assert await counts(pool) == imported  # idempotent
        assert 0 < await redis.pttl(keys.race_keys(first.race)[keys.STATE])  # archived: Redis keeps it as a cache
        before_keys = sorted(await redis.keys(f"{keys.PLAYERS_TAG}:*"))
        history_lines = await redis.hlen(keys.history_items_key(ann_player))
        async with RaceServer(server_config(url, database_url=postgres_url, provisional_deviation=1000.0)) as server:
            ann = await player(server.url, "Ann")
            await ann.login(ann_handle, PASSWORD)
            assert [item.race for item in (await ann.history()).items] == [first.race]
            bob = await player(server.url, "Bob")
            await bob.login(bob_handle, PASSWORD)
            second = await rated_race(ann, bob)
            await booked(server, second.race)
            carl = await registered(server.url, new_handle("Carl"))
            page = await ann.history()
            assert [item.race for item in page.items] == [second.race, first.race] and page.total == 2
            (classic,) = (await ann.stats()).profiles
            assert classic.races == 2 and classic.rating is not None and classic.rating.games == 2
            for client in (ann, carl):
                await client.close()
        after_keys = sorted(await redis.keys(f"{keys.PLAYERS_TAG}:*"))
        moved = ("account:", "rating:", "history", "stats:", "leaderboard:", "opponents:", "by_player")
        assert [k for k in after_keys if any(m in k.decode() for m in moved)] == [k for k in before_keys if any(m in k.decode() for m in moved)]
        assert await redis.hlen(keys.history_items_key(ann_player)) == history_lines  # not written
        assert (await counts(pool))["rated_results"] == 4
    finally:
        await pool.close()


class Stop(Exception):
    """The import stopped after a committed batch."""


async def test_an_import_stopped_after_a_batch_resumes_after_it(own_redis: tuple[str, Redis], postgres_url: str) -> None:
    _, redis = own_redis
    async with redis.pipeline(transaction=False) as pipe:
        for index in range(1500):  # several SCAN batches
            handle = f"u{index:04d}"
            pipe.hset(keys.account_key(handle), mapping={
                "handle": handle, "player": f"p{index:04d}", "bot": 0, "secret_hash": "aa", "salt": "bb", "kdf": "scrypt", "created_at": 1,
            })  # fmt: skip
            pipe.hset(keys.PLAYERS_BY_ID, f"p{index:04d}", handle)
        await pipe.execute()
    pool = await db.connect(postgres_url)
    await db.migrate(pool)
    seen: list[KindProgress] = []

    def stop_after_one_batch(state: KindProgress) -> None:
        seen.append(state)
        raise Stop

    try:
        with pytest.raises(Stop):
            await import_redis(redis, pool, stop_after_one_batch, cache_ttl_ms=1000)
        first = seen[0]
        assert first.kind is RecordKind.ACCOUNTS and 0 < first.total < 1500 and not first.finished
        assert await pool.fetchval("SELECT count(*) FROM accounts") == first.total  # the batch and its cursor: one commit
        resumed: list[KindProgress] = []
        await import_redis(redis, pool, resumed.append, cache_ttl_ms=1000)
        accounts = [state for state in resumed if state.kind is RecordKind.ACCOUNTS]
        assert accounts[-1].finished and accounts[-1].total == 1500  # none missed, none counted twice
        assert accounts[-1].imported == 1500 - first.total  # resumed after the committed batch
        assert await pool.fetchval("SELECT count(*) FROM accounts") == 1500
    finally:
        await pool.close()
