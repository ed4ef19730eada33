"""The archive of finished races in PostgreSQL (docs/STORAGE.md "The archive"), on the real PostgreSQL and Redis:
migrations, the hand-over through the Redis stream, a PostgreSQL killed while archiving, replays from the archive."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import asyncpg
import msgpack
import pytest
from race_helpers import play, seated_race, server_config
from redis.asyncio import Redis
from server_processes import flowergarden

from server.app import RaceServer
from server.embedded_postgres import EmbeddedPostgres
from server.services.archiver import Archiver
from server.store import StoreUnavailable, keys
from server.store import database as db
from server.store.archive_queue import ArchiveQueue
from server.store.database import ArchivedRace, MemoryRaceArchive, PostgresRaceArchive, SchemaMismatch
from shared.protocol import RaceResult, RaceSettings

pytestmark = pytest.mark.postgres


async def test_migrate_applies_each_migration_once_and_records_its_version(postgres_url: str) -> None:
    pool = await db.connect(postgres_url)
    try:
        with pytest.raises(SchemaMismatch, match="flowergarden db migrate"):
            await db.check_schema(pool)
        assert [m.version for m in await db.migrate(pool)] == list(range(1, db.LATEST + 1))
        assert await db.migrate(pool) == []
        await db.check_schema(pool)
        assert await pool.fetchval("SELECT max(version) FROM schema_version") == db.LATEST
    finally:
        await pool.close()


async def test_a_schema_newer_than_the_code_is_refused_by_migrate_and_at_start(pool: asyncpg.Pool) -> None:
    await pool.execute("INSERT INTO schema_version (version, name) VALUES ($1, 'from_the_future')", db.LATEST + 1)
    with pytest.raises(SchemaMismatch, match="newer than this server knows"):
        await db.migrate(pool)
    with pytest.raises(SchemaMismatch, match="newer than this server knows"):
        await db.check_schema(pool)


def finished_race_fields(race_id: str, at_ms: int) -> dict[str, str]:
    """The state hash of a finished race, as far as the archive reads it."""
    return {"status": "finished", "profile": "classic", "rated": "0", "created_at": str(at_ms), "finished_at": str(at_ms + 1000), "id": race_id}


async def queue_finished_races(redis: Redis, count: int) -> list[str]:
    """``count`` finished races written into Redis as the scripts leave them, each queued for the archive."""
    race_ids = [f"a{secrets.token_hex(6)}" for _ in range(count)]
    event = msgpack.packb({"type": "result", "at": 1}, use_bin_type=True)
    async with redis.pipeline(transaction=False) as pipe:
        for race_id in race_ids:
            race_keys = keys.race_keys(race_id)
            pipe.hset(race_keys[keys.STATE], mapping={k: v for k, v in finished_race_fields(race_id, 1_700_000_000_000).items()})
            pipe.rpush(race_keys[keys.MOVES_0], "5D b>3", "stuck")
            pipe.rpush(race_keys[keys.MOVES_1], "resign")
            pipe.xadd(race_keys[keys.EVENTS], {"e": event}, id="0-1")
            pipe.xadd(keys.ARCHIVE_QUEUE, {"race": race_id})
        await pipe.execute()
    return race_ids


async def clear_queue(redis: Redis) -> None:
    await redis.delete(keys.ARCHIVE_QUEUE)


async def test_a_race_queued_twice_is_archived_once_and_its_keys_get_the_cache_ttl(redis: Redis, pool: asyncpg.Pool) -> None:
    await clear_queue(redis)
    (race_id,) = await queue_finished_races(redis, 1)
    await redis.xadd(keys.ARCHIVE_QUEUE, {"race": race_id})  # at least once: a repeated hand-over
    archiver = Archiver(ArchiveQueue(redis, "p1", cache_ttl_ms=60_000), PostgresRaceArchive(pool))
    assert await archiver.archive_batch() == 2
    assert await pool.fetchval("SELECT count(*) FROM finished_races WHERE race_id = $1", race_id) == 1
    assert await redis.xlen(keys.ARCHIVE_QUEUE) == 0
    assert 0 < await redis.pttl(keys.race_keys(race_id)[keys.STATE]) <= 60_000  # it had none: kept until archived
    archived = await PostgresRaceArchive(pool).get(race_id)
    assert archived is not None and archived.moves == (("5D b>3", "stuck"), ("resign",)) and archived.events[0][0] == 1


async def test_the_in_memory_archive_keeps_the_first_copy_of_a_race_as_postgresql_does(redis: Redis) -> None:
    await clear_queue(redis)
    memory = MemoryRaceArchive()
    queue = ArchiveQueue(redis, "p1", cache_ttl_ms=60_000)
    race_ids = await queue_finished_races(redis, 3)
    await redis.xadd(keys.ARCHIVE_QUEUE, {"race": race_ids[0]})
    assert await Archiver(queue, memory).archive_batch() == 4
    assert await memory.count() == 3 and set(memory.races) == set(race_ids)


async def test_postgresql_killed_while_archiving_loses_no_race_and_archives_none_twice(redis: Redis, postgres_folder: Path) -> None:
    await clear_queue(redis)
    count = 3000  # six batches
    race_ids = await queue_finished_races(redis, count)
    server = EmbeddedPostgres(postgres_folder, fsync=True)
    server.start()
    try:
        pool = await db.connect(server.url, max_size=2)
        await db.migrate(pool)
        archiver = Archiver(ArchiveQueue(redis, "p1", cache_ttl_ms=60_000), PostgresRaceArchive(pool), interval=0.05)
        running = asyncio.create_task(archiver.run())
        while archiver.archived == 0:
            await asyncio.sleep(0.005)
        server.kill()  # kill -9 of the postmaster, with batches in flight
        with pytest.raises(StoreUnavailable):
            await PostgresRaceArchive(pool).count()
        while archiver.failures == 0:  # the batch written before the kill is confirmed, the next one fails
            await asyncio.sleep(0.005)
        waiting = await redis.xlen(keys.ARCHIVE_QUEUE)
        assert 0 < waiting < count  # some archived and confirmed, the rest still queued, none dropped
        unarchived = [race_id for race_id in race_ids if await redis.pttl(keys.race_keys(race_id)[keys.STATE]) == -1]
        assert len(unarchived) >= waiting  # a race not confirmed keeps its keys without a TTL
        server.restart()
        while await redis.xlen(keys.ARCHIVE_QUEUE) > 0:
            await asyncio.sleep(0.05)
        archiver.stop()
        await running
        rows = await pool.fetch("SELECT race_id, count(*) OVER () AS n FROM finished_races")
        assert sorted(row["race_id"] for row in rows) == sorted(race_ids)  # nothing lost, nothing twice
        await pool.close()
    finally:
        server.stop()


async def test_a_finished_race_is_archived_and_still_replays_once_redis_no_longer_has_it(
    single_redis_url: str, postgres_url: str, redis: Redis
) -> None:
    async with RaceServer(server_config(single_redis_url, database_url=postgres_url, migrate=True)) as server:
        race = await seated_race(server.url, RaceSettings(seed=15))
        await play(race.ann, race.race_id, ["3S b>5"])
        await race.bob.resign(race.race_id)
        await race.ann.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        assert server.archiver is not None and server.database is not None
        while await server.database.fetchval("SELECT count(*) FROM finished_races WHERE race_id = $1", race.race_id) == 0:
            await asyncio.sleep(0.05)
        before = await race.ann.replay_page(race.race_id)
        await redis.delete(*keys.race_keys(race.race_id))  # the cache TTL ran out, or a FLUSHALL
        after = await race.bob.replay_page(race.race_id)
        assert after.events == before.events and after.race == before.race and after.complete
        ready = server.operations
        assert ready is not None and ready.archive_lag() is not None
        for client in (race.ann, race.bob):
            await client.close()


def test_db_migrate_brings_the_embedded_database_up_to_date_once(postgres_folder: Path) -> None:
    first = flowergarden("db", "migrate", "--postgres-data-dir", str(postgres_folder))
    said, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and "applied 0001_finished_races" in said and f"schema at version {db.LATEST}" in said
    again = flowergarden("db", "migrate", "--postgres-data-dir", str(postgres_folder))
    said, _ = again.communicate(timeout=120)
    assert again.returncode == 0 and "nothing to apply" in said and "applied" not in said


def test_a_record_packed_by_an_earlier_archiver_still_reads_as_the_race() -> None:
    event = msgpack.packb({"type": "result", "at": 1}, use_bin_type=True) + b"\xff"  # not UTF-8: a bin, as it was packed
    earlier = msgpack.packb(
        {"state": {"status": "finished", "profile": "classic"}, "moves": [["5D b>3"], []], "events": [[1, event]]}, use_bin_type=True
    )
    race = ArchivedRace.unpack("r1", earlier)
    assert race.state["profile"] == "classic" and race.moves == (("5D b>3",), ()) and race.events == ((1, event),)
