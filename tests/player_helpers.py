"""Helpers of the player tests: registered clients and rated races decided by abandonment."""

from __future__ import annotations

import asyncio
import secrets
from typing import TypeVar

from lobby_helpers import wait_until
from race_helpers import player
from websockets.asyncio.client import connect

from client import RaceClient
from server.app import RaceServer
from server.store import keys
from shared.protocol import RaceEvent, RaceResult, RaceSettings, Started

PASSWORD = "correct horse battery"


def new_handle(prefix: str) -> str:
    """A handle no other test of the session registered (Redis is shared by the whole session)."""
    return f"{prefix}{secrets.token_hex(4)}"


SLOW_HASHES = 60.0
"""How long a request may wait for its reply where many password hashes queue on a busy 2-core machine."""


async def from_address(url: str, address: str, name: str) -> RaceClient:
    """A client connected from loopback ``address`` (127.x.y.z: another client address to the server) that said hello."""
    connection = await connect(url, local_addr=(address, 0), max_size=1 << 20, compression=None)
    client = RaceClient(connection, url=url, request_timeout=SLOW_HASHES)
    await client.hello(name)
    return client


async def registered(url: str, handle: str, password: str = PASSWORD) -> RaceClient:
    """A connected client logged in to a freshly registered account."""
    client = await player(url, handle)
    await client.register(handle, password)
    return client


async def rated_race(winner: RaceClient, loser: RaceClient, settings: RaceSettings | None = None) -> RaceResult:
    """``winner`` creates a rated race, ``loser`` joins and then drops its connection for good: past the (1 s) grace
    period its attempt ends as abandoned, which loses a rated race. Returns the result the winner receives."""
    seated = await winner.create(settings or RaceSettings(rated=True, grace=1))
    race_id = seated.race.race
    await loser.join(race_id)
    await event_of(winner, race_id, Started)
    await loser.close()
    return await event_of(winner, race_id, RaceResult, timeout=15)


async def set_rating(server: RaceServer, client: RaceClient, rating: float) -> None:
    """Give a registered player a settled rating (as if it had played many rated races), where the server keeps
    ratings: its PostgreSQL, else Redis."""
    assert server.redis is not None and client.session is not None
    if server.database is not None:
        await server.database.execute(
            "INSERT INTO ratings (profile, player_id, rating, deviation, volatility, games, last_at, listed) "
            "VALUES ('classic', $1, $2, 60, 0.06, 40, to_timestamp(0), false) ON CONFLICT (player_id, profile) DO UPDATE SET "
            "rating = EXCLUDED.rating, deviation = 60, volatility = 0.06, games = 40, last_at = to_timestamp(0)",
            client.session.player, rating,
        )  # fmt: skip
        return
    await server.redis.hset(
        keys.rating_key("classic", client.session.player),
        mapping={"rating": rating, "deviation": 60, "volatility": 0.06, "games": 40, "last_at": 0},
    )


E = TypeVar("E", bound=RaceEvent)


async def event_of(client: RaceClient, race_id: str, kind: type[E], timeout: float = 10.0) -> E:
    """The client's next event of type ``kind`` of race ``race_id`` (events of its other races are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            event = await client.next_event(timeout)
            if isinstance(event, kind) and event.race == race_id:
                return event


async def booked(server: RaceServer, race_id: str) -> None:
    """Wait until the race's result is booked for its players (ratings, history, stats)."""
    assert server.books is not None
    store = server.books.store

    async def done() -> bool:
        return race_id not in await store.pending(10_000)

    await wait_until(done, what=f"the booking of race {race_id}")
    await asyncio.sleep(0)
