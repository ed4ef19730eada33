"""The lasting records in PostgreSQL (issue 26's figures; docs/BENCHMARKS.md "Archive and player records").

    python3 benchmarks/archive.py [--races 20000] [--busy-races 10000] [--rounds 3] [--moves 300] [--rows 1000000]
                                  [--skip-queries]

Starts an embedded Redis and an embedded PostgreSQL (fsync on, as `flowergarden serve` runs it) and measures:

1. **Archive throughput**: ``--races`` finished races of a realistic size (a 30-field state hash, 2 × 15
   actions, 35 events of ~120 B) written into Redis and queued, then archived by one Archiver (``drain``: batches
   of 500, COPY, the next batch read while one is written): races/s, and the CPU per race of the archiver, Redis
   and PostgreSQL with the rate two idle cores would allow at that CPU (the machine is shared: races/s alone
   measures its load).
2. **Redis memory** (``used_memory``): before, with the races finished and queued, and once archived and their
   cache TTL (here 1 s instead of a day) ran out: back to where it started.
3. **Move p99** of a race server with its archiver idle and busy, in ``--rounds`` alternating pairs (idle: an
   empty queue; busy: ``--busy-races`` queued just before): 10 races, each player alternating a move and ``undo``
   ``--moves`` times; the rounds of one kind show the noise.
4. **Query p99** with ``--rows`` archived races (COPY): 2 history rows per race over 50,000 players plus one
   player with 20,000 races, their stats and ratings; history first pages, a deep page by cursor and by offset,
   the leaderboard's first page, a deep page by cursor, a rank.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
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
from server.services.archiver import BATCH, Archiver
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


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (fields 3 on: state, ppid, …)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of process ``pid``, its reaped children and its living ones (PostgreSQL's backends),
    from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    fields = _stat(pid)
    total = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                child = _stat(int(entry.name))
                if int(child[1]) == pid:
                    total += int(child[11]) + int(child[12])
    return total / ticks


def load() -> str:
    """The 1-minute load average, for every figure (2 cores: above 2 the machine is busy)."""
    return f"load {os.getloadavg()[0]:.1f}"


async def archive_throughput(redis: RedisClient, pool: asyncpg.Pool, races: int, pids: dict[str, int]) -> None:
    """Sections 1 and 2; ``pids``: Redis's and PostgreSQL's processes, whose CPU per race is shown."""
    await redis.delete(keys.ARCHIVE_QUEUE)
    baseline = await used_memory(redis)
    await queue_races(redis, races, "t")
    loaded = await used_memory(redis)
    archiver = Archiver(ArchiveQueue(redis, "bench", cache_ttl_ms=1000), PostgresRaceArchive(pool))
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    own, started = time.process_time(), time.perf_counter()
    while await archiver.drain():
        pass
    elapsed = time.perf_counter() - started
    cpu = {"archiver (Python)": time.process_time() - own} | {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    print(f"archive: {archiver.archived:,} races in {elapsed:.1f} s = {archiver.archived / elapsed:,.0f} races/s (batches of {BATCH}, COPY; {load()})")
    per_race = {name: seconds / archiver.archived for name, seconds in cpu.items()}
    print("  CPU per race: " + ", ".join(f"{name} {seconds * 1000:.3f} ms" for name, seconds in per_race.items()))
    ceiling = min(2 / sum(per_race.values()), 1 / max(per_race.values()))
    print(f"  at that CPU per race two idle cores would archive at most {ceiling:,.0f} races/s (each process is one thread)")
    for _ in range(120):  # the active expiry removes the archived races' keys within seconds
        await asyncio.sleep(0.5)
        if await redis.dbsize() <= 2:  # the (empty) queue stream and nothing else
            break
    after = await used_memory(redis)
    print(
        f"redis used_memory: {baseline / 1e6:.1f} MB before, {loaded / 1e6:.1f} MB with {races:,} finished races "
        f"({(loaded - baseline) / races / 1000:.1f} KB each), {after / 1e6:.1f} MB once archived and their cache TTL ran out"
    )


async def move_latency(redis_url: str, database_url: str, redis: RedisClient, moves: int, busy_races: int, rounds: int) -> None:
    """Section 3: the same move load (fresh clients each round) in ``rounds`` pairs, archiver idle then busy, so the
    spread between rounds of one kind shows the noise. Idle: the queue is empty when the round starts (and stays so);
    busy: ``busy_races`` are queued just before it, and the round says whether the queue was still not empty at its
    end (busy throughout)."""
    limits = TransportLimits(rate_per_second=1e6, burst=1_000_000, max_connections_per_address=0, max_unidentified_per_address=0)
    config = ServerConfig(
        redis_url=redis_url, database_url=database_url, port=0, countdown_seconds=0.05, limits=limits, seed_pool_target=0,
        sessions=SessionLimits(max_new_per_address=0), lobby=LobbyLimits(max_open_per_address=0), analysis=False,
    )  # fmt: skip
    p99s: dict[str, list[float]] = {"idle": [], "busy": []}
    async with RaceServer(config) as server:
        assert server.archiver is not None
        for number in range(rounds):
            for label in ("idle", "busy"):
                while await redis.xlen(keys.ARCHIVE_QUEUE):  # the previous busy round's races are archived first
                    await asyncio.sleep(0.2)
                if label == "busy":
                    await queue_races(redis, busy_races, f"m{number}-")
                before = server.archiver.archived
                latencies: list[float] = []
                await asyncio.gather(*(run_race(server.url, index, moves, latencies) for index in range(10)))
                left = await redis.xlen(keys.ARCHIVE_QUEUE)
                p99s[label].append(statistics.quantiles(latencies, n=100)[98])
                print(
                    f"move round {number + 1} ({label}, archived {server.archiver.archived - before:,} races meanwhile, "
                    f"{left:,} still queued at its end; {load()}): {percentiles(latencies)}"
                )
    for label, values in p99s.items():
        print(f"move p99 {label}: " + " / ".join(f"{value * 1000:.1f}" for value in values) + f" ms (median {statistics.median(values) * 1000:.1f})")


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


async def measure(args: argparse.Namespace, redis_url: str, database_url: str, pids: dict[str, int]) -> None:
    redis = connect_redis(redis_url, max_connections=8)
    pool = await db.connect(database_url, max_size=4)
    await db.migrate(pool)
    try:
        await archive_throughput(redis, pool, args.races, pids)
        if args.rounds:
            await move_latency(redis_url, database_url, redis, args.moves, args.busy_races, args.rounds)
        if not args.skip_queries:
            await query_latency(pool, args.rows)
    finally:
        await pool.close()
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--races", type=int, default=20_000, help="finished races archived in section 1")
    parser.add_argument("--busy-races", type=int, default=10_000, help="finished races queued before each busy move round")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of move rounds (idle, busy); 0 leaves out section 3")
    parser.add_argument("--rows", type=int, default=1_000_000, help="archived races behind the query figures")
    parser.add_argument("--moves", type=int, default=300, help="moves per player in each move phase")
    parser.add_argument("--skip-queries", action="store_true", help="leave out section 4 (its fill takes minutes)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        base.chmod(0o755)  # PostgreSQL runs as another user when this runs as root
        with EmbeddedRedis(base / "redis", persistent=False) as redis_server, EmbeddedPostgres(base / "pg") as database:
            assert redis_server.process is not None
            postmaster = int((base / "pg" / "data" / "postmaster.pid").read_text().split()[0])
            asyncio.run(measure(args, redis_server.url, database.url, {"Redis": redis_server.process.pid, "PostgreSQL": postmaster}))


if __name__ == "__main__":
    main()
