"""Reconnection through the real server and Redis: resuming with the token, missed events by sequence number,
a move resent across the drop applied once, disconnected/back for the opponent, and the grace period."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

import pytest
from lobby_helpers import players, wait_until
from race_helpers import drop, events_until, play, seated_race, server_config, store_of
from winning_lines import first_foundation_prefix, winning_deal

from client import ConnectionLost, RaceClient, ServerError
from server.app import RaceServer
from server.store import StoredEvent, keys
from shared.protocol import AttemptEnded, Back, Countdown, Disconnected, MoveMade, Progress, RaceEvent, RaceResult, RaceSettings


async def test_a_player_resumes_mid_race_with_every_missed_event_in_order(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await play(race.ann, race.race_id, line[:2])
        await play(race.bob, race.race_id, line[:2])
        await events_until(race.bob, lambda event: isinstance(event, MoveMade) and event.move_seq == 2)
        seen_before = race.bob.last_seq[race.race_id]
        drop(race.bob)
        await race.ann.wait_for(Disconnected)
        await play(race.ann, race.race_id, line[2:5])  # Bob misses these

        resumed = await race.bob.reconnect()
        synced = resumed.synced[race.race_id]
        assert (synced.slot, synced.moves) == (1, list(line[:2]))
        missed = await events_until(race.bob, lambda event: isinstance(event, Back))
        # Everything after the last event Bob had, once each, in order: his own disconnection, Ann's three
        # actions (as progress only), his return.
        assert [event.seq for event in missed] == list(range(seen_before + 1, missed[-1].seq + 1))
        kinds = [(event.TYPE, getattr(event, "slot", None)) for event in missed]
        assert kinds[-4:] == [("progress", 0)] * 3 + [("back", 1)]
        assert not any(isinstance(event, MoveMade) and event.slot == 0 for event in missed)
        assert ("disconnected", 1) in kinds
        assert (await race.bob.move(race.race_id, line[2])).seq == 3  # and plays on where it stopped
    finally:
        await race.close()


async def test_a_sync_or_watch_after_a_seq_beyond_the_race_starts_right_after_the_reply_and_misses_nothing(
    race_server: RaceServer,
) -> None:
    """A stale ``after`` (a seq of another race, or events lost in a failover) must not silence the stream."""
    async with players(race_server.url, "Ann", "Bob", "Wes") as (ann, bob, wes):
        race_id = (await ann.create(RaceSettings(spectator_delay=0))).race.race
        other = await RaceClient.connect(race_server.url)
        try:
            await other.hello("Ann", ann.token)
            synced = await other.sync(race_id, after=50)
            watching = await wes.watch(race_id, after=50)
            assert synced.race.event_seq == 1 and watching.race.event_seq <= 1
            await bob.join(race_id)
            countdown = await other.wait_for(Countdown)
            assert countdown.race == race_id and other.last_seq[race_id] < 50
            assert (await wes.wait_for(Countdown, timeout=10)).seq == countdown.seq
        finally:
            await other.close()


async def test_a_move_sent_just_before_the_drop_and_resent_after_is_applied_once(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    store = store_of(race_server)
    try:
        # The reply is lost: Bob stops reading, the server applies the move, then the connection drops.
        race.bob.connection.transport.pause_reading()
        pending = asyncio.ensure_future(race.bob.move(race.race_id, line[0]))
        progress = await race.ann.wait_for(Progress)
        assert progress.slot == 1
        drop(race.bob)
        with pytest.raises(ConnectionLost):
            await pending
        resumed = await race.bob.reconnect()
        resent = resumed.resent[race.race_id]
        assert (resent.duplicate, resent.seq, resent.move) == (True, 1, line[0])
        assert await store.actions(race.race_id, 1) == [line[0]]

        # The move never left: the connection was already gone. Resent after reconnecting, it is applied then.
        drop(race.bob)
        with pytest.raises(ConnectionLost):
            await race.bob.move(race.race_id, line[1])
        resumed = await race.bob.reconnect()
        resent = resumed.resent[race.race_id]
        assert (resent.duplicate, resent.seq) == (False, 2)
        assert await store.actions(race.race_id, 1) == list(line[:2])
    finally:
        await race.close()


async def test_the_opponent_sees_disconnected_then_back_when_the_player_returns_on_another_process(redis_url: str) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as first, RaceServer(server_config(redis_url)) as second:
        race = await seated_race(first.url, RaceSettings(seed=seed, grace=20))
        try:
            drop(race.bob)
            away = await race.ann.wait_for(Disconnected)
            assert away.slot == 1 and away.grace_until == away.at + 20_000
            seat = (await race.ann.sync(race.race_id)).race.players[1]
            assert (seat.connected, seat.grace_until) == (False, away.grace_until)
            await race.bob.reconnect(second.url)
            back = await race.ann.wait_for(Back)
            assert back.slot == 1 and back.seq > away.seq
            seat = (await race.ann.sync(race.race_id)).race.players[1]
            assert (seat.connected, seat.grace_until) == (True, None)
            assert (await race.bob.move(race.race_id, line[0])).seq == 1
        finally:
            await race.close()


async def test_a_player_away_past_the_grace_period_has_abandoned(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, grace=1))
    try:
        await play(race.ann, race.race_id, first_foundation_prefix(seed, line, 1))
        drop(race.bob)
        seen: list[RaceEvent] = await events_until(race.ann, lambda event: isinstance(event, RaceResult))
        away = next(event for event in seen if isinstance(event, Disconnected))
        ended = next(event for event in seen if isinstance(event, AttemptEnded))
        result = seen[-1]
        assert isinstance(result, RaceResult)
        assert away.grace_until == away.at + 1000
        assert (ended.slot, ended.reason) == (1, "abandoned") and ended.at >= away.grace_until
        assert (result.winner, result.reason, [p.ended for p in result.players]) == (0, "count", ["race_over", "abandoned"])
        resumed = await race.bob.reconnect()
        assert resumed.synced[race.race_id].race.players[1].state == "abandoned"
        with pytest.raises(ServerError) as refused:
            await race.bob.move(race.race_id, line[0])
        assert refused.value.code == "race_over"
    finally:
        await race.close()


async def test_a_player_whose_connection_flaps_cannot_flood_the_race_with_presence_events(race_server: RaceServer) -> None:
    """Presence is announced at most once a second per seat (server times); the last announcement is right."""
    seed, _ = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    store = store_of(race_server)
    try:
        started = time.monotonic()
        for _ in range(10):
            drop(race.bob)
            await race.bob.reconnect()
        flapping_seconds = time.monotonic() - started

        async def presence_events() -> list[StoredEvent]:
            events = await store.events_after(race.race_id, 0)
            return [event for event in events if event.TYPE in ("disconnected", "back")]

        async def bob_announced_back() -> bool:
            announced = await presence_events()
            return bool(announced) and announced[-1].TYPE == "back"

        await wait_until(bob_announced_back, what="Bob's return to be announced")
        announced = await presence_events()
        assert len(announced) <= 2 + 2 * flapping_seconds  # twenty changes, a few announcements
        assert [event.TYPE for event in announced] == ["disconnected", "back"] * (len(announced) // 2)
        assert all(later.at - earlier.at >= 1000 for earlier, later in itertools.pairwise(announced))
        assert (await race.ann.sync(race.race_id)).race.players[1].connected
    finally:
        await race.close()


async def test_a_snapshot_reports_presence_as_announced_so_it_agrees_with_the_events_after_it(race_server: RaceServer) -> None:
    seed, _ = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    store = store_of(race_server)
    try:
        drop(race.bob)
        await race.ann.wait_for(Disconnected)
        await race.bob.reconnect()
        back = await race.ann.wait_for(Back, timeout=5)  # held back for a second, then announced
        drop(race.bob)  # within a second of that announcement: held back
        bob_leases = keys.race_keys(race.race_id)[keys.PRESENCE_1]

        async def bob_gone() -> bool:
            return await race_server.redis.zcard(bob_leases) == 0  # type: ignore[union-attr, no-any-return]

        await wait_until(bob_gone, what="the server to see Bob's connection close")
        snapshot = (await race.ann.sync(race.race_id)).race
        assert (snapshot.players[1].connected, snapshot.players[1].grace_until) == (True, None)
        await race.bob.reconnect()  # back before the change was due: there is nothing to announce
        await asyncio.sleep(max(0.0, (back.at + 1200 - await store.now_ms()) / 1000))
        later = await store.events_after(race.race_id, snapshot.event_seq)
        assert [event.TYPE for event in later if event.TYPE in ("disconnected", "back")] == []
        assert (await race.ann.sync(race.race_id)).race.players[1].connected
    finally:
        await race.close()


async def test_a_change_held_back_is_announced_before_the_attempt_it_ends_and_before_the_result(redis_url: str) -> None:
    seed, _ = winning_deal()
    async with RaceServer(server_config(redis_url, grace_seconds=0.6)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed))
        try:
            drop(race.bob)
            first = await race.ann.wait_for(Disconnected)
            await race.bob.reconnect()
            drop(race.bob)  # away again within the second: a new grace period, announced when it ends the attempt
            seen = await events_until(race.ann, lambda event: isinstance(event, AttemptEnded))
            again, ended = seen[-2], seen[-1]
            assert isinstance(again, Disconnected) and again.grace_until is not None and again.grace_until > (first.grace_until or 0)
            assert isinstance(ended, AttemptEnded) and (ended.slot, ended.reason) == (1, "abandoned")

            await race.bob.reconnect()  # back, held back (a second has not passed) when the race ends
            # The lease is taken after the synced reply is sent: wait for it, or Ann's resignation may come first.
            bob_leases = keys.race_keys(race.race_id)[keys.PRESENCE_1]

            async def bob_back() -> bool:
                return await server.redis.zcard(bob_leases) > 0  # type: ignore[union-attr, no-any-return]

            await wait_until(bob_back, what="the server to see Bob's connection again")
            await race.ann.resign(race.race_id)
            seen = await events_until(race.ann, lambda event: isinstance(event, RaceResult))
            assert [event.TYPE for event in seen if isinstance(event, Disconnected | Back)][-1:] == ["back"]
        finally:
            await race.close()


async def test_a_player_counts_as_connected_once_its_synced_reply_arrives(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``synced`` reply comes only after the connection holds the seat's presence lease, so a race decided right
    after it still announces the return. (The reply used to come first: on a loaded machine the opponent's
    resignation could be stored before the lease, and the result went out with the player still away.)"""
    seed, _ = winning_deal()
    async with RaceServer(server_config(redis_url)) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed))
        assert server.presence is not None
        presence, enter = server.presence, server.presence.enter
        resigned = asyncio.Event()

        async def late_enter(race_id: str, slot: int | None, connection_id: str, player: str = "") -> None:
            # Widen the window a loaded machine opens: Bob's lease waits for Ann's resignation (at most 0.5 s).
            if slot == 1:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(resigned.wait(), 0.5)
            await enter(race_id, slot, connection_id, player)

        try:
            await race.bob.stuck(race.race_id)  # Bob's attempt is over: Ann's resignation decides the race
            drop(race.bob)
            await race.ann.wait_for(Disconnected)
            monkeypatch.setattr(presence, "enter", late_enter)
            await race.bob.reconnect()
            await race.ann.resign(race.race_id)
            resigned.set()
            seen = await events_until(race.ann, lambda event: isinstance(event, RaceResult))
            assert [event.TYPE for event in seen if isinstance(event, Disconnected | Back)] == ["back"]
        finally:
            await race.close()


async def test_a_resent_redeal_is_answered_with_the_columns_it_dealt(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(redeal_once=True))
    try:
        first = await race.ann.move(race.race_id, "redeal", seq=0, move_id="the-redeal")
        assert first.columns is not None and len(first.columns) == 6
        again = await race.ann.move(race.race_id, "redeal", seq=0, move_id="the-redeal")  # the first reply was lost
        assert again.duplicate and again.move == "redeal" and again.columns == first.columns
    finally:
        await race.close()
