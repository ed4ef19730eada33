"""The players' lasting records in PostgreSQL, the system of record (docs/STORAGE.md "Player records"), on the
real PostgreSQL and Redis: what survives a flushed Redis, what answers while PostgreSQL is down, keyset pages on
their indexes."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import asyncpg
import pytest
from player_helpers import PASSWORD, booked, new_handle, rated_race, registered
from race_helpers import player, server_config
from redis.asyncio import Redis

from client import ServerError
from server.app import RaceServer
from server.embedded_postgres import EmbeddedPostgres
from server.embedded_redis import EmbeddedRedis
from server.store import AccountRecord, InvalidCursor, SeatBooking, StoredRating, connect_redis
from server.store.player_records_sql import PostgresPlayerRecords
from shared.protocol import Outcome, RaceSettings

pytestmark = pytest.mark.postgres


async def test_accounts_ratings_and_histories_outlive_a_flushed_redis(postgres_url: str, tmp_path: Path) -> None:
    """Redis of its own (the test flushes it): a rated race booked and archived, FLUSHALL, a new server on the same
    stores still logs the players in and shows their history, stats, ratings, the leaderboard and the replay."""
    with EmbeddedRedis(tmp_path / "redis", persistent=False) as own_redis:
        settings = server_config(own_redis.url, database_url=postgres_url, migrate=True, provisional_deviation=1000.0)
        ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
        async with RaceServer(settings) as server:
            ann, bob = await registered(server.url, ann_handle), await registered(server.url, bob_handle)
            result = await rated_race(ann, bob)  # Bob abandons: Ann wins
            await booked(server, result.race)
            assert server.database is not None
            while await server.database.fetchval("SELECT count(*) FROM finished_races WHERE race_id = $1", result.race) == 0:
                await asyncio.sleep(0.05)  # archived
            before = (await ann.history(), await ann.stats(), await ann.leaderboard(), await ann.replay_page(result.race))
            await ann.close()
            rows = await server.database.fetch("SELECT player_id, outcome FROM rated_results WHERE race_id = $1", result.race)
            assert sorted(row["outcome"] for row in rows) == ["lost", "won"]  # one rating-history row per rated result
            created = await server.database.fetchval("SELECT created_at FROM accounts WHERE handle = $1", ann_handle)
            assert created is not None
        redis = connect_redis(own_redis.url, max_connections=2)
        assert isinstance(redis, Redis)
        await redis.flushall()
        await redis.aclose()
        async with RaceServer(settings) as server:
            ann = await player(server.url, "Ann")
            await ann.login(ann_handle, PASSWORD)
            history, stats, board, replay = await ann.history(), await ann.stats(), await ann.leaderboard(), await ann.replay_page(result.race)
            assert [item.race for item in history.items] == [result.race] and history.items[0].outcome == "won"
            assert (history.items, history.total, stats.profiles) == (before[0].items, before[0].total, before[1].profiles)
            assert board.own_rating == before[2].own_rating and board.own is not None and board.own.handle == ann_handle
            assert replay.events == before[3].events and replay.complete
            with pytest.raises(ServerError) as taken:
                await (await player(server.url, "Thief")).register(bob_handle, PASSWORD)
            assert taken.value.code == "handle_taken"
            await ann.close()


async def test_registration_and_login_answer_unavailable_while_postgresql_is_down(redis_url: str, postgres_folder: Path) -> None:
    database = EmbeddedPostgres(postgres_folder, fsync=False)
    database.start()
    try:
        async with RaceServer(server_config(redis_url, database_url=database.url, migrate=True)) as server:
            handle = new_handle("Ann")
            await (await registered(server.url, handle)).close()
            database.kill()
            guest = await player(server.url, "Guest")
            for attempt in (guest.login(handle, PASSWORD), guest.register(new_handle("Bob"), PASSWORD)):
                with pytest.raises(ServerError) as refused:
                    await attempt
                assert refused.value.code == "unavailable"
            seated = await guest.create(RaceSettings())  # a guest's race goes on: live races live in Redis
            assert seated.race.race
            database.restart()
            back = await player(server.url, "Ann")
            await back.login(handle, PASSWORD)  # the pool connects again
            for client in (guest, back):
                await client.close()
    finally:
        database.stop()


def seat(player: str, opponent: str, race: str, outcome: Outcome, rating: float | None) -> SeatBooking:
    """One seat's booking of a classic race."""
    stored = None if rating is None else StoredRating(rating, 60.0, 0.06, games=0, last_at=1_700_000_000_000)
    item = {"race": race, "outcome": outcome.value}
    return SeatBooking(
        player=player, handle=player, bot=False, profile="classic", opponent=opponent, item=item, outcome=outcome,
        cleared=False, time_ms=1000, count=3, rating=stored, provisional=False,
    )  # fmt: skip


async def test_history_and_leaderboard_pages_follow_their_cursors_on_their_indexes(pool: asyncpg.Pool) -> None:
    records = PostgresPlayerRecords(pool)
    players = [f"p{index:02d}" for index in range(12)]
    for name in players:
        await pool.execute(
            "INSERT INTO accounts VALUES ($1, $1, lower($1), false, 'h', 's', 'k', now())", name
        )
    for index in range(30):
        first, second = players[index % 12], players[(index + 1 + index // 12) % 12]
        race = f"r{index:03d}"
        rating = 1500.0 + (index % 5) * 10  # ties on purpose: the player id orders them
        assert await records.book(
            race, 1_700_000_000_000 + (index // 2) * 1000, "classic",
            [seat(first, second, race, Outcome.WON, rating), seat(second, first, race, Outcome.LOST, rating)], min_opponents=1,
        )  # fmt: skip
    assert not await records.book("r000", 1_700_000_000_000, "classic", [seat("p00", "p01", "r000", Outcome.WON, 1.0)])
    everything = await records.history("p00", 50)
    assert everything.next is None and everything.total == len(everything.items) > 3
    pages, cursor = [], None
    while True:
        page = await records.history("p00", 2, before=cursor)
        pages += page.items
        if page.next is None:
            break
        cursor = page.next
    assert pages == everything.items  # same rows, same order (equal finished_at: the race id orders them)
    board = await records.leaderboard("classic", 100)
    lines, cursor, ranks = [], None, []
    while True:
        part = await records.leaderboard("classic", 5, after=cursor)
        lines += part.lines
        ranks.append(part.first_rank)
        if part.next is None:
            break
        cursor = part.next
    assert lines == board.lines and ranks == list(range(1, len(lines) + 1, 5)) and board.total == len(lines) == 12
    assert [await records.rank_of("classic", line.player) for line in lines] == list(range(len(lines)))
    with pytest.raises(InvalidCursor):
        await records.history("p00", 2, before="@3")
    with pytest.raises(InvalidCursor):
        await records.leaderboard("classic", 2, after="not-a-rating:p01")
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute("SET LOCAL enable_seqscan = off")  # the plan a big table gets, on a small one
        history_plan = await plan_of(connection, 
            "EXPLAIN SELECT race_id FROM history WHERE player_id = 'p00' AND (finished_at, race_id) < (now(), 'r') "
            "ORDER BY finished_at DESC, race_id DESC LIMIT 3"
        )
        board_plan = await plan_of(connection, 
            "EXPLAIN SELECT player_id FROM ratings WHERE profile = 'classic' AND listed AND (rating, player_id) < (1600, 'p') "
            "ORDER BY rating DESC, player_id DESC LIMIT 3"
        )
    assert "history_newest_first" in history_plan and "Sort" not in history_plan
    assert "ratings_leaderboard" in board_plan and "Sort" not in board_plan


async def plan_of(connection: asyncpg.pool.PoolConnectionProxy, query: str) -> str:
    """The query's plan, as EXPLAIN prints it."""
    return "\n".join(row[0] for row in await connection.fetch(query))


async def test_an_account_is_one_per_handle_in_any_case_and_keeps_its_created_at(pool: asyncpg.Pool) -> None:
    records = PostgresPlayerRecords(pool)
    account = AccountRecord("Ann", secrets.token_hex(4), False, "aa", "bb", "scrypt", 1_700_000_000_123)
    assert await records.register(account)
    assert not await records.register(AccountRecord("ANN", secrets.token_hex(4), False, "cc", "dd", "scrypt", 0))
    assert await records.account("aNN") == account  # created_at kept to the millisecond
    await records.set_secret("ann", "ee", "ff", "scrypt:new")
    changed = await records.account("Ann")
    assert changed is not None and (changed.secret_hash, changed.salt, changed.kdf) == ("ee", "ff", "scrypt:new")
