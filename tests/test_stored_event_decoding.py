"""Stored events are decoded once, at the store boundary; one that does not decode is counted and logged, never lost
silently, and a subscriber moves past it to the events after it."""

from __future__ import annotations

import logging

import msgpack
import pytest
from redis.asyncio import Redis

from server.services.event_hub import Subscription
from server.store import UNDECODABLE_EVENTS, RaceStore, UndecodableEvent, keys
from shared.board import Status
from shared.protocol import Countdown, MoveMade, RaceEvent, Started

RACE = "decodeTest01"


async def write_stream(redis: Redis, entries: list[bytes]) -> None:
    stream = keys.race_keys(RACE)[keys.EVENTS]
    await redis.delete(stream)
    for seq, entry in enumerate(entries, start=1):
        await redis.xadd(stream, {"e": entry}, id=f"0-{seq}")


async def test_an_undecodable_stored_event_is_counted_and_logged_with_its_race_and_seq(redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    redis = Redis.from_url(redis_url)
    try:
        await write_stream(
            redis,
            [
                msgpack.packb({"type": "countdown", "at": 1, "seed": 7, "start_at": 2, "commitment": "00", "seed_chosen": True}),
                msgpack.packb({"type": "teleported", "at": 2}),  # no such event type
                b"\xc1",  # not MessagePack
                msgpack.packb({"type": "started", "at": 3}),
            ],
        )
        before = UNDECODABLE_EVENTS.count
        with caplog.at_level(logging.ERROR, logger="server.store.race_store"):
            events = await RaceStore(redis).events_after(RACE, 0)
        assert [event.seq for event in events] == [1, 2, 3, 4]
        countdown, unknown, garbage, started = events
        assert isinstance(countdown, Countdown) and countdown.race == RACE and not hasattr(countdown, "seed") and len(countdown.columns) == 6
        assert isinstance(unknown, UndecodableEvent) and isinstance(garbage, UndecodableEvent)
        assert isinstance(started, Started)
        assert UNDECODABLE_EVENTS.count == before + 2
        logged = [record.getMessage() for record in caplog.records]
        assert any(f"race {RACE}: stored event 2 does not decode" in line for line in logged)
        assert any(f"race {RACE}: stored event 3 does not decode" in line for line in logged)
    finally:
        await redis.delete(*keys.race_keys(RACE))
        await redis.aclose()


def test_a_subscriber_moves_past_an_undecodable_event_and_receives_the_next() -> None:
    received: list[RaceEvent] = []
    subscription = Subscription(RACE, 0, received.append)
    move = MoveMade(race=RACE, seq=2, at=5, slot=0, move="9S>f", move_seq=1, count=1, left=51, status=Status.PLAYING)
    for event in (UndecodableEvent(race=RACE, seq=1, error="bad"), move):
        subscription.deliver(event)
    assert received == [move] and subscription.last_seq == 2
