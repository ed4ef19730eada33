"""The daily deal's test server: a clock the test sets, a day of the test's own, the winnable deal in the pool."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest_asyncio
from race_helpers import server_config
from winning_lines import winning_deal

from server.app import RaceServer
from server.store import PooledSeed, SeedPoolStore, connect_redis, keys
from shared.daily import DAY_MS, day_start
from shared.protocol import Difficulty


class TestClock:
    """The daily deal's clock, moved by the test."""

    __test__ = False

    def __init__(self, now: int) -> None:
        self.now = now

    async def now_ms(self) -> int:
        return self.now


@pytest_asyncio.fixture
async def daily_server(single_redis_url: str) -> AsyncIterator[tuple[RaceServer, TestClock]]:
    """A server whose daily clock stands at 10:00 UTC of a day of its own (the suite shares one Redis), with the
    winnable deal of tests/winning_lines.py twice in the medium pool (once with its line, once without)."""
    clock = await stock_daily_pool(single_redis_url)
    async with RaceServer(server_config(single_redis_url), daily_clock=clock.now_ms) as server:
        yield server, clock


async def stock_daily_pool(redis_url: str) -> TestClock:
    """Put the winnable deal in the medium pool of the Redis at ``redis_url`` (before the server starts: its
    background loop draws the day's deal at once); a clock at 10:00 UTC of a day of the test's own."""
    day = day_start("2200-01-01") + secrets.randbelow(300_000) * DAY_MS
    redis = connect_redis(redis_url, max_connections=2)
    try:
        await redis.delete(keys.seed_pool("classic", Difficulty.MEDIUM.value))
        seed, line = winning_deal()
        pool = SeedPoolStore(redis)
        for pooled in (PooledSeed(seed, Difficulty.MEDIUM, line), PooledSeed(seed, Difficulty.MEDIUM, ())):
            await pool.add("classic", pooled, 5, tiered=True)
    finally:
        await redis.aclose()
    return TestClock(day + 10 * 3600_000)
