"""The event hub's fan-out (issue 18): one channel per followed race, delayed spectators sharing one buffer, no lost
event when the channel connection dies, one reply per request under a set-up burst with the blocking-read pool
squeezed, and watch churn refused past its budget."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from player_helpers import from_address
from race_helpers import assert_stream_resumed, events_until, play, player, seated_race, server_config, store_of
from redis.asyncio import Redis
from winning_lines import winning_deal

from client import RaceClient, ServerError
from client.race_client import Unsolicited
from server.app import BLOCKING_POOL_SIZE, RaceServer
from server.services.event_hub import RaceFeed
from server.store import DirectRaceChannels, StoredEvent
from shared.protocol import Countdown, MoveMade, Progress, RaceSettings, Seated, Started


async def test_delayed_spectators_share_one_buffer_per_race_instead_of_a_copy_each(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=2))
        watchers = [await player(server.url, f"W{index}") for index in range(30)]
        try:
            snapshots = [await watcher.watch(race.race_id) for watcher in watchers]
            await play(race.ann, race.race_id, line[:8])
            await play(race.bob, race.race_id, line[:8])
            assert server.hub is not None
            # Every event of the race is held for 30 delayed spectators: one copy in the race's feed, not 30.
            record = await store_of(server).load_race(race.race_id)
            assert record is not None
            assert 16 <= server.hub.buffered_events() <= record.event_seq
            for watcher, snapshot in zip(watchers, snapshots, strict=True):
                seen = await events_until(watcher, lambda event: isinstance(event, MoveMade) and event.slot == 1 and event.move_seq == 8)
                assert [event.seq for event in seen] == list(range(snapshot.race.event_seq + 1, seen[-1].seq + 1))
                assert sum(isinstance(event, MoveMade) for event in seen) == 16
        finally:
            await race.close()
            for watcher in watchers:
                await watcher.close()


async def test_a_race_is_followed_only_by_the_processes_with_a_recipient(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as first, RaceServer(server_config(redis_url)) as second:
        race = await seated_race(first.url)
        try:
            assert first.hub is not None and second.hub is not None
            assert (first.hub.feed_count(), second.hub.feed_count()) == (1, 0)
        finally:
            await race.close()


async def test_events_published_while_the_channel_connection_is_down_still_arrive_in_order(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
        eve = await player(server.url, "Eve")
        admin = Redis.from_url(redis_url)
        try:
            watching = await eve.watch(race.race_id)
            await play(race.bob, race.race_id, line[:2])
            assert await admin.client_kill_filter(_type="pubsub") >= 1  # the hub's subscriptions are gone
            await play(race.bob, race.race_id, line[2:6])  # published while nobody listens
            await assert_stream_resumed(eve, race, watching.race.event_seq, 6)
        finally:
            await admin.aclose()
            await race.close()
            await eve.close()


async def accepted(request: Callable[[], Awaitable[Seated]]) -> Seated:
    """``request()`` asked again while the server answers ``overloaded`` (a short pause here instead of its retry-after)."""
    while True:
        try:
            return await request()
        except ServerError as error:
            if error.code != "overloaded":
                raise
            await asyncio.sleep(0.05)


async def test_a_set_up_burst_with_the_blocking_read_pool_squeezed_gets_one_reply_per_request_and_every_start(
    redis_url: str,
) -> None:
    # The command pool is small too: 40 races set up at once must queue for connections (back-pressure).
    async with RaceServer(server_config(redis_url, redis_pool_size=4)) as server:
        assert server.reader_redis is not None
        pool = server.reader_redis.connection_pool
        # Take every blocking-read connection the lobby feed does not hold (the hub's channels have a connection of
        # their own on one Redis, one of this pool on a Cluster): nothing else may need one.
        assert server.hub is not None
        held = 1 if isinstance(server.hub.channels, DirectRaceChannels) else 2
        squeezed = [await pool.get_connection() for _ in range(BLOCKING_POOL_SIZE - held)]
        creators = [await player(server.url, f"A{index}") for index in range(20)]
        joiners = [await player(server.url, f"B{index}") for index in range(20)]
        try:
            # Past its capacity the server refuses new races with `overloaded` (one reply: the request is not done) and
            # the client asks again, as PROTOCOL.md says; a seat once given must reach its start.
            created = await asyncio.gather(*(accepted(lambda c=creator, i=index: c.create(RaceSettings(seed=i + 1))) for index, creator in enumerate(creators)))
            joined = await asyncio.gather(*(accepted(lambda j=joiner, r=seated.race.race: j.join(r)) for joiner, seated in zip(joiners, created, strict=True)))
            assert all(isinstance(reply, Seated) for reply in [*created, *joined])
            for client in [*creators, *joiners]:
                await client.wait_for(Countdown)
                await client.wait_for(Started)
            await asyncio.sleep(0.2)  # a second reply to any request would have arrived by now
            for client in [*creators, *joiners]:
                while not client._events.empty():
                    assert not isinstance(client._events.get_nowait(), Unsolicited)
        finally:
            for connection in squeezed:
                await pool.release(connection)
            for client in [*creators, *joiners]:
                await client.close()


async def test_watch_churn_is_refused_past_its_budget_with_rate_limited(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url)
    eve = await player(race_server.url, "Eve")
    try:
        for _ in range(10):
            await eve.watch(race.race_id)
            await eve.unwatch(race.race_id)
        try:
            await eve.watch(race.race_id)
        except ServerError as error:
            assert (error.code, error.field) == ("rate_limited", "type")
        else:
            raise AssertionError("the 21st watch/unwatch within a second was accepted")
    finally:
        await race.close()
        await eve.close()


async def test_watch_churn_of_one_address_over_many_connections_is_refused_past_the_address_budget(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url)
    churners = [await from_address(race_server.url, "127.0.0.61", f"Churn{index}") for index in range(4)]
    other = await from_address(race_server.url, "127.0.0.62", "Other")
    try:
        answered, refused = 0, 0
        for churner in churners:  # 20 each at once per connection: 80 in all, past the address's 60
            for request in [churner.watch, churner.unwatch] * 10:
                try:
                    await request(race.race_id)
                    answered += 1
                except ServerError as error:
                    assert (error.code, error.field) == ("rate_limited", "type") and "your address" in str(error)
                    refused += 1
        assert answered < 80 and answered + refused == 80
        await other.watch(race.race_id)  # another address has its own budget
    finally:
        await race.close()
        for client in [*churners, other]:
            await client.close()


async def test_a_spectator_that_rewatches_often_is_still_served_every_event_once(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    eve: RaceClient = await player(race_server.url, "Eve")
    try:
        for index in range(4):
            watching = await eve.watch(race.race_id)
            await race.ann.move(race.race_id, line[index])
            seen = await events_until(eve, lambda event, wanted=index + 1: isinstance(event, MoveMade) and event.move_seq == wanted)
            assert [event.seq for event in seen][-1] > watching.race.event_seq
            await eve.unwatch(race.race_id)
    finally:
        await race.close()
        await eve.close()


async def test_a_movers_own_event_goes_out_with_the_reply_and_is_not_sent_again_when_the_channel_brings_it(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed))
        assert server.hub is not None
        hub = server.hub
        from_channel = hub._on_event
        held: list[tuple[RaceFeed, StoredEvent]] = []
        monkeypatch.setattr(hub, "_on_event", lambda feed, event: held.append((feed, event)))  # the channel delivers nothing
        try:
            await play(race.ann, race.race_id, line[:3])
            own = await events_until(race.ann, lambda event: isinstance(event, MoveMade) and event.move_seq == 3)
            assert [event.move_seq for event in own if isinstance(event, MoveMade)] == [1, 2, 3]
            async with asyncio.timeout(10):  # the channel brings its copies too (held back here), then they are let through
                while len(held) < 3:
                    await asyncio.sleep(0.01)
            monkeypatch.setattr(hub, "_on_event", from_channel)
            for feed, event in held:
                from_channel(feed, event)
            await events_until(race.bob, lambda event: isinstance(event, Progress) and event.seq == own[-1].seq)
            await play(race.ann, race.race_id, line[3:4])
            later = await events_until(race.ann, lambda event: isinstance(event, MoveMade) and event.move_seq == 4)
            seqs = [event.seq for event in [*own, *later]]
            assert seqs == sorted(set(seqs))  # nothing twice, in order
            assert [event.move_seq for event in later if isinstance(event, MoveMade)] == [4]
        finally:
            await race.close()
