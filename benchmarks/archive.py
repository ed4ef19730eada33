"""The lasting records in PostgreSQL (issue 26's figures; docs/BENCHMARKS.md "Archive and player records").

    python3 benchmarks/archive.py [--races 20000] [--rows 1000000] [--moves 300] [--skip-queries]

Starts an embedded Redis and an embedded PostgreSQL (fsync on, as `flowergarden serve` runs it) and measures:

1. **Archive throughput**: ``--races`` finished races of a realistic size (a 30-field state hash, 2 × 15
   actions, 35 events of ~120 B) written into Redis and queued, then archived by one Archiver (batches of 500,
   COPY): races/s.
2. **Redis memory** (``used_memory``): before, with the races finished and queued, and once archived and their
   cache TTL (here 1 s instead of a day) ran out: back to where it started.
3. **Move p99** of a race server with its archiver idle and then busy (the same number of races queued again
   while the players move): 10 races, each player alternating a move and ``undo`` ``--moves`` times.
4. **Query p99** with ``--rows`` archived races (COPY): 2 history rows per race over 50,000 players plus one
   player with 20,000 races, their stats and ratings; history first pages, a deep page by cursor and by offset,
   the leaderboard's first page, a deep page by cursor, a rank.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
import msgpack

from benchmarks.postgres_drivers import timed
from benchmarks.race_moves import run_race
from server.app import RaceServer, ServerConfig
from server.embedded_postgres import EmbeddedPostgres
from server.embedded_redis import EmbeddedRedis
from server.services.archiver import Archiver
from server.services.lobby import LobbyLimits
from server.services.sessions import SessionLimits
from server.store import connect_redis, keys
from server.store import database as db
from server.store.archive_queue import ArchiveQueue
from server.store.connection import RedisClient
from server.store.database import PostgresRaceArchive
from server.store.player_records_sql import PostgresPlayerRecords
from server.transport import TransportLimits

EVENT = msgpack.packb({"type": "move", "slot": 0, "seq": 7, "move": "5D b>3", "count": 12, "at": 1_795_955_790_000, "id": "m" * 32})


def percentiles(samples: list[float]) -> str:
    """p50 / p99 / max of latencies in seconds, as ms."""
    ordered = sorted(samples)
    quantiles = statistics.quantiles(ordered, n=100)
    return f"p50 {quantiles[49] * 1000:6.2f} ms  p99 {quantiles[98] * 1000:6.2f} ms  max {ordered[-1] * 1000:6.2f} ms  (n={len(ordered)})"


async def queue_races(redis: RedisClient, count: int, prefix: str) -> None:
    """``count`` finished races of a realistic size in Redis, each queued for the archive."""
    for start in range(0, count, 500):
        async with redis.pipeline(transaction=False) as pipe:
            for index in range(start, min(count, start + 500)):
                race_id = f"{prefix}{index:07d}"
                race_keys = keys.race_keys(race_id)
                state = {f"field_{n}": f"value-{n}-{index}" for n in range(26)}
                state |= {"status": "finished", "profile": "classic", "rated": "0", "created_at": "1795955700000", "finished_at": "1795955790000"}
                pipe.hset(race_keys[keys.STATE], mapping={name: value for name, value in state.items()})
                pipe.rpush(race_keys[keys.MOVES_0], *(["5D b>3"] * 15))
                pipe.rpush(race_keys[keys.MOVES_1], *(["KH f"] * 15))
                for seq in range(1, 36):
                    pipe.xadd(race_keys[keys.EVENTS], {"e": EVENT}, id=f"0-{seq}")
                pipe.xadd(keys.ARCHIVE_QUEUE, {"race": race_id})
            await pipe.execute()


async def used_memory(redis: RedisClient) -> int:
    """Redis's ``used_memory`` in bytes."""
    info = await redis.info("memory")
    return int(info["used_memory"])


async def archive_throughput(redis: RedisClient, pool: asyncpg.Pool, races: int) -> None:
    """Sections 1 and 2."""
    await redis.delete(keys.ARCHIVE_QUEUE)
    baseline = await used_memory(redis)
    await queue_races(redis, races, "t")
    loaded = await used_memory(redis)
    archiver = Archiver(ArchiveQueue(redis, "bench", cache_ttl_ms=1000), PostgresRaceArchive(pool))
    started = time.perf_counter()
    while await archiver.archive_batch():
        pass
    elapsed = time.perf_counter() - started
    print(f"archive: {archiver.archived:,} races in {elapsed:.1f} s = {archiver.archived / elapsed:,.0f} races/s (batches of 500, COPY)")
    for _ in range(120):  # the active expiry removes the archived races' keys within seconds
        await asyncio.sleep(0.5)
        if await redis.dbsize() <= 2:  # the (empty) queue stream and nothing else
            break
    after = await used_memory(redis)
    print(
        f"redis used_memory: {baseline / 1e6:.1f} MB before, {loaded / 1e6:.1f} MB with {races:,} finished races "
        f"({(loaded - baseline) / races / 1000:.1f} KB each), {after / 1e6:.1f} MB once archived and their cache TTL ran out"
    )


async def move_latency(redis_url: str, database_url: str, redis: RedisClient, moves: int, busy_races: int) -> None:
    """Section 3: the same move load with the archiver idle, then with ``busy_races`` queued meanwhile."""
    limits = TransportLimits(rate_per_second=1e6, burst=1_000_000, max_connections_per_address=0, max_unidentified_per_address=0)
    config = ServerConfig(
        redis_url=redis_url, database_url=database_url, port=0, countdown_seconds=0.05, limits=limits, seed_pool_target=0,
        sessions=SessionLimits(max_new_per_address=0), lobby=LobbyLimits(max_open_per_address=0), analysis=False,
    )  # fmt: skip
    async with RaceServer(config) as server:
        assert server.archiver is not None
        for label in ("idle", "busy"):
            if label == "busy":
                await queue_races(redis, busy_races, "m")
            before = server.archiver.archived
            latencies: list[float] = []
            await asyncio.gather(*(run_race(server.url, index, moves, latencies) for index in range(10)))
            print(f"move ({label:4}, archived {server.archiver.archived - before:,} races meanwhile): {percentiles(latencies)}")


async def fill(pool: asyncpg.Pool, rows: int) -> tuple[list[str], str]:
    """``rows`` archived races by COPY, with their history, stats and ratings; the players and the heavy one."""
    players = [f"p{index:05d}" for index in range(50_000)]
    heavy = "heavy"
    rng = random.Random(26)
    epoch = datetime(2026, 1, 1, tzinfo=UTC)
    record = bytes(range(256)) * 2  # 512 B: the queries never read it
    item = msgpack.packb({"race": "r" * 11, "profile": "classic", "rated": True, "outcome": "won", "opponent": {"player": "x" * 12}, "moves": 40})
    counts: dict[str, int] = {}
    started = time.perf_counter()
    async with pool.acquire() as connection:
        for start in range(0, rows, 100_000):
            races, history = [], []
            for index in range(start, min(rows, start + 100_000)):
                race_id, at = f"r{index:07d}", epoch + timedelta(seconds=index)
                one = rng.randrange(len(players))
                first, second = heavy if index % 50 == 0 else players[one], players[(one + 1 + rng.randrange(len(players) - 1)) % len(players)]
                races.append((race_id, at, "classic", True, record))
                for who in (first, second):
                    history.append((who, race_id, at, item))
                    counts[who] = counts.get(who, 0) + 1
            await connection.copy_records_to_table("finished_races", records=races, columns=["race_id", "finished_at", "profile", "rated", "record"])
            await connection.copy_records_to_table("history", records=history, columns=["player_id", "race_id", "finished_at", "item"])
        await connection.copy_records_to_table(
            "stats", records=[(who, "classic", n, n // 2, n - n // 2, 0, 0, 20 * n, None) for who, n in counts.items()]
        )
        await connection.copy_records_to_table(
            "accounts", records=[(who, who, who, False, "h", "s", "k", epoch) for who in counts]
        )
        await connection.copy_records_to_table(
            "ratings", records=[("classic", who, rng.gauss(1500, 200), 60.0, 0.06, n, epoch, n >= 5) for who, n in counts.items()]
        )
        await connection.execute("ANALYZE")
    print(f"filled {rows:,} races, {2 * rows:,} history rows, {len(counts):,} players in {time.perf_counter() - started:.0f} s (COPY)")
    return players, heavy


async def query_latency(pool: asyncpg.Pool, rows: int) -> None:
    """Section 4."""
    players, heavy = await fill(pool, rows)
    records = PostgresPlayerRecords(pool)
    rng = random.Random(7)
    print("history, first page of a random player:", percentiles(await timed(1000, lambda _: records.history(rng.choice(players), 20))))
    depth = min(10_000, rows // 100)  # the heavy player has rows / 50 races
    middle = await records.history(heavy, 50, offset=depth)
    cursor = middle.next
    assert cursor is not None
    print(f"history, heavy player ({middle.total:,} races), page by cursor at {depth + 50:,}:", percentiles(await timed(300, lambda _: records.history(heavy, 20, before=cursor))))
    print(f"history, heavy player, page by offset {depth:,}:", percentiles(await timed(300, lambda _: records.history(heavy, 20, offset=depth))))
    print("leaderboard, first page:", percentiles(await timed(300, lambda _: records.leaderboard("classic", 20))))
    deep = await records.leaderboard("classic", 20, offset=20_000 * rows // 1_000_000)
    after = deep.next
    assert after is not None
    print(f"leaderboard ({deep.total:,} listed), page by cursor at {deep.first_rank + 19:,}:", percentiles(await timed(300, lambda _: records.leaderboard("classic", 20, after=after))))
    print("rank of a random player:", percentiles(await timed(300, lambda _: records.rank_of("classic", rng.choice(players)))))
    print("stats of a random player:", percentiles(await timed(1000, lambda _: records.stats(rng.choice(players), "classic"))))


async def measure(args: argparse.Namespace, redis_url: str, database_url: str) -> None:
    redis = connect_redis(redis_url, max_connections=8)
    pool = await db.connect(database_url, max_size=4)
    await db.migrate(pool)
    try:
        await archive_throughput(redis, pool, args.races)
        await move_latency(redis_url, database_url, redis, args.moves, args.races)
        if not args.skip_queries:
            await query_latency(pool, args.rows)
    finally:
        await pool.close()
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--races", type=int, default=20_000, help="finished races archived (and queued again for the busy moves)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="archived races behind the query figures")
    parser.add_argument("--moves", type=int, default=300, help="moves per player in each move phase")
    parser.add_argument("--skip-queries", action="store_true", help="leave out section 4 (its fill takes minutes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        base.chmod(0o755)  # PostgreSQL runs as another user when this runs as root
        with EmbeddedRedis(base / "redis", persistent=False) as redis_server, EmbeddedPostgres(base / "pg") as database:
            asyncio.run(measure(args, redis_server.url, database.url))


if __name__ == "__main__":
    main()
