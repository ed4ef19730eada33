"""The daily deal's finished days in PostgreSQL (docs/STORAGE.md "The daily deal"), on the real PostgreSQL and a
Redis of the test's own (it is flushed): once a day is archived its leaderboard, replays, archive line and the
players' streaks no longer need Redis."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from daily_helpers import stock_daily_pool
from player_helpers import PASSWORD, new_handle, registered
from race_helpers import player, server_config
from redis.asyncio import Redis
from winning_lines import winning_deal

from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from server.services.daily import ARCHIVE_GRACE_MS
from server.store import connect_redis, keys
from shared.daily import DAY_MS, day_of, day_start

pytestmark = pytest.mark.postgres


async def test_a_days_leaderboard_and_streaks_outlive_a_flushed_redis_once_archived(postgres_url: str, tmp_path: Path) -> None:
    _, line = winning_deal()
    with EmbeddedRedis(tmp_path / "redis", persistent=False) as own_redis:
        clock = await stock_daily_pool(own_redis.url)
        day = day_of(clock.now)
        settings = server_config(own_redis.url, database_url=postgres_url, migrate=True)
        ann_handle, bob_handle = new_handle("ann"), new_handle("bob")
        async with RaceServer(settings, daily_clock=clock.now_ms) as server:
            ann, bob = await registered(server.url, ann_handle), await registered(server.url, bob_handle)
            attempt = await ann.daily_start()
            for number, move in enumerate(line):
                clock.now += 1000
                await ann.daily_move(attempt.attempt, number, move)
            bobs = await bob.daily_start()
            await bob.daily_move(bobs.attempt, 0, line[0])
            await bob.daily_stop(bobs.attempt)
            clock.now = day_start(day) + DAY_MS + ARCHIVE_GRACE_MS - 1
            assert server.daily is not None and await server.daily.archive_days(clock.now) == []  # within the grace
            clock.now += 1
            assert await server.daily.archive_days(clock.now) == [day]
            assert await server.daily.archive_days(clock.now) == []  # out of Redis's index: done once
            before = (await bob.daily(day), await bob.daily_board(day), await bob.daily_replay(day, ann_handle), await ann.daily_archive())
            assert before[1].total == 2 and [entry.handle for entry in before[1].entries] == [ann_handle, bob_handle]
            assert (before[3].streak, before[3].best_streak) == (1, 1)
            assert server.redis is not None and 0 < await server.redis.pttl(keys.daily_deal(day))  # a cache now
            for client in (ann, bob):
                await client.close()
        redis = connect_redis(own_redis.url, max_connections=2)
        assert isinstance(redis, Redis)
        await redis.flushall()
        await redis.aclose()
        async with RaceServer(settings, daily_clock=clock.now_ms) as server:
            ann, bob = await player(server.url, "Ann"), await player(server.url, "Bob")
            await ann.login(ann_handle, PASSWORD)
            await bob.login(bob_handle, PASSWORD)
            after = (await bob.daily(day), await bob.daily_board(day), await bob.daily_replay(day, ann_handle), await ann.daily_archive())
            assert [replace(reply, id=0) for reply in after[:3]] == [replace(reply, id=0) for reply in before[:3]]
            assert after[3].days == before[3].days and (after[3].streak, after[3].best_streak) == (1, 1)
            for client in (ann, bob):
                await client.close()
