"""psycopg 3 (async) against asyncpg on an embedded PostgreSQL: the measurement behind docs/decisions/0001.

    python3 benchmarks/postgres_drivers.py [--round-trips 2000] [--rows 20000]

Starts an embedded PostgreSQL (unix socket, fsync off: the drivers are measured, not the disk) and, for each
driver, on one connection: the latency of one-row INSERT and of a primary-key SELECT (p50, p99 in µs), then the
throughput of a batch insert of ``--rows`` archive-sized rows (~7 KB of bytea each) by executemany and by COPY.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import asyncpg
import psycopg

from server.embedded_postgres import EmbeddedPostgres

TABLE = "CREATE TABLE bench (id text PRIMARY KEY, finished_at bigint NOT NULL, record bytea NOT NULL)"
PAYLOAD = bytes(range(256)) * 28  # ~7 KB: a finished race record's size (STORAGE.md)


def percentiles(samples: list[float]) -> str:
    """p50 and p99 of latencies in seconds, as µs."""
    ordered = sorted(samples)
    return f"p50 {statistics.median(ordered) * 1e6:7.0f} µs  p99 {ordered[int(len(ordered) * 0.99)] * 1e6:7.0f} µs"


async def timed(count: int, step: Callable[[int], Awaitable[object]]) -> list[float]:
    """The latency of each of ``count`` awaited steps."""
    samples = []
    for index in range(count):
        start = time.perf_counter()
        await step(index)
        samples.append(time.perf_counter() - start)
    return samples


async def bench_psycopg(url: str, round_trips: int, rows: int) -> None:
    """psycopg 3's AsyncConnection (autocommit, server-side prepared after the 5th execution by default)."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("DROP TABLE IF EXISTS bench")
        await conn.execute(TABLE)
        inserts = await timed(round_trips, lambda i: conn.execute("INSERT INTO bench VALUES (%s, %s, %s)", (f"r{i}", i, PAYLOAD)))
        selects = await timed(round_trips, lambda i: conn.execute("SELECT record FROM bench WHERE id = %s", (f"r{i}",)))
        print(f"psycopg  insert {percentiles(inserts)}   select {percentiles(selects)}")
        batch = [(f"b{i}", i, PAYLOAD) for i in range(rows)]
        start = time.perf_counter()
        async with conn.cursor() as cursor:
            await cursor.executemany("INSERT INTO bench VALUES (%s, %s, %s)", batch)
        many = time.perf_counter() - start
        await conn.execute("DELETE FROM bench WHERE id LIKE 'b%'")
        start = time.perf_counter()
        async with conn.cursor() as cursor, cursor.copy("COPY bench (id, finished_at, record) FROM STDIN") as copy:
            for row in batch:
                await copy.write_row(row)
        copied = time.perf_counter() - start
        print(f"psycopg  executemany {rows / many:8.0f} rows/s   COPY {rows / copied:8.0f} rows/s")


async def bench_asyncpg(url: str, round_trips: int, rows: int) -> None:
    """asyncpg's Connection (prepared statements cached by default)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DROP TABLE IF EXISTS bench")
        await conn.execute(TABLE)
        inserts = await timed(round_trips, lambda i: conn.execute("INSERT INTO bench VALUES ($1, $2, $3)", f"r{i}", i, PAYLOAD))
        selects = await timed(round_trips, lambda i: conn.fetchval("SELECT record FROM bench WHERE id = $1", f"r{i}"))
        print(f"asyncpg  insert {percentiles(inserts)}   select {percentiles(selects)}")
        batch = [(f"b{i}", i, PAYLOAD) for i in range(rows)]
        start = time.perf_counter()
        await conn.executemany("INSERT INTO bench VALUES ($1, $2, $3)", batch)
        many = time.perf_counter() - start
        await conn.execute("DELETE FROM bench WHERE id LIKE 'b%'")
        start = time.perf_counter()
        await conn.copy_records_to_table("bench", records=batch, columns=["id", "finished_at", "record"])
        copied = time.perf_counter() - start
        print(f"asyncpg  executemany {rows / many:8.0f} rows/s   COPY {rows / copied:8.0f} rows/s")
    finally:
        await conn.close()


def main() -> None:
    """Run both drivers twice each, alternating, on one embedded PostgreSQL."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--round-trips", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, EmbeddedPostgres(Path(folder) / "pg", fsync=False) as server:
        print(f"PostgreSQL {server.binaries.major if server.binaries else '?'} ({server.binaries.origin if server.binaries else '?'})")
        for _ in range(2):
            asyncio.run(bench_psycopg(server.url, args.round_trips, args.rows))
            asyncio.run(bench_asyncpg(server.url, args.round_trips, args.rows))


if __name__ == "__main__":
    main()
