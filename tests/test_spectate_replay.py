"""Replays of finished races from their record: every event with its time, both players' moves, page by page."""

from __future__ import annotations

import itertools

import pytest
from race_helpers import deals, play, player, seated_race
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from shared import Board
from shared.protocol import Countdown, MoveMade, RaceEvent, RaceResult, RaceSettings
from shared.race.replay import replay


async def test_a_finished_race_replays_move_by_move_with_its_timing(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    viewer = await player(race_server.url, "Vic")
    try:
        with pytest.raises(ServerError) as refused:
            await viewer.replay_page(race.race_id)
        assert refused.value.code == "not_finished"
        await play(race.ann, race.race_id, line[:5])
        await play(race.bob, race.race_id, line[:3])
        await race.ann.resign(race.race_id)
        await race.bob.stuck(race.race_id)
        await race.ann.wait_for(RaceResult)

        first = await viewer.replay_page(race.race_id, limit=4)
        assert [event.seq for event in first.events] == [1, 2, 3, 4] and not first.complete
        assert first.race.status == "finished" and first.race.seed == seed
        events: list[RaceEvent] = [event async for event in viewer.replay(race.race_id)]

        assert race_server.races is not None
        stored = await race_server.races.store.events_after(race.race_id, 0)
        assert [(event.seq, event.TYPE, event.at) for event in events] == [
            (event.seq, event.TYPE, event.at) for event in stored
        ]
        assert all(earlier.at <= later.at for earlier, later in itertools.pairwise(events))
        countdown = next(event for event in events if isinstance(event, Countdown))
        assert deals(countdown, seed) and len(countdown.columns) == 6 and len(countdown.bouquet) == 16
        moves = {slot: [event.move for event in events if isinstance(event, MoveMade) and event.slot == slot] for slot in (0, 1)}
        assert moves == {0: list(line[:5]), 1: list(line[:3])}
        assert isinstance(events[-1], RaceResult)
        # Replaying the moves on the deal gives the final counts of the result.
        rules = Board.deal(seed).rules
        assert [standing.count for standing in events[-1].players] == [replay(seed, rules, moves[slot]).foundation_count for slot in (0, 1)]
    finally:
        await race.close()
        await viewer.close()


async def test_replay_pages_follow_each_other_to_the_end(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await play(race.ann, race.race_id, line[:9])
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        pages, after = [], 0
        while True:
            page = await race.bob.replay_page(race.race_id, after=after, limit=3)
            pages.append([event.seq for event in page.events])
            if page.complete:
                break
            after = page.events[-1].seq
        flat = [seq for page_seqs in pages for seq in page_seqs]
        assert flat == list(range(1, flat[-1] + 1))
        assert all(len(page_seqs) == 3 for page_seqs in pages[:-1]) and 1 <= len(pages[-1]) <= 3
    finally:
        await race.close()
