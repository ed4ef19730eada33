"""Exceptions out of the Redis driver that are none of its own classes (issue 24 item 2).

During Redis Cluster failovers redis-py raised ``AttributeError: 'NoneType' object has no attribute 'writelines'``
(a connection torn down under a command being written): 11 moves answered ``internal_error``, and two background
workers (the booking of finished races, the operator commands) died for good. Here the same tear-down is made on a
real server's real Redis connection: the client must be told ``unavailable`` (resend), the next request pass; a bug of
the store's own code stays an ``internal_error``; and every background loop outlives any exception of one round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from race_helpers import seated_race, server_config
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from websockets.asyncio.server import ServerConnection

from client import RaceClient, ServerError
from server import metrics
from server.app import RaceServer
from server.services.lobby import LobbyLimits
from server.store import StoreUnavailable, connect_redis
from server.store.errors import raised_by_driver, translate_errors
from server.transport import KEEPALIVE_WORKER, Keepalive
from shared.protocol import ErrorCode

MARKER = b"torn-down-writer"
"""A name whose ``hello`` is written on a connection torn down under it (no other command carries it)."""


@pytest.fixture
def tear_down_writer(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Every redis-py command that carries :data:`MARKER` finds its connection's writer gone mid-write (as another task's
    disconnect leaves it during a failover); yields the count of commands so hit."""
    original = AbstractConnection._send_packed_command
    hit: list[int] = []

    async def send(self: AbstractConnection, command: Any) -> None:
        if any(MARKER in bytes(part) for part in command):
            hit.append(1)
            self._writer = None  # what disconnect() does; redis-py's own write then fails on it
        await original(self, command)

    monkeypatch.setattr(AbstractConnection, "_send_packed_command", send)
    yield hit


async def test_a_connection_torn_down_under_a_command_answers_unavailable_and_the_resend_passes(
    race_server: RaceServer, tear_down_writer: list[int]
) -> None:
    client = await RaceClient.connect(race_server.url)
    try:
        with pytest.raises(ServerError) as refused:
            await client.hello(MARKER.decode())
        assert refused.value.code == ErrorCode.UNAVAILABLE  # was internal_error: an AttributeError out of redis-py
        assert tear_down_writer == [1]
        welcome = await client.hello("Ann")  # the driver dropped that connection; the next command gets a good one
        assert welcome.token
    finally:
        await client.close()


@translate_errors
@dataclass
class _Store:
    """A store of this test: one real driver call that fails, one bug of its own code."""

    redis: Redis

    async def driver_call(self) -> None:
        await self.redis.set(MARKER, 1)

    async def own_bug(self) -> None:
        await self.redis.ping()
        raise KeyError("a field the store's own code expected")


async def test_a_driver_failure_is_store_unavailable_but_a_bug_of_the_store_goes_up_as_it_is(
    single_redis_url: str, tear_down_writer: list[int]
) -> None:
    redis = connect_redis(single_redis_url, max_connections=2)
    store = _Store(redis)
    try:
        with pytest.raises(StoreUnavailable) as unavailable:
            await store.driver_call()
        assert isinstance(unavailable.value.__cause__, AttributeError) and raised_by_driver(unavailable.value.__cause__)
        with pytest.raises(KeyError):  # not taken for an outage: the client is told internal_error, the log has it
            await store.own_bug()
    finally:
        await redis.aclose()


@dataclass
class Broken:
    """A method that raises an arbitrary exception on its first call, then does what it did; notes the calls after."""

    original: Callable[..., Awaitable[Any]]
    calls: int = 0
    again: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("injected into a background loop")
        self.again.set()
        return await self.original(*args, **kwargs)


INJECTED: dict[str, list[tuple[str, Callable[[Any], Any], str]]] = {
    "EventHub": [
        ("event hub: reading the race channels", lambda hub: hub.channels, "read"),
        ("event hub: subscribing to race channels", lambda hub: hub.channels, "forget"),
    ],
    "TimerSweeper": [("timers: sweep", lambda sweeper: sweeper, "sweep_once")],
    "PresenceService": [("presence: renewing leases", lambda presence: presence, "renew_all")],
    "LobbyFeed": [("lobby feed: reading", lambda feed: feed.reader, "read")],
    "LobbyService": [("lobby: heartbeat", lambda lobby: lobby, "heartbeat_once")],
    "SeedPool": [("seed pool", lambda pool: pool.store, "size")],
    "AdminExecutor": [("AdminExecutor", lambda admin: admin, "heartbeat")],
    "PlayerBooks": [("players: booking", lambda books: books, "book_once")],
    "QuickMatchService": [("quick match: rated retries", lambda quick: quick, "retry_waiting_once")],
    "RaceAnalyst": [("race analyst", lambda analyst: analyst, "analyse_due")],
    "DailyService": [("daily deal", lambda daily: daily, "deal_of")],
    "ArenaService": [("arena rounds", lambda arenas: arenas, "rounds")],
    "OnlineCounter": [("online: counts", lambda online: online, "report")],
}
"""For each background service, the loop(s) it runs and a method each round calls (where the exception goes in)."""


def _unexpected(worker: str) -> float:
    sample = metrics.REGISTRY.get_sample_value("flowergarden_background_errors_total", {"worker": worker, "cause": "unexpected"})
    return sample or 0.0


async def test_every_background_loop_carries_on_after_an_arbitrary_exception(single_redis_url: str) -> None:
    config = server_config(
        single_redis_url, presence_lease_seconds=0.3, quick_match_retry_seconds=0.1, analysis=True, seed_pool_target=1,
        lobby=LobbyLimits(heartbeat_seconds=0.1, max_open_per_address=0),
    )  # fmt: skip
    async with RaceServer(config) as server:
        assert {type(service).__name__ for service in server.background} == set(INJECTED)  # a new loop is listed here
        if server.seed_pool is not None:  # the pool's round would prove deals in a solver process: it has them all
            server.seed_pool.store.size = _full(server.seed_pool.target)  # type: ignore[method-assign,assignment]
        injected: list[tuple[str, Broken, float]] = []
        for service in server.background:
            for worker, holder_of, method in INJECTED[type(service).__name__]:
                holder = holder_of(service)
                broken = Broken(getattr(holder, method))
                setattr(holder, method, broken)
                injected.append((worker, broken, _unexpected(worker)))
        race = await seated_race(server.url)  # work for the loops that only act on something (a subscription)
        try:
            for worker, broken, before in injected:
                await asyncio.wait_for(broken.again.wait(), 30)  # called again after the exception: the loop goes on
                assert _unexpected(worker) == before + 1, worker
            assert all(not task.done() for task in server._tasks)
        finally:
            await race.close()


def _full(target: int) -> Callable[..., Awaitable[int]]:
    async def size(*_args: object) -> int:
        return target

    return size


async def test_the_keepalive_carries_on_after_an_arbitrary_exception() -> None:
    """The transport's one keepalive task closes every silent connection: if a round's exception ended it, none would
    be closed again until a restart."""
    rounds: list[int] = []
    again = asyncio.Event()

    def connections() -> list[ServerConnection]:
        rounds.append(1)
        if len(rounds) == 1:
            raise RuntimeError("injected into the keepalive")
        again.set()
        return []

    before = _unexpected(KEEPALIVE_WORKER)
    task = asyncio.create_task(Keepalive(connections, interval=0.01, timeout=0.01).run())
    try:
        await asyncio.wait_for(again.wait(), 30)
        assert not task.done() and _unexpected(KEEPALIVE_WORKER) == before + 1
    finally:
        task.cancel()
