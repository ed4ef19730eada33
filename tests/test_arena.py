"""Arena tournaments' core on a real Redis, with a clock the test sets: three players through pairing, a streak, a
berserk win and the end of the clock; two pairers and two bookers at once (as two server processes) put nobody in two
races and book no race twice."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest_asyncio

from server.services.arena import CLAIM_LEASE_MS, ArenaService, Side
from server.services.errors import ServiceError
from server.store import ArenaStore, Identity, connect_redis
from server.store.connection import RedisClient
from shared.protocol import ErrorCode, Outcome

START = 1_900_000_000_000


class Arena:
    """One service (as one process) on its own connection, with the races it started and the test's clock."""

    def __init__(self, redis: RedisClient, clock: list[int]) -> None:
        self.started: list[tuple[str, str, str]] = []
        self.clock = clock

        async def now() -> int:
            return clock[0]

        async def start(arena: str, race: str, a: str, b: str) -> None:
            self.started.append((race, a, b))

        self.service = ArenaService(ArenaStore(redis), now, start)


@pytest_asyncio.fixture
async def two_processes(single_redis_url: str) -> AsyncIterator[tuple[Arena, Arena]]:
    clients = [connect_redis(single_redis_url, max_connections=8) for _ in range(2)]
    clock = [START]
    yield Arena(clients[0], clock), Arena(clients[1], clock)
    for client in clients:
        await client.aclose()


async def test_three_players_through_pairing_a_streak_a_berserk_win_and_the_end_of_the_clock(two_processes: tuple[Arena, Arena]) -> None:
    one, _ = two_processes
    arena = one.service
    tournament = await arena.create(f"hourly {secrets.token_hex(3)}", START, 60_000)
    for player, rating in (("ann", 1500.0), ("bob", 1600.0), ("cat", 1400.0)):
        await arena.join(tournament, Identity(player, player.title(), player.title()), rating)

    def side(player: str, *, berserk: bool = False) -> Side:
        return Side(player, berserk, 12)

    (race, a, b), = await arena.pair_round(tournament)  # three free: one waits
    assert {a, b} == {"bob", "ann"}  # equal scores: the highest ratings first
    assert await arena.pair_round(tournament) == []  # cat alone is free
    await arena.finished(tournament, race, side("ann"), side("bob"), Outcome.WON)
    (race, a, b), = await arena.pair_round(tournament)
    assert {a, b} == {"ann", "cat"}  # not bob again: cat is free
    await arena.finished(tournament, race, side("ann"), side("cat"), Outcome.WON)
    (race, a, b), = await arena.pair_round(tournament)
    assert {a, b} == {"ann", "bob"}
    await arena.finished(tournament, race, side("ann", berserk=True), side("bob"), Outcome.WON)  # on fire, berserk
    table = await arena.standings(tournament)
    assert (table[0].player, table[0].score, table[0].fire) == ("ann", 2 + 2 + 4 + 1, True)
    assert table[0].performance == (1600 + 1400 + 1600) / 3

    (race, a, b), = await arena.pair_round(tournament)
    one.clock[0] = START + 60_000  # the clock runs out: the race under way still counts, no new pairing starts
    await arena.finished(tournament, race, side(a), side(b), Outcome.DRAW)
    assert await arena.pair_round(tournament) == []
    table = await arena.standings(tournament)
    assert sum(line.games for line in table) == 8


async def test_two_processes_pair_nobody_twice_and_book_each_race_once(two_processes: tuple[Arena, Arena]) -> None:
    one, two = two_processes
    tournament = await one.service.create("busy", START, 3_600_000)
    players = [f"p{number:02}" for number in range(40)]
    for number, player in enumerate(players):
        await one.service.join(tournament, Identity(player, player, player), 1500.0 + number)
    first, second = await asyncio.gather(one.service.pair_round(tournament), two.service.pair_round(tournament))
    started = first + second
    seated = [player for _, a, b in started for player in (a, b)]
    assert len(seated) == len(set(seated)) == 40  # everybody in exactly one race
    booked = await asyncio.gather(*(
        service.finished(tournament, race, Side(a, False, 9), Side(b, False, 9), Outcome.WON)
        for race, a, b in started for service in (one.service, two.service)
    ))  # fmt: skip
    assert sum(booked) == len(started) == 20
    table = await one.service.standings(tournament)
    assert sum(line.score for line in table) == 2 * 20 and sum(line.games for line in table) == 40


async def test_a_pair_claimed_by_a_process_killed_before_its_race_is_paired_again(two_processes: tuple[Arena, Arena]) -> None:
    one, two = two_processes
    tournament = await one.service.create("kill -9", START, 3_600_000)
    for player in ("ann", "bob"):
        await one.service.join(tournament, Identity(player, player, player), 1500.0)
    store = one.service.store
    assert await store.claim(tournament, [("ann", "bob", "deadprocess1")], START) == ["deadprocess1"]  # then killed
    assert await two.service.pair_round(tournament) == []  # both are busy
    assert await two.service.release_stale(tournament) == 0  # within the lease: its process may still create it
    two.clock[0] = START + CLAIM_LEASE_MS + 1
    assert await two.service.release_stale(tournament) == 2
    assert not await store.confirm(tournament, "deadprocess1", "ann", "bob", two.clock[0])  # had it only been slow, it creates no race now
    ((race, a, b),) = await two.service.pair_round(tournament)
    assert {a, b} == {"ann", "bob"} and two.started == [(race, a, b)] and one.started == []


async def test_two_processes_joining_at_once_never_let_one_more_in_than_the_cap(two_processes: tuple[Arena, Arena]) -> None:
    one, two = two_processes
    tournament = await one.service.create("capped", START, 3_600_000, max_players=4)
    players = [f"q{number:02}" for number in range(12)]

    async def join(service: ArenaService, player: str) -> bool:
        try:
            await service.join(tournament, Identity(player, player, player), 1500.0)
        except ServiceError as error:
            assert error.code is ErrorCode.ARENA_FULL and error.expected == 4
            return False
        return True

    joined = await asyncio.gather(*(join(one.service if number % 2 else two.service, player) for number, player in enumerate(players)))
    assert sum(joined) == 4 and (await one.service.info(tournament)).players == 4


async def test_a_pair_confirmed_by_a_process_killed_before_its_race_started_is_started_by_another(two_processes: tuple[Arena, Arena]) -> None:
    one, two = two_processes
    tournament = await one.service.create("kill -9 after the confirmation", START, 3_600_000)
    for player in ("ann", "bob"):
        await one.service.join(tournament, Identity(player, player, player), 1500.0)
    store = one.service.store
    assert await store.claim(tournament, [("ann", "bob", "deadprocess2")], START) == ["deadprocess2"]
    assert await store.confirm(tournament, "deadprocess2", "ann", "bob", START)  # then killed before creating the race
    await two.service.release_stale(tournament)
    assert two.started == []  # within the lease: its process may still be creating it
    two.clock[0] = START + CLAIM_LEASE_MS + 1
    assert await two.service.release_stale(tournament) == 0
    assert two.started == [("deadprocess2", "ann", "bob")]  # started by the other process: the pairing is not lost
    assert await store.stale_starting(tournament, two.clock[0] + 1) == []  # once
    assert await two.service.pair_round(tournament) == []  # both are in that race, nobody is paired twice


async def test_a_race_whose_second_seat_is_refused_frees_both_players_for_the_next_round(two_processes: tuple[Arena, Arena]) -> None:
    one, _ = two_processes
    tournament = await one.service.create("refused seat", START, 3_600_000)
    for player in ("ann", "bob"):
        await one.service.join(tournament, Identity(player, player, player), 1500.0)
    store = one.service.store
    assert await store.claim(tournament, [("ann", "bob", "refusedseat1")], START) == ["refusedseat1"]
    assert await store.confirm(tournament, "refusedseat1", "ann", "bob", START)
    assert await store.free_race(tournament, "refusedseat1", START) == 2  # e.g. a rated arena's ladder refused the join
    assert await store.stale_starting(tournament, START + CLAIM_LEASE_MS + 1) == []  # not taken over later
    ((_, a, b),) = await one.service.pair_round(tournament)
    assert {a, b} == {"ann", "bob"}
