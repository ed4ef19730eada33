"""Behaviours docs/PROTOCOL.md promises a client in any language, each pinned by a test (issue 9: protocol v1 as written)."""

from __future__ import annotations

import pytest
from race_helpers import events_until, player, seated_race, server_config
from winning_lines import winning_deal

from client import ServerError
from server.app import RaceServer
from server.protocol import Countdown, MoveMade, RaceResult, RaceSettings
from shared import Board, action_text

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
    seed, line = winning_deal()
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
        assert race.countdown.seed == seed and isinstance(race.countdown, Countdown)
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
