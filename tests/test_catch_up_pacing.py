"""Catch-up of thousands of missed events is paced by the client's socket (issue 17 §2): a resume with
``sync after 0``, a reconnect and a ``watch`` from the start of a long race each get every event once, in order,
over the bounded outgoing queue; delayed spectators share one buffer per race instead of a copy each."""

from __future__ import annotations

import asyncio

import pytest
from race_helpers import events_until, player, seated_race, server_config, store_of

from client import RaceClient
from server.app import RaceServer
from server.transport import TransportLimits
from shared import Board, Rules, move_text
from shared.protocol import RaceEvent, RaceSettings

ACTIONS_PER_PLAYER = 1600
"""Two players alternating a move and its undo: 3,200 events, more than ten outgoing queues' worth."""


async def play_long(client: RaceClient, race_id: str, move: str, actions: int) -> None:
    """Alternate ``move`` and ``undo``, 50 requests in flight at a time (the sequence numbers say the order)."""
    for start in range(0, actions, 50):
        batch = [
            client.move(race_id, move if index % 2 == 0 else "undo", seq=index)
            for index in range(start, min(actions, start + 50))
        ]
        await asyncio.gather(*batch)


@pytest.fixture
async def long_race_server(redis_url: str) -> RaceServer:
    limits = TransportLimits(rate_per_second=100_000, burst=100_000)  # the outgoing queue keeps its usual bound
    async with RaceServer(server_config(redis_url, limits=limits, max_actions=ACTIONS_PER_PLAYER)) as server:
        yield server


async def long_race(server: RaceServer) -> tuple[str, RaceClient, RaceClient, int]:
    """A running race with both players' 1,600 actions stored; returns its id, the players and its last event."""
    race = await seated_race(server.url, RaceSettings(seed=1, undo=True, spectator_delay=0))
    move = move_text(Board.deal(1, Rules(undo=True)).legal_moves()[0])
    await asyncio.gather(play_long(race.ann, race.race_id, move, ACTIONS_PER_PLAYER), play_long(race.bob, race.race_id, move, ACTIONS_PER_PLAYER))
    record = await store_of(server).load_race(race.race_id)
    assert record is not None
    last = record.event_seq
    assert last > 2 * ACTIONS_PER_PLAYER
    return race.race_id, race.ann, race.bob, last


def assert_every_event_once_in_order(events: list[RaceEvent], after: int, last: int) -> None:
    assert [event.seq for event in events] == list(range(after + 1, last + 1))


async def test_a_resume_after_thousands_of_missed_events_gets_them_all_without_being_dropped(long_race_server: RaceServer) -> None:
    race_id, ann, bob, last = await long_race(long_race_server)
    try:
        again = await RaceClient.connect(long_race_server.url)
        await again.hello("Ann", ann.token)
        await again.sync(race_id, after=0)
        events = await events_until(again, lambda event: event.seq == last, timeout=60)
        assert_every_event_once_in_order(events, 0, last)
        assert long_race_server.transport is not None and long_race_server.transport.stats.dropped_slow == 0
        await again.close()
    finally:
        await ann.close()
        await bob.close()


async def test_a_reconnect_catches_up_thousands_of_events_from_where_it_left(long_race_server: RaceServer) -> None:
    race_id, ann, bob, last = await long_race(long_race_server)
    try:
        await events_until(ann, lambda event: event.seq == last, timeout=60)  # what arrived live
        ann.last_seq[race_id] = 5  # as if the connection had dropped right after event 5
        await ann.reconnect()
        events = await events_until(ann, lambda event: event.seq == last, timeout=60)
        assert_every_event_once_in_order([event for event in events if event.seq > 5], 5, last)
        assert long_race_server.transport is not None and long_race_server.transport.stats.dropped_slow == 0
    finally:
        await ann.close()
        await bob.close()


async def test_watching_a_long_race_from_its_start_delivers_every_event_paced(long_race_server: RaceServer) -> None:
    race_id, ann, bob, last = await long_race(long_race_server)
    eve = await player(long_race_server.url, "Eve")
    try:
        await eve.watch(race_id, after=0)
        events = await events_until(eve, lambda event: event.seq == last, timeout=60)
        assert_every_event_once_in_order(events, 0, last)
        assert long_race_server.transport is not None and long_race_server.transport.stats.dropped_slow == 0
    finally:
        await eve.close()
        await ann.close()
        await bob.close()
