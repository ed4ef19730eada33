"""Spectators through the real server and Redis: every move of both players in order, late joiners, the fair-play
delay, no actions from spectators, the live list, and watcher counts the players see (also across processes)."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from conftest import ON_BOTH_STORES
from race_helpers import drop, events_until, play, player, seated_race, server_config, store_of
from winning_lines import winning_deal

from client import RaceClient, ServerError
from client.race_view import RaceView, watched_status_note, watched_status_words
from server.app import RaceServer
from server.services.spectate import SpectateService, SpectatorViews
from server.store import StoredEvent
from shared import Board, Rules, card_text
from shared.protocol import MoveMade, RaceEvent, RaceResult, RaceSettings, RaceStatus, Started, WatcherCount, Watching
from shared.race.replay import replay


def moves_seen(events: list[RaceEvent]) -> list[tuple[int, str, int]]:
    return [(event.slot, event.move, event.move_seq) for event in events if isinstance(event, MoveMade)]


def assert_boards_match(watching: Watching, seed: int, actions: dict[int, list[str]], rules: Rules | None = None) -> None:
    """The snapshot's boards are the deal with exactly ``actions`` played, for each seat."""
    assert [board.slot for board in watching.boards] == sorted(actions)
    for board in watching.boards:
        expected = replay(seed, rules or Board.deal(seed).rules, actions[board.slot])
        assert board.moves == actions[board.slot]
        assert board.columns == [[card_text(card) for card in column] for column in expected.columns]
        assert board.bouquet == [card_text(card) for card in expected.bouquet]
        assert board.count == expected.foundation_count


@ON_BOTH_STORES
async def test_a_spectator_sees_every_move_of_both_players_in_order(redis_url: str) -> None:
    seed, line = winning_deal()
    # A countdown long enough that the snapshot is surely taken before the start.
    async with RaceServer(server_config(redis_url, countdown_seconds=1)) as race_server:
        await watch_a_race_from_its_countdown(race_server, seed, line)


async def watch_a_race_from_its_countdown(race_server: RaceServer, seed: int, line: tuple[str, ...]) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0), start=False)
    eve = await player(race_server.url, "Eve")
    try:
        watching = await eve.watch(race.race_id)
        assert watching.delay_ms == 0 and watching.race.status == "countdown" and watching.race.seed is None
        assert_boards_match(watching, seed, {0: [], 1: []})
        await race.ann.wait_for(Started)
        await race.bob.wait_for(Started)
        for move in line[:6]:
            await race.ann.move(race.race_id, move)
            await race.bob.move(race.race_id, move)
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        seen = await events_until(eve, lambda event: isinstance(event, RaceResult))
        # Every event once, in sequence, right after the snapshot; the moves of both players with their details.
        assert [event.seq for event in seen] == list(range(watching.race.event_seq + 1, seen[-1].seq + 1))
        assert moves_seen(seen) == [(slot, move, index + 1) for index, move in enumerate(line[:6]) for slot in (0, 1)]
        stored = await store_of(race_server).events_after(race.race_id, watching.race.event_seq)
        assert [(event.seq, event.TYPE) for event in seen] == [(event.seq, event.TYPE) for event in stored]
        assert [event.at for event in seen] == [event.at for event in stored]
    finally:
        await race.close()
        await eve.close()


async def test_a_late_spectator_gets_the_current_boards_then_the_moves_that_follow(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    eve = await player(race_server.url, "Eve")
    try:
        await play(race.ann, race.race_id, line[:7])
        await play(race.bob, race.race_id, line[:3])
        watching = await eve.watch(race.race_id)
        assert watching.race.status == "running"
        assert [(p.slot, p.count, p.state) for p in watching.race.players] == [
            (0, replay(seed, Board.deal(seed).rules, list(line[:7])).foundation_count, "playing"),
            (1, replay(seed, Board.deal(seed).rules, list(line[:3])).foundation_count, "playing"),
        ]
        assert_boards_match(watching, seed, {0: list(line[:7]), 1: list(line[:3])})
        await play(race.bob, race.race_id, line[3:5])
        await play(race.ann, race.race_id, line[7:8])
        seen = await events_until(eve, lambda event: isinstance(event, MoveMade) and event.slot == 0)
        assert [event.seq for event in seen] == list(range(watching.race.event_seq + 1, seen[-1].seq + 1))
        assert moves_seen(seen) == [(1, line[3], 4), (1, line[4], 5), (0, line[7], 8)]
    finally:
        await race.close()
        await eve.close()


@ON_BOTH_STORES
async def test_spectators_lag_by_the_delay_and_start_from_the_past_never_the_live_state(race_server: RaceServer) -> None:
    """With a 1 s delay: the snapshot is the race as of ``as_of`` = now − 1 s (rebuilt from the stored events and
    actions), and no later event reaches the spectator before its server time ``at`` + 1 s."""
    seed, line = winning_deal()
    delay_ms = 1000
    store = store_of(race_server)
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=1))
    eve = await player(race_server.url, "Eve")
    try:
        await play(race.ann, race.race_id, line[:2])
        settled = (await store.events_after(race.race_id, 0))[-1].at + delay_ms
        while await store.now_ms() <= settled:  # let those two moves fall behind the delay: the snapshot shows them
            await asyncio.sleep(0.05)
        await play(race.ann, race.race_id, line[2:4])
        await play(race.bob, race.race_id, line[:2])
        before = await store.now_ms()
        watching = await eve.watch(race.race_id)
        after = await store.now_ms()
        assert watching.delay_ms == delay_ms and watching.race.settings.spectator_delay == 1
        assert before - delay_ms <= watching.as_of <= after - delay_ms
        # The snapshot holds exactly the events up to as_of, and the boards exactly the actions those events record.
        history = await store.events_after(race.race_id, 0)
        assert [event.seq for event in history if event.at <= watching.as_of] == list(range(1, watching.race.event_seq + 1))
        actions = {0: 0, 1: 0}
        for event in history[: watching.race.event_seq]:
            if event.TYPE == "move":
                actions[event.slot] = event.move_seq
        assert actions[0] >= 2
        assert_boards_match(watching, seed, {slot: list(line[:count]) for slot, count in actions.items()})
        await play(race.ann, race.race_id, line[4:6])
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        seen: list[RaceEvent] = []
        arrival_ms: list[float] = []
        while not seen or not isinstance(seen[-1], RaceResult):
            delivered = await eve.next_event(timeout=10)
            assert isinstance(delivered, RaceEvent)
            arrival_ms.append(time.time() * 1000)  # Redis runs on this machine: its TIME is this clock
            seen.append(delivered)
        assert [event.seq for event in seen] == list(range(watching.race.event_seq + 1, seen[-1].seq + 1))
        assert all(arrived >= event.at + delay_ms for event, arrived in zip(seen, arrival_ms))
        assert moves_seen(seen)[-2:] == [(0, line[4], 5), (0, line[5], 6)]
    finally:
        await race.close()
        await eve.close()


async def test_spectators_cannot_act_in_the_race_they_watch(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    eve = await player(race_server.url, "Eve")
    ann_watching = await RaceClient.connect(race_server.url)
    try:
        await ann_watching.hello("Ann", token=race.ann.token)  # Ann's own second connection, watching
        await eve.watch(race.race_id)
        await ann_watching.watch(race.race_id)
        for spectator in (eve, ann_watching):
            for action in (
                spectator.move(race.race_id, line[0], seq=0),
                spectator.resign(race.race_id),
                spectator.stuck(race.race_id),
            ):
                with pytest.raises(ServerError) as refused:
                    await action
                assert refused.value.code == "spectating"
        with pytest.raises(ServerError) as refused:
            await race.ann.watch(race.race_id)  # a player's connection already follows its race
        assert refused.value.code == "already_seated"
        assert await store_of(race_server).actions(race.race_id, 0) == []
        assert (await race.ann.move(race.race_id, line[0])).seq == 1  # the seat itself still plays
    finally:
        await race.close()
        await eve.close()
        await ann_watching.close()


@ON_BOTH_STORES
async def test_players_see_how_many_watch_across_processes(redis_url: str) -> None:
    """Watchers on two server processes are counted together; unwatching and closing both count down."""
    seed, _ = winning_deal()
    async with RaceServer(server_config(redis_url)) as first, RaceServer(server_config(redis_url)) as second:
        race = await seated_race(first.url, RaceSettings(seed=seed, spectator_delay=0))
        eve = await player(first.url, "Eve")
        finn = await player(second.url, "Finn")
        try:
            await eve.watch(race.race_id)
            assert (await race.ann.wait_for(WatcherCount)).count == 1
            watching = await finn.watch(race.race_id)
            assert (await race.ann.wait_for(WatcherCount)).count == 2
            assert watching.race.watchers == 1  # the count as the snapshot stood; Finn's own arrival follows
            assert (await race.bob.sync(race.race_id)).race.watchers == 2
            assert [info.watchers for info in await eve.live_races() if info.race == race.race_id] == [2]
            await eve.unwatch(race.race_id)
            assert (await race.ann.wait_for(WatcherCount)).count == 1
            await finn.close()
            assert (await race.ann.wait_for(WatcherCount)).count == 0
        finally:
            await race.close()
            await eve.close()
            await finn.close()


async def test_the_live_list_shows_races_being_played_with_players_and_progress(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    waiting = await player(race_server.url, "Wes")
    try:
        open_race = (await waiting.create(RaceSettings(seed=seed))).race.race
        await play(race.ann, race.race_id, line[:3])
        listed = {info.race: info for info in await waiting.live_races(limit=100)}
        assert open_race not in listed  # waiting for its second player: the lobby's business
        info = listed[race.race_id]
        assert info.status == "running" and info.seed is None and info.commitment is not None
        assert [(p.name, p.count, p.state, p.connected) for p in info.players] == [
            ("Ann", replay(seed, Board.deal(seed).rules, list(line[:3])).foundation_count, "playing", True),
            ("Bob", 0, "playing", True),
        ]
        assert info.settings.spectator_delay == race_server.config.spectator_delay_seconds
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        assert race.race_id not in {info.race for info in await waiting.live_races(limit=100)}
    finally:
        await race.close()
        await waiting.close()


async def test_spectators_coming_and_going_cannot_flood_the_players(race_server: RaceServer) -> None:
    """Watcher counts are announced at most once a second (server times), and the last announcement is right."""
    seed, _ = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    crowd = [await player(race_server.url, f"Fan{index}") for index in range(4)]
    try:
        for _ in range(3):
            for fan in crowd:
                await fan.watch(race.race_id)
            for fan in crowd[2:]:
                await fan.unwatch(race.race_id)
        counts = [await race.ann.wait_for(WatcherCount)]
        while counts[-1].count != 2:
            counts.append(await race.ann.wait_for(WatcherCount))
        assert counts[0].count == 1 and len(counts) <= 3  # a dozen changes, at most a few announcements
        assert all(later.at - earlier.at >= 1000 for earlier, later in itertools.pairwise(counts))
        assert (await race.ann.sync(race.race_id)).race.watchers == 2
    finally:
        await race.close()
        for fan in crowd:
            await fan.close()


async def test_one_connection_watches_at_most_sixteen_races(race_server: RaceServer) -> None:
    owner, fan = await player(race_server.url, "Owner"), await player(race_server.url, "Fan")
    try:
        races = [(await owner.create(RaceSettings(seed=index))).race.race for index in range(17)]
        for race_id in races[:16]:
            await fan.watch(race_id)
        with pytest.raises(ServerError) as refused:
            await fan.watch(races[16])
        assert refused.value.code == "watch_limit"
        await fan.unwatch(races[0])
        assert (await fan.watch(races[16])).race.race == races[16]
    finally:
        await owner.close()
        await fan.close()


async def test_a_spectator_is_told_a_race_under_way_or_finished_within_the_delay_and_nothing_it_hides(race_server: RaceServer) -> None:
    """With a 600 s delay the snapshot of a race just started (or just finished) is the race before its first player
    joined; ``status_now`` says it runs (finished), and the snapshot holds none of its moves, boards or result."""
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=600))
    eve = await player(race_server.url, "Eve")
    try:
        await play(race.ann, race.race_id, line[:3])
        running = await eve.watch(race.race_id)
        assert (running.race.status, running.status_now) == (RaceStatus.WAITING, RaceStatus.RUNNING)
        assert running.boards == [] and running.deal is None and running.race.event_seq == 0
        await eve.unwatch(race.race_id)
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        finished = await eve.watch(race.race_id)
        assert (finished.race.status, finished.status_now) == (RaceStatus.WAITING, RaceStatus.FINISHED)
        assert finished.boards == [] and finished.race.seed is None and finished.race.event_seq == 0
        view = RaceView.of_watching(finished)
        assert watched_status_words(view.status, view.status_now, finished.delay_ms) == "finished · shown 600 s late"
    finally:
        await race.close()
        await eve.close()


def test_a_watched_race_is_said_as_it_is_for_the_spectator() -> None:
    waiting, countdown, running, finished = RaceStatus.WAITING, RaceStatus.COUNTDOWN, RaceStatus.RUNNING, RaceStatus.FINISHED
    assert watched_status_words(waiting, running, 30_000) == "under way · shown 30 s late"
    assert watched_status_words(countdown, running, 30_000) == "under way · shown 30 s late"
    assert watched_status_words(running, finished, 30_000) == "finished · shown 30 s late"
    assert watched_status_words(running, running, 30_000) == "racing"  # caught up (or live all along)
    assert watched_status_words(finished, running, 30_000) == "finished"  # the view moved on past the watch's start
    assert watched_status_words(waiting, RaceStatus.CLOSED, 30_000) == "closed"
    assert watched_status_note(waiting, running, 30_000) == "The race is under way: you see it 30 s late."
    assert watched_status_note(running, running, 30_000) is None


async def test_every_connected_or_resumed_spectator_gets_the_result(redis_url: str) -> None:
    """Campaign soak: 235 of 262 spectators had the result when the soak ended. Here every kind of spectator — on the
    players' process and on another one, from the countdown, from the middle, dropped and resumed with ``after``,
    and after the result within the delay — gets the ``result``, after the delay. No path here misses it, which points at the delay in the soak (a
    race that ended within the last delay before the soak stopped had its result still held back), not a lost event."""
    seed, line = winning_deal()
    async with (
        RaceServer(server_config(redis_url, countdown_seconds=0.5)) as here,
        RaceServer(server_config(redis_url)) as there,
    ):
        race = await seated_race(here.url, RaceSettings(seed=seed, spectator_delay=1), start=False)
        names = ("Early", "Far", "Dropped")
        early, far, dropped = [await player(url, name) for url, name in zip((here.url, there.url, there.url), names, strict=True)]
        spectators: list[RaceClient] = [early, far, dropped]
        try:
            for spectator in spectators:
                await spectator.watch(race.race_id)
            await race.ann.wait_for(Started)
            await play(race.ann, race.race_id, line[:3])
            late = await player(there.url, "Late")
            spectators.append(late)
            await late.watch(race.race_id)
            seen = await events_until(dropped, lambda event: isinstance(event, Started))
            token = dropped.token
            drop(dropped)
            await play(race.bob, race.race_id, line[:2])
            resumed = await RaceClient.connect(there.url)
            await resumed.hello("Dropped", token)
            spectators.append(resumed)
            await resumed.watch(race.race_id, after=seen[-1].seq)
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            result = await race.ann.wait_for(RaceResult)
            after_result = await player(here.url, "After")  # within the delay: the snapshot is still before it
            spectators.append(after_result)
            watching = await after_result.watch(race.race_id)
            assert watching.status_now == RaceStatus.FINISHED and watching.race.event_seq < result.seq
            for spectator in (early, far, late, resumed, after_result):
                told = await events_until(spectator, lambda event: isinstance(event, RaceResult), timeout=15)
                last = told[-1]
                assert isinstance(last, RaceResult) and (last.seq, last.winner) == (result.seq, result.winner)
        finally:
            await race.close()
            for spectator in spectators:
                await spectator.close()


async def test_a_second_watch_of_a_race_reads_only_the_events_since_the_first_and_sees_the_same_boards(
    race_server: RaceServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    eve = await player(race_server.url, "Eve")
    assert race_server.transport is not None
    histories = race_server.transport.dispatcher.spectate.histories
    read_after: list[int] = []
    real_events_after = histories.store.events_after

    async def recording(race_id: str, after_seq: int, limit: int = 10_000) -> list[StoredEvent]:
        read_after.append(after_seq)
        return await real_events_after(race_id, after_seq, limit)

    monkeypatch.setattr(histories.store, "events_after", recording)
    try:
        await play(race.ann, race.race_id, line[:3])
        first = await eve.watch(race.race_id)
        await eve.unwatch(race.race_id)
        await play(race.ann, race.race_id, line[3:5])
        second = await eve.watch(race.race_id)
        assert read_after.count(0) == 1 and first.race.event_seq in read_after  # the second read only what came after the first
        fresh = await SpectateService(race_server.races.store, race_server.races).watch(race.race_id)  # type: ignore[union-attr]
        assert second.boards == fresh.boards and second.race.event_seq == fresh.info.event_seq
    finally:
        await race.close()
        await eve.close()


async def test_a_spectator_view_carried_on_action_by_action_shows_the_boards_a_replay_of_the_stored_actions_shows(
    race_server: RaceServer,
) -> None:
    # The view a watch carries on from the last one (server/services/spectate.py SpectatorViews) against the boards
    # made afresh from the stored actions, after each action of a race with moves, undos and a redeal, and for an
    # earlier moment than the view's (built again).
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0, undo=True, redeal_once=True))
    store = race_server.races.store  # type: ignore[union-attr]
    assert store is not None and race_server.transport is not None
    spectate = race_server.transport.dispatcher.spectate
    ann_actions = [line[0], line[1], "undo", line[1], "redeal"]
    bob_actions = [line[0], "undo", line[0], line[1]]
    moments: list[int] = []
    try:
        for ann_action, bob_action in itertools.zip_longest(ann_actions, bob_actions):
            for client, action in ((race.ann, ann_action), (race.bob, bob_action)):
                if action is None:
                    continue
                await client.move(race.race_id, action)
                snapshot = await spectate.watch(race.race_id)
                moments.append(snapshot.as_of)
                record = await store.load_race(race.race_id)
                assert record is not None
                stored = {slot: await store.actions(race.race_id, slot) for slot in (0, 1)}
                assert_boards_match(Watching(id=0, race=snapshot.info, boards=snapshot.boards, as_of=snapshot.as_of,
                                             delay_ms=0, deal=snapshot.deal, status_now=snapshot.status_now),
                                    seed, stored, Rules(undo=True, redeal_once=True))  # fmt: skip
        redealt = (await race_server.races.line(record, 0)).redeal_columns  # type: ignore[union-attr]
        final = await spectate.watch(race.race_id)
        assert redealt is not None and final.boards[0].redeal_columns == redealt
        history = await spectate.histories.events(race.race_id)
        scratch = SpectatorViews().as_of(record, history, moments[1])
        view = spectate.views.as_of(record, history, moments[1])
        assert {slot: seat.actions for slot, seat in view.seated().items()} == {slot: seat.actions for slot, seat in scratch.seated().items()}
        shown = [event for event in history if isinstance(event, MoveMade) and event.at <= moments[1]]
        assert sum(len(seat.actions) for seat in view.seated().values()) == len(shown) >= 2
    finally:
        await race.close()
