"""The lobby list: a snapshot, then live changes as races open, fill, start, close — also across server processes."""

from __future__ import annotations

import asyncio

from conftest import ON_BOTH_STORES, SpawnServers
from lobby_helpers import next_lobby_event, no_lobby_event, players, refused, wait_until
from race_helpers import player, server_config

from client import RaceClient
from server.app import RaceServer
from server.services.lobby import LobbyLimits
from server.store import keys
from shared.protocol import (
    Countdown,
    LobbyAdded,
    LobbyChanged,
    LobbyRemoved,
    LobbyReset,
    PlayerLeft,
    RaceClosed,
    RaceSettings,
    Started,
)


@ON_BOTH_STORES
async def test_a_created_race_appears_fills_and_disappears_when_it_starts(race_server: RaceServer) -> None:
    async with players(race_server.url, "Wes", "Ann", "Bob") as (watcher, ann, bob):
        await watcher.watch_lobby()
        settings = RaceSettings(profile="foundation-only", undo=True, time_limit=120, seed=99)
        seated = await ann.create(settings)
        race_id = seated.race.race

        added = await next_lobby_event(watcher, race_id)
        assert isinstance(added, LobbyAdded)
        entry = added.entry
        assert ann.session is not None
        assert (entry.race, entry.creator, entry.player, entry.seats, entry.status) == (race_id, "Ann", ann.session.player, 1, "waiting")
        assert entry.settings == RaceSettings(
            profile="foundation-only", undo=True, time_limit=120, seed=None, spectator_delay=10, grace=30, spectators="anyone"
        )
        assert entry.created_at <= added.at and watcher.lobby[race_id] == entry

        await bob.join(race_id)
        changed = await next_lobby_event(watcher, race_id)
        assert isinstance(changed, LobbyChanged)
        assert (changed.entry.race, changed.entry.seats, changed.entry.status) == (race_id, 2, "countdown")

        await ann.wait_for(Started)
        removed = await next_lobby_event(watcher, race_id)
        assert isinstance(removed, LobbyRemoved) and removed.race == race_id
        assert race_id not in watcher.lobby
        assert race_id not in {entry.race for entry in (await watcher.watch_lobby()).races}


async def test_the_snapshot_lists_open_races_oldest_first_and_not_private_ones(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob", "Wes") as (ann, bob, watcher):
        first = await ann.create(RaceSettings())
        private = await bob.create(RaceSettings(private=True))
        second = await bob.create(RaceSettings(undo=True))
        snapshot = await watcher.watch_lobby()
        ours = [entry for entry in snapshot.races if entry.race in (first.race.race, private.race.race, second.race.race)]
        assert [entry.race for entry in ours] == [first.race.race, second.race.race]
        assert [entry.creator for entry in ours] == ["Ann", "Bob"]
        assert ours[0].created_at <= ours[1].created_at
        assert snapshot.races == sorted(snapshot.races, key=lambda entry: entry.created_at)
        await no_lobby_event(watcher, private.race.race)


async def test_leaving_before_the_start_frees_the_seat_or_closes_the_race(redis_url: str) -> None:
    """A long countdown leaves time to leave: the joiner's seat frees (new deal), the creator's leave closes the race."""
    async with (
        RaceServer(server_config(redis_url, countdown_seconds=60)) as server,
        players(server.url, "Wes", "Ann", "Bob", "Cid") as (watcher, ann, bob, cid),
    ):
        await watcher.watch_lobby()
        race_id = (await ann.create(RaceSettings())).race.race
        assert isinstance(await next_lobby_event(watcher, race_id), LobbyAdded)
        await bob.join(race_id)
        first_deal = await ann.wait_for(Countdown)
        assert isinstance(await next_lobby_event(watcher, race_id), LobbyChanged)

        await bob.leave(race_id)
        left = await ann.wait_for(PlayerLeft)
        assert (left.slot, left.player) == (1, bob.session.player)  # type: ignore[union-attr]
        back = await next_lobby_event(watcher, race_id)
        assert isinstance(back, LobbyChanged) and (back.entry.seats, back.entry.status) == (1, "waiting")
        with refused("not_seated"):
            await bob.leave(race_id)

        seated = await cid.join(race_id)
        assert [p.name for p in seated.race.players] == ["Ann", "Cid"]
        second_deal = await ann.wait_for(Countdown)
        assert second_deal.columns != first_deal.columns  # the shown deal is not dealt again
        assert second_deal.commitment != first_deal.commitment  # and the new one is sealed anew
        assert isinstance(await next_lobby_event(watcher, race_id), LobbyChanged)

        await ann.leave(race_id)
        closed = await cid.wait_for(RaceClosed)
        assert closed.reason == "left"
        removed = await next_lobby_event(watcher, race_id)
        assert isinstance(removed, LobbyRemoved) and removed.race == race_id
        synced = await cid.sync(race_id)
        assert synced.race.status == "closed"
        with refused("race_closed"):
            await bob.join(race_id)


async def test_leave_is_refused_after_the_start_and_outside_the_race(race_server: RaceServer) -> None:
    async with players(race_server.url, "Ann", "Bob") as (ann, bob):
        race_id = (await ann.create(RaceSettings())).race.race
        with refused("not_seated"):
            await bob.leave(race_id)
        with refused("unknown_race"):
            await bob.leave("nosuchrace")
        await bob.join(race_id)
        await bob.wait_for(Started)
        with refused("already_started"):
            await ann.leave(race_id)


async def test_a_creator_who_disconnects_takes_its_waiting_race_off_the_list(race_server: RaceServer) -> None:
    async with players(race_server.url, "Wes", "Ann") as (watcher, ann):
        await watcher.watch_lobby()
        race_id = (await ann.create(RaceSettings())).race.race
        assert isinstance(await next_lobby_event(watcher, race_id), LobbyAdded)
        await ann.close()
        removed = await next_lobby_event(watcher, race_id)
        assert isinstance(removed, LobbyRemoved) and removed.race == race_id
        record = await race_server.races.store.load_race(race_id)  # type: ignore[union-attr]
        assert record is not None and (record.status, record.result_reason) == ("closed", "abandoned")


@ON_BOTH_STORES
async def test_a_watcher_on_another_server_process_sees_the_changes_live(race_server: RaceServer, spawn_servers: SpawnServers) -> None:
    """The lobby feed is a Redis Stream: a race created on this process shows up on a separate server process."""
    (other,) = await spawn_servers(1)
    async with players(other.url, "Wes") as (watcher,), players(race_server.url, "Ann", "Bob") as (ann, bob):
        await watcher.watch_lobby()
        race_id = (await ann.create(RaceSettings(time_limit=60))).race.race
        added = await next_lobby_event(watcher, race_id)
        assert isinstance(added, LobbyAdded) and (added.entry.race, added.entry.creator) == (race_id, "Ann")
        await bob.join(race_id)
        assert isinstance(await next_lobby_event(watcher, race_id), LobbyChanged)
        removed = await next_lobby_event(watcher, race_id)
        assert isinstance(removed, LobbyRemoved) and removed.race == race_id


@ON_BOTH_STORES
async def test_races_of_a_killed_server_process_are_closed_by_another(redis_url: str, spawn_servers: SpawnServers) -> None:
    """Each process refreshes a heartbeat of its open races; when a process dies, another one closes them."""
    fast = LobbyLimits(heartbeat_seconds=0.1, stale_seconds=1.0)
    async with RaceServer(server_config(redis_url, lobby=fast)) as survivor, players(survivor.url, "Wes") as (watcher,):
        await watcher.watch_lobby()
        (doomed,) = await spawn_servers(1)
        async with players(doomed.url, "Ann") as (ann,):
            race_id = (await ann.create(RaceSettings())).race.race
            assert isinstance(await next_lobby_event(watcher, race_id), LobbyAdded)
            doomed.process.kill()
            doomed.process.wait()
        removed = await next_lobby_event(watcher, race_id, timeout=15)
        assert isinstance(removed, LobbyRemoved) and removed.race == race_id
        record = await survivor.races.store.load_race(race_id)  # type: ignore[union-attr]
        assert record is not None and (record.status, record.result_reason) == ("closed", "abandoned")


async def test_a_graceful_stop_keeps_waiting_races_for_their_creators_to_resume_elsewhere(redis_url: str) -> None:
    """Shutting down leaves open races alone; a creator who syncs on another process keeps its race (heartbeats),
    a race whose creator does not come back within the staleness period is closed."""
    slow_heartbeat = LobbyLimits(heartbeat_seconds=60, stale_seconds=0.5)  # heartbeats and sweeps run by hand below
    async with RaceServer(server_config(redis_url, lobby=slow_heartbeat)) as second:
        async with RaceServer(server_config(redis_url, lobby=slow_heartbeat)) as first:
            ann = await player(first.url, "Ann")
            bob = await player(first.url, "Bob")
            kept = (await ann.create(RaceSettings())).race.race
            dropped = (await bob.create(RaceSettings())).race.race
        await ann.close()
        await bob.close()
        lobby = second.lobby
        assert lobby is not None
        assert [(await lobby.races.record(race)).status for race in (kept, dropped)] == ["waiting", "waiting"]

        resumed = await RaceClient.connect(second.url)
        try:
            await resumed.hello("Ann", token=ann.token)
            assert (await resumed.sync(kept)).race.status == "waiting"
            await asyncio.sleep(0.7)  # longer than the staleness period
            await lobby.heartbeat_once()
            assert await lobby.close_stale_once() >= 1
            assert (await lobby.races.record(kept)).status == "waiting"
            closed = await lobby.races.record(dropped)
            assert (closed.status, closed.result_reason) == ("closed", "abandoned")
        finally:
            await resumed.close()


async def test_a_connection_holds_at_most_three_races_waiting_for_an_opponent(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, lobby=LobbyLimits())) as server, players(server.url, "Ann", "Bob") as (ann, bob):
        first = await ann.create(RaceSettings())
        await ann.create(RaceSettings(private=True))
        await ann.quick_match(RaceSettings(time_limit=3600))
        with refused("too_many_open_races"):
            await ann.create(RaceSettings())
        await bob.join(first.race.race)
        await ann.wait_for(Started)  # no longer waiting: room for another
        await ann.create(RaceSettings())


async def test_after_the_feed_could_not_be_read_watchers_get_the_whole_list_again(race_server: RaceServer) -> None:
    """The reader cannot know what it missed while reading failed, so every watcher gets a fresh snapshot, then changes."""
    feed, redis = race_server.lobby_feed, race_server.redis
    assert feed is not None and redis is not None
    async with players(race_server.url, "Wes", "Ann") as (watcher, ann):
        await watcher.watch_lobby()
        earlier = (await ann.create(RaceSettings())).race.race
        assert isinstance(await next_lobby_event(watcher, earlier), LobbyAdded)
        failures = feed.read_failures
        await redis.delete(keys.LOBBY_FEED)
        await redis.set(keys.LOBBY_FEED, "not a stream")  # every read of the feed fails now (WRONGTYPE)

        async def reading_failed() -> bool:
            return feed.read_failures > failures

        await wait_until(reading_failed, what="a failed read of the lobby feed")
        await redis.delete(keys.LOBBY_FEED)
        reset = await next_lobby_event(watcher, earlier)
        assert isinstance(reset, LobbyReset) and earlier in {entry.race for entry in reset.races}
        later = (await ann.create(RaceSettings())).race.race
        added = await next_lobby_event(watcher, later)
        assert isinstance(added, LobbyAdded) and {earlier, later} <= set(watcher.lobby)


async def test_a_dropped_creator_connection_keeps_its_race_open_for_a_resync(redis_url: str) -> None:
    """A connection that drops (no close frame) is not a decision to leave: the race stays open while its creator
    reconnects and syncs it; a race whose creator does not come back is closed once its heartbeat is stale."""
    slow_heartbeat = LobbyLimits(heartbeat_seconds=60, stale_seconds=0.5)  # heartbeats and sweeps run by hand below
    async with RaceServer(server_config(redis_url, lobby=slow_heartbeat)) as server, players(server.url, "Ann", "Bob") as (ann, bob):
        lobby, redis = server.lobby, server.redis
        assert lobby is not None and redis is not None
        kept = (await ann.create(RaceSettings())).race.race
        dropped = (await bob.create(RaceSettings())).race.race
        for client in (ann, bob):
            client.connection.transport.abort()  # the network goes away: no close frame

        async def both_seats_gone() -> bool:  # the server has handled both drops
            counts = [await redis.zcard(keys.race_keys(race)[keys.PRESENCE_0]) for race in (kept, dropped)]
            return counts == [0, 0]

        await wait_until(both_seats_gone, what="the server to see both connections drop")
        assert [(await lobby.races.record(race)).status for race in (kept, dropped)] == ["waiting", "waiting"]
        await ann.reconnect()  # hello with the token, sync of the race it plays
        await asyncio.sleep(0.7)  # longer than the staleness period
        await lobby.heartbeat_once()
        await lobby.close_stale_once()
        assert (await lobby.races.record(kept)).status == "waiting"
        closed = await lobby.races.record(dropped)
        assert (closed.status, closed.result_reason) == ("closed", "abandoned")
