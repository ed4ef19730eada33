"""Head-to-head races through the real server and Redis: wins, results by counts, time limits, resends, rebuilds."""

from __future__ import annotations

import pytest
from race_helpers import Race, events_until, play, seated_race, server_config
from winning_lines import first_foundation_prefix, winning_deal

from client import RaceClient, ServerError
from server.app import RaceServer
from server.store import keys
from shared import Board, card_text
from shared.protocol import AttemptEnded, MoveMade, Progress, RaceResult, RaceSettings, Started


async def test_first_to_clear_wins_at_once_and_the_opponent_sees_progress_only(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        opening = first_foundation_prefix(seed, line, 1)
        await play(race.bob, race.race_id, opening)  # Bob gets somewhere, then stops moving
        await play(race.ann, race.race_id, list(line))
        result = await race.ann.wait_for(RaceResult)
        bob_events = await events_until(race.bob, lambda event: isinstance(event, RaceResult))
        assert result.winner == 0 and result.reason == "cleared"
        ann, bob = result.players
        assert (ann.count, ann.left, ann.ended, ann.moves, ann.undos) == (52, 0, "cleared", len(line), 0)
        assert (bob.ended, bob.moves) == ("race_over", len(opening))
        assert bob.count == Board.deal(seed).foundation_count + sum(1 for m in opening if m.endswith(">f"))
        assert ann.time_ms >= 0 and bob.time_ms >= 0
        assert any(isinstance(event, RaceResult) and event.winner == 0 for event in bob_events)
        # Bob saw Ann's progress 88 times, and never one of her moves.
        ann_moves_seen_by_bob = [event for event in bob_events if isinstance(event, MoveMade) and event.slot == 0]
        ann_progress = [event for event in bob_events if isinstance(event, Progress) and event.slot == 0]
        assert ann_moves_seen_by_bob == []
        assert len(ann_progress) == len(line) and ann_progress[-1].count == 52
        assert all(not hasattr(event, "move") for event in ann_progress)
        with pytest.raises(ServerError) as refused:
            await race.bob.move(race.race_id, "undo")
        assert refused.value.code in ("race_over", "undo_not_allowed")
    finally:
        await race.close()


async def finish_with_counts(race: Race, ann_moves: list[str], bob_moves: list[str]) -> RaceResult:
    await play(race.ann, race.race_id, ann_moves)
    await play(race.bob, race.race_id, bob_moves)
    await race.ann.stuck(race.race_id)
    await race.bob.resign(race.race_id)
    return await race.bob.wait_for(RaceResult)


async def test_higher_count_wins_once_both_attempts_ended(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, undo=True))
    try:
        result = await finish_with_counts(race, first_foundation_prefix(seed, line, 3), first_foundation_prefix(seed, line, 1))
        assert (result.winner, result.reason) == (0, "count")
        assert [p.count for p in result.players] == [3, 1]
        assert [p.ended for p in result.players] == ["stuck", "resigned"]
    finally:
        await race.close()


async def test_equal_counts_go_to_who_reached_the_count_first(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, undo=True))
    prefix = first_foundation_prefix(seed, line, 2)
    try:
        result = await finish_with_counts(race, prefix, prefix)  # Ann plays first
        assert (result.winner, result.reason) == (0, "reached_first")
    finally:
        await race.close()


async def test_no_progress_on_either_side_is_a_draw_and_the_record_is_kept_with_a_ttl(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=3, undo=True))
    try:
        result = await finish_with_counts(race, [], [])
        assert (result.winner, result.reason) == (None, "draw")
        store = race_server.races.store  # type: ignore[union-attr]
        config = race_server.config
        for key in keys.race_keys(race.race_id)[:2]:
            ttl_ms = await store.redis.pttl(key)
            assert config.live_ttl_seconds * 1000 < ttl_ms <= config.record_ttl_seconds * 1000
        record = await store.load_race(race.race_id)
        assert record is not None and record.status == "finished" and record.winner is None
        history = await store.events_after(race.race_id, 0)
        assert [event.TYPE for event in history][-1] == "result"
        assert [event.seq for event in history] == list(range(1, record.event_seq + 1))
    finally:
        await race.close()


async def test_race_ends_as_soon_as_the_winner_cannot_change(race_server: RaceServer) -> None:
    """Without undo counts only grow: once Ann stopped below Bob, Bob has won while still playing."""
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await play(race.bob, race.race_id, first_foundation_prefix(seed, line, 1))
        await race.ann.resign(race.race_id)
        result = await race.ann.wait_for(RaceResult)
        assert (result.winner, result.reason) == (1, "count")
        assert [p.ended for p in result.players] == ["resigned", "race_over"]
    finally:
        await race.close()


async def test_time_limit_ends_every_attempt_still_running(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, time_limit=1))
    try:
        assert race.countdown.deadline == race.countdown.start_at + 1000
        await play(race.ann, race.race_id, first_foundation_prefix(seed, line, 1))
        ended = [await race.bob.wait_for(AttemptEnded, timeout=5), await race.bob.wait_for(AttemptEnded, timeout=5)]
        result = await race.bob.wait_for(RaceResult, timeout=5)
        assert {event.reason for event in ended} == {"time_limit"}
        assert (result.winner, result.reason) == (0, "count")
        with pytest.raises(ServerError) as refused:
            await race.ann.move(race.race_id, line[len(first_foundation_prefix(seed, line, 1))])
        assert refused.value.code == "race_over"
    finally:
        await race.close()


async def test_a_resent_move_is_applied_once(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        first = await race.ann.move(race.race_id, line[0], move_id="m-1")
        again = await race.ann.move(race.race_id, line[0], seq=0, move_id="m-1")
        assert (first.seq, first.duplicate) == (1, False)
        assert (again.seq, again.duplicate) == (1, True)
        assert await race_server.races.store.actions(race.race_id, 0) == [line[0]]  # type: ignore[union-attr]
        with pytest.raises(ServerError) as refused:
            await race.ann.move(race.race_id, line[1], seq=0, move_id="m-2")
        assert (refused.value.code, refused.value.expected) == ("out_of_sequence", 1)
    finally:
        await race.close()


async def test_state_rebuilt_from_redis_equals_the_live_state(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, undo=True))
    try:
        await play(race.ann, race.race_id, [*line[:12], "undo", "undo", line[10]])
        await play(race.bob, race.race_id, list(line[:5]))
        races = race_server.races
        assert races is not None
        rebuilt = await races.rebuild(race.race_id)
        for slot in (0, 1):
            live = races.cached_board(race.race_id, slot)
            assert live is not None
            assert rebuilt[slot].to_json() == live.to_json()
            assert rebuilt[slot].move_stack == live.move_stack
        assert rebuilt[0].undos == 2
    finally:
        await race.close()


async def test_a_race_started_here_has_both_positions_at_its_deal_before_any_move(race_server: RaceServer) -> None:
    """No first move reads the race back and replays it: the join kept the deal (and a move plays on a copy of it)."""
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, undo=True))
    try:
        races = race_server.races
        assert races is not None
        dealt = [board.to_json() for board in await races.rebuild(race.race_id)]
        kept = [races.cached_board(race.race_id, slot) for slot in (0, 1)]
        assert [None if board is None else board.to_json() for board in kept] == dealt
        await play(race.ann, race.race_id, list(line[:2]))
        assert races.cached_board(race.race_id, 1).to_json() == dealt[1]  # type: ignore[union-attr]
        assert races.cached_board(race.race_id, 0).to_json() == (await races.rebuild(race.race_id))[0].to_json()  # type: ignore[union-attr]
    finally:
        await race.close()


async def test_another_process_takes_over_a_race_and_its_deadline(redis_url: str) -> None:
    """Positions and deadlines live in Redis: a second server finishes a race the first one started."""
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as first:
        race = await seated_race(first.url, RaceSettings(seed=seed, time_limit=2))
        await play(race.ann, race.race_id, list(line[:3]))
        token = race.ann.token
        await race.close()
    async with RaceServer(server_config(redis_url)) as second:
        ann = await RaceClient.connect(second.url)
        try:
            await ann.hello("Ann", token=token)
            synced = await ann.sync(race.race_id)
            assert synced.moves == list(line[:3]) and synced.slot == 0
            reply = await ann.move(race.race_id, line[3])
            assert reply.seq == 4
            result = await ann.wait_for(RaceResult, timeout=6)
            assert [p.ended for p in result.players] == ["time_limit", "time_limit"]
        finally:
            await ann.close()


async def test_players_start_from_the_same_deal_at_one_start_time(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=42), start=False)
    try:
        fresh = Board.deal(42)
        assert race.countdown == race.bob_countdown
        assert not hasattr(race.countdown, "seed") and race.countdown.seed_chosen
        assert race.countdown.columns == [[card_text(card) for card in column] for column in fresh.columns]
        assert race.countdown.bouquet == [card_text(card) for card in fresh.bouquet]
        assert race.countdown.start_at == race.countdown.at + 50
    finally:
        await race.close()


async def test_a_position_proved_dead_ends_the_attempt(redis_url: str) -> None:
    """The dead check runs off the event loop after a move and ends the attempt only on a proof."""
    seed, line = winning_deal()
    prefix = first_foundation_prefix(seed, line, 1)

    def proved_dead_once_a_card_is_home(board: Board) -> bool:
        return board.foundation_count >= 1

    async with RaceServer(server_config(redis_url), dead_check=proved_dead_once_a_card_is_home) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed))
        try:
            await play(race.ann, race.race_id, prefix)
            ended = await race.bob.wait_for(AttemptEnded)
            assert (ended.slot, ended.reason, ended.count) == (0, "dead", 1)
            await race.bob.stuck(race.race_id)
            result = await race.ann.wait_for(RaceResult)
            assert (result.winner, [p.ended for p in result.players]) == (0, ["dead", "stuck"])
        finally:
            await race.close()


async def test_players_on_two_server_processes_see_one_race(redis_url: str) -> None:
    """Events reach every process through the race's Redis Stream."""
    seed, line = winning_deal()
    async with RaceServer(server_config(redis_url)) as first, RaceServer(server_config(redis_url)) as second:
        ann = await RaceClient.connect(first.url)
        bob = await RaceClient.connect(second.url)
        try:
            await ann.hello("Ann")
            await bob.hello("Bob")
            seated = await ann.create(RaceSettings(seed=seed))
            await bob.join(seated.race.race)
            await ann.wait_for(Started)
            await bob.wait_for(Started)
            await play(ann, seated.race.race, list(line[:5]))
            seen = [await bob.wait_for(Progress) for _ in range(5)]
            assert [event.slot for event in seen] == [0] * 5
            assert seen[-1].count == Board.deal(seed).foundation_count + sum(1 for m in line[:5] if m.endswith(">f"))
        finally:
            await ann.close()
            await bob.close()
