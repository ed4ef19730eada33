"""Behaviours docs/PROTOCOL.md promises a client in any language, each pinned by a test (issue 9: protocol v1 as written)."""

from __future__ import annotations

import pytest
from lobby_helpers import players, refused
from race_helpers import deals, events_until, play, player, seated_race, server_config
from winning_lines import first_foundation_prefix, winning_deal

from client import RaceClient, ServerError, Unsolicited
from server.app import RaceServer
from server.services.lobby import LobbyLimits
from shared import Board, action_text
from shared.protocol import AttemptEnded, Countdown, MoveMade, PlayerJoined, PlayerLeft, Queued, RaceResult, RaceSettings, encode

ILLEGAL_ON_ANY_DEAL = "KS 1>1"
"""Refused by the engine whatever the deal (``same_place`` or ``card_not_at_source``)."""


async def refusal(attempt: object) -> str:
    """The code the server refused a request with."""
    with pytest.raises(ServerError) as refused:
        await attempt  # type: ignore[misc]
    return refused.value.code


# --- move: the order of checks ------------------------------------------------------------------


async def test_a_resent_move_id_with_another_text_is_answered_with_the_stored_action(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        first = await race.ann.move(race.race_id, line[0], seq=0, move_id="m-1")
        again = await race.ann.move(race.race_id, line[1], seq=0, move_id="m-1")
        assert (again.duplicate, again.seq, again.move) == (True, 1, first.move)
        reused = await race.ann.move(race.race_id, line[1], seq=1, move_id="m-1")  # the id again, at the next seq
        assert (reused.duplicate, reused.seq, reused.move) == (True, 1, first.move)
        illegal = await race.ann.move(race.race_id, ILLEGAL_ON_ANY_DEAL, seq=1, move_id="m-1")
        assert (illegal.duplicate, illegal.move) == (True, first.move)
        assert await race_server.races.store.actions(race.race_id, 0) == [first.move]  # type: ignore[union-attr]
    finally:
        await race.close()


async def test_any_move_during_the_countdown_is_not_started_legal_or_not(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server:
        race = await seated_race(server.url, RaceSettings(seed=8), start=False)
        try:
            legal = action_text(Board.deal(8).legal_moves()[0])
            assert await refusal(race.ann.move(race.race_id, legal)) == "not_started"
            assert await refusal(race.ann.move(race.race_id, ILLEGAL_ON_ANY_DEAL)) == "not_started"
            assert await refusal(race.ann.move(race.race_id, "not a move")) == "not_started"
            assert await refusal(race.ann.move(race.race_id, legal, seq=5)) == "not_started"
        finally:
            await race.close()


async def test_any_move_in_a_race_closed_in_its_countdown_is_race_closed(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server:
        race = await seated_race(server.url, RaceSettings(seed=8), start=False)
        try:
            await race.ann.leave(race.race_id)
            legal = action_text(Board.deal(8).legal_moves()[0])
            for text in (legal, ILLEGAL_ON_ANY_DEAL):
                assert await refusal(race.bob.move(race.race_id, text)) == "race_closed"
        finally:
            await race.close()


async def test_after_the_attempt_ended_any_move_is_attempt_over_and_after_the_result_race_over(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, undo=True))  # undo: one resign does not decide
    try:
        await race.ann.move(race.race_id, line[0])
        await race.ann.resign(race.race_id)
        for text in (line[1], ILLEGAL_ON_ANY_DEAL, "not a move"):
            assert await refusal(race.ann.move(race.race_id, text)) == "attempt_over"
        assert await refusal(race.ann.move(race.race_id, line[1], seq=7)) == "attempt_over"
        await race.bob.resign(race.race_id)
        await events_until(race.ann, lambda event: isinstance(event, RaceResult))
        for client, text in ((race.ann, line[1]), (race.bob, ILLEGAL_ON_ANY_DEAL), (race.bob, line[0])):
            assert await refusal(client.move(race.race_id, text)) == "race_over"
        assert await refusal(race.ann.move(race.race_id, line[0], seq=0, move_id="never-used")) == "race_over"
    finally:
        await race.close()


async def test_a_resend_of_a_stored_move_is_a_duplicate_even_once_the_race_is_over(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        first = await race.ann.move(race.race_id, line[0], seq=0, move_id="last-one")
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await events_until(race.ann, lambda event: isinstance(event, RaceResult))
        again = await race.ann.move(race.race_id, line[0], seq=0, move_id="last-one")
        assert (again.duplicate, again.seq, again.move) == (True, 1, first.move)
    finally:
        await race.close()


async def test_an_out_of_sequence_move_reports_the_expected_seq_when_the_race_runs(race_server: RaceServer) -> None:
    seed, _ = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        with pytest.raises(ServerError) as refused:
            await race.ann.move(race.race_id, ILLEGAL_ON_ANY_DEAL, seq=3)
        assert (refused.value.code, refused.value.expected) == ("out_of_sequence", 0)
    finally:
        await race.close()


async def test_a_players_own_move_event_matches_its_moved_reply(race_server: RaceServer) -> None:
    """The reply and the player's own ``move`` event travel separately: either may come first, and they agree."""
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        moved = await race.ann.move(race.race_id, line[0])
        event = (await events_until(race.ann, lambda event: isinstance(event, MoveMade)))[-1]
        assert isinstance(event, MoveMade)
        assert (event.slot, event.move, event.move_seq, event.count, event.left) == (0, moved.move, moved.seq, moved.count, moved.left)
        assert deals(race.countdown, seed) and isinstance(race.countdown, Countdown)
    finally:
        await race.close()


async def test_a_move_in_a_race_waiting_for_its_second_player_is_not_started(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        seated = await ann.create(RaceSettings(seed=8))
        assert await refusal(ann.move(seated.race.race, ILLEGAL_ON_ANY_DEAL)) == "not_started"
        await ann.leave(seated.race.race)
        assert await refusal(ann.move(seated.race.race, ILLEGAL_ON_ANY_DEAL)) == "race_closed"
    finally:
        await ann.close()


# --- limits --------------------------------------------------------------------------------------


async def test_quick_match_is_refused_to_a_connection_holding_three_waiting_races(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, lobby=LobbyLimits())) as server, players(server.url, "Ann") as (ann,):
        for _ in range(3):
            await ann.create(RaceSettings())
        with refused("too_many_open_races"):
            await ann.quick_match(RaceSettings(time_limit=3600))


async def test_a_new_quick_match_replaces_the_connections_entry_without_counting_it_twice(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, lobby=LobbyLimits())) as server, players(server.url, "Ann") as (ann,):
        await ann.create(RaceSettings())
        await ann.create(RaceSettings())
        first = await ann.quick_match(RaceSettings(time_limit=3600))
        second = await ann.quick_match(RaceSettings(time_limit=1800))  # replaces the first: still 3 held
        assert isinstance(first, Queued) and isinstance(second, Queued)
        with refused("too_many_open_races"):
            await ann.create(RaceSettings())


# --- before hello ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        {"type": "live_races", "id": 7},
        {"type": "create", "id": 7, "settings": {"seed": "not even a number"}},
        {"type": "move", "id": 7, "race": "r", "seq": 0, "move_id": "m", "move": "AC b>f", "token": "t"},
    ],
    ids=["no-token", "bad-fields", "complete"],
)
async def test_any_request_but_hello_before_hello_is_hello_required(race_server: RaceServer, document: dict[str, object]) -> None:
    client = await RaceClient.connect(race_server.url)
    try:
        await client.send_raw(document)
        event = await client.next_event(timeout=5)
        assert isinstance(event, Unsolicited) and (event.error.code, event.error.id) == ("hello_required", 7)
        await client.hello("Ann")
    finally:
        await client.close()


async def test_a_bad_frame_leaves_the_connection_open(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        await ann.send_raw(b"\xc1")
        event = await ann.next_event(timeout=5)
        assert isinstance(event, Unsolicited) and event.error.code == "bad_frame"
        seated = await ann.create(RaceSettings())  # the connection still answers requests
        assert seated.slot == 0
    finally:
        await ann.close()


# --- where a stream starts, and that it never repeats ----------------------------------------------


async def received_seqs(client: RaceClient, race_id: str, until_seq: int) -> list[int]:
    """The seqs of the race events a client receives up to ``until_seq``."""
    events = await events_until(client, lambda event: event.race == race_id and event.seq >= until_seq)
    return [event.seq for event in events if event.race == race_id]


async def test_seating_replies_deliver_the_race_from_its_first_event_even_those_the_reply_shows(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    bob = await player(race_server.url, "Bob")
    try:
        seated = await ann.create(RaceSettings(seed=3))
        joined = await bob.join(seated.race.race)
        assert joined.race.event_seq >= 2  # player_joined twice, countdown: all in the reply already
        seqs = await received_seqs(bob, seated.race.race, joined.race.event_seq)
        assert seqs == list(range(1, joined.race.event_seq + 1))  # ...and sent anyway: countdown carries the deal
    finally:
        await ann.close()
        await bob.close()


async def test_a_second_sync_on_a_following_connection_sends_no_event_twice(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await race.ann.move(race.race_id, line[0])
        first = await race.ann.sync(race.race_id, after=0)
        again = await race.ann.sync(race.race_id, after=0)
        assert again.race.event_seq == first.race.event_seq
        moved = await race.ann.move(race.race_id, line[1])
        latest = (await race.ann.sync(race.race_id, after=0)).race.event_seq
        assert moved.seq == 2
        events = await events_until(race.ann, lambda event: isinstance(event, MoveMade) and event.move_seq == 2)
        seqs = [event.seq for event in events if event.race == race.race_id]
        # Everything from the join on arrived once: up to 'started' in seated_race, the rest here.
        assert len(seqs) == len(set(seqs)) and seqs[-1] <= latest
        assert min(seqs) > race.countdown.seq
    finally:
        await race.close()


async def test_a_second_watch_of_a_watched_race_sends_a_fresh_snapshot_and_no_event_twice(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    async with players(race_server.url, "Wes") as (watcher,):
        try:
            await race.ann.move(race.race_id, line[0])
            first = await watcher.watch(race.race_id, after=0)  # the whole log from the start
            again = await watcher.watch(race.race_id, after=0)
            assert again.race.event_seq >= first.race.event_seq
            await race.ann.move(race.race_id, line[1])
            events = await events_until(watcher, lambda event: isinstance(event, MoveMade) and event.move_seq == 2)
            seqs = [event.seq for event in events if event.race == race.race_id]
            assert seqs == sorted(set(seqs)) and seqs[0] == 1  # each once, in order, from event 1
        finally:
            await race.close()


async def test_sync_of_a_race_one_has_no_seat_in_or_that_does_not_exist_is_refused(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=8))
    carol = await player(race_server.url, "Carol")
    try:
        assert await refusal(carol.sync(race.race_id)) == "not_seated"
        assert await refusal(carol.sync("NoSuchRace1")) == "unknown_race"
    finally:
        await carol.close()
        await race.close()


# --- replays and invite codes before the start -----------------------------------------------------


async def test_replay_of_a_race_closed_before_its_start_is_race_closed(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        seated = await ann.create(RaceSettings())
        assert await refusal(ann.replay_page(seated.race.race)) == "not_finished"
        await ann.leave(seated.race.race)
        assert await refusal(ann.replay_page(seated.race.race)) == "race_closed"
    finally:
        await ann.close()


async def test_an_invite_code_during_the_countdown_answers_as_join_would(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server, players(server.url, "Ann", "Bob", "Cid") as (ann, bob, cid):
        seated = await ann.create(RaceSettings(private=True))
        code = seated.race.invite
        assert code is not None
        await bob.join_invite(code)
        assert await refusal(cid.join_invite(code)) == "race_full"
        assert await refusal(bob.join_invite(code)) == "already_seated"  # as join: a seat of ones own comes first
        await bob.leave(seated.race.race)  # the race waits again: the same code works again
        rejoined = await cid.join_invite(code.lower())
        assert rejoined.race.race == seated.race.race


# --- value lists ---------------------------------------------------------------------------------


async def test_a_time_limit_ends_running_attempts_as_time_limit_and_decides_by_count(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, time_limit=3))
    try:
        await play(race.ann, race.race_id, first_foundation_prefix(seed, line, 1))
        events = await events_until(race.bob, lambda event: isinstance(event, RaceResult), timeout=30)
        ended = [event for event in events if isinstance(event, AttemptEnded)]
        assert sorted((event.slot, event.reason) for event in ended) == [(0, "time_limit"), (1, "time_limit")]
        result = events[-1]
        assert isinstance(result, RaceResult) and (result.winner, result.reason) == (0, "count")
        assert [standing.ended for standing in result.players] == ["time_limit", "time_limit"]
        synced = await race.bob.sync(race.race_id)
        assert synced.race.status == "finished" and [seat.state for seat in synced.race.players] == ["time_limit", "time_limit"]
    finally:
        await race.close()


# --- small behaviours a client relies on ------------------------------------------------------------


async def test_a_64_bit_seed_travels_exactly_as_a_msgpack_uint64(race_server: RaceServer) -> None:
    seed = 2**64 - 1  # far above 2^53: a JavaScript Number would name another deal
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        result = await race.ann.wait_for(RaceResult)  # the seed is revealed with the result (docs/PROTOCOL.md "Fair deals")
        assert result.seed == seed and deals(race.countdown, seed)
        assert b"\xcf" + seed.to_bytes(8, "big") in encode(result)
    finally:
        await race.close()


async def test_resuming_a_session_answers_the_same_token(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    again = await RaceClient.connect(race_server.url)
    try:
        assert ann.session is not None
        resumed = await again.hello("any name", token=ann.session.token)
        assert (resumed.token, resumed.player, resumed.name) == (ann.session.token, ann.session.player, "Ann")
    finally:
        await ann.close()
        await again.close()


async def test_after_seat_1_leaves_the_countdown_the_creator_gets_player_left_and_nothing_else(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, countdown_seconds=30)) as server:
        race = await seated_race(server.url, RaceSettings(seed=8), start=False)
        cid = await player(server.url, "Cid")
        try:
            await race.bob.leave(race.race_id)
            left = (await events_until(race.ann, lambda event: isinstance(event, PlayerLeft)))[-1]
            await cid.join(race.race_id)  # the next event of the race is Cid's seat
            following = (await events_until(race.ann, lambda event: isinstance(event, PlayerJoined)))
            assert [type(event) for event in following] == [PlayerJoined] and following[0].seq == left.seq + 1
        finally:
            await cid.close()
            await race.close()
