"""The result rules of shared/race/rules.py on hand-picked races, and the record check holding a record to exactly the
result those rules give (not merely to a result that could be fair). tests/test_race_rules_differential.py holds the
Lua scripts and the browser to the same rules on generated races."""

from __future__ import annotations

from typing import Any

import pytest

from shared import Profile, card_text, deal
from shared.commitment import deal_commitment
from shared.protocol import AttemptState, ErrorCode, RaceStatus, ResultReason
from shared.race.record import RECORD_FORMAT, RECORD_VERSION, RecordInvalid, verify_record
from shared.race.rules import Outcome, RaceRules, Standing, outcome

PLAYING = Standing()


def ended(reason: AttemptState, count: int = 0, count_seq: int = 0, ended_seq: int = 1) -> Standing:
    return Standing(reason, count, count_seq, ended_seq)


def test_the_first_to_clear_wins_even_when_both_clear() -> None:
    first, second = ended(AttemptState.CLEARED, 52, 5, 9), ended(AttemptState.CLEARED, 52, 6, 8)
    assert outcome([first, second], rated=False, undo=True) == Outcome(1, ResultReason.CLEARED)


def test_a_running_attempt_ahead_of_an_ended_one_wins_at_once_only_without_undo() -> None:
    seats = [Standing(count=3, count_seq=4), ended(AttemptState.RESIGNED, 2, 3)]
    assert outcome(seats, rated=False, undo=False) == Outcome(0, ResultReason.COUNT)
    assert outcome(seats, rated=False, undo=True) is None


def test_equal_counts_go_to_the_one_who_reached_it_first_and_never_changed_counts_draw() -> None:
    assert outcome([ended(AttemptState.STUCK, 4, 7), ended(AttemptState.STUCK, 4, 6)], rated=False, undo=True) == Outcome(1, ResultReason.REACHED_FIRST)
    assert outcome([ended(AttemptState.STUCK), ended(AttemptState.STUCK)], rated=False, undo=True) == Outcome(None, ResultReason.DRAW)


def test_abandoning_loses_a_rated_race_whatever_the_counts_unless_both_abandoned() -> None:
    seats = [ended(AttemptState.ABANDONED, 9, 3), ended(AttemptState.RESIGNED, 1, 2)]
    assert outcome(seats, rated=True, undo=False) == Outcome(1, ResultReason.ABANDONED)
    assert outcome(seats, rated=False, undo=False) == Outcome(0, ResultReason.COUNT)
    both = [ended(AttemptState.ABANDONED, 9, 3), ended(AttemptState.ABANDONED, 1, 2)]
    assert outcome(both, rated=True, undo=False) == Outcome(0, ResultReason.COUNT)


def test_a_time_limit_and_a_grace_period_ending_together_end_the_attempts_on_the_time_limit() -> None:
    race = RaceRules(start_at=0, deadline=30_000, grace_ms=20_000)
    race.tick(0)
    race.presence(0, here=False, now=10_000)
    assert race.next_due() == 30_000
    race.tick(30_000)
    assert race.status is RaceStatus.FINISHED and [standing.state for standing in race.standings()] == [AttemptState.TIME_LIMIT] * 2


def test_a_grace_period_that_ends_during_the_countdown_ends_the_attempt_at_the_start() -> None:
    race = RaceRules(start_at=20_000, deadline=0, grace_ms=5_000, rated=True)
    race.presence(1, here=False, now=0)
    race.tick(10_000)
    assert race.status is RaceStatus.COUNTDOWN and race.act(0, 10_000, 1) is ErrorCode.NOT_STARTED
    race.tick(20_000)
    assert race.result == Outcome(0, ResultReason.ABANDONED)


def sealed_deal(seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a countdown publishes of the classic deal of ``seed`` (commitment, layout) and what its result reveals."""
    salt = bytes(range(16))
    layout = deal(seed)
    countdown = {
        "commitment": deal_commitment(seed, Profile.CLASSIC, salt),
        "columns": [[card_text(card) for card in column] for column in layout.columns],
        "bouquet": [card_text(card) for card in layout.bouquet],
    }
    return countdown, {"seed": seed, "salt": salt.hex()}


def record(settings: dict[str, Any], *events: dict[str, Any]) -> dict[str, Any]:
    numbered = [{"seq": seq, **event} for seq, event in enumerate(events, start=1)]
    return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "race": {"race": "r", "settings": settings}, "events": numbered}


def test_a_record_whose_race_ended_before_the_rules_decided_it_is_refused() -> None:
    # Seat 0 leads 1-0 when seat 1 resigns; with undo seat 0 may still fall back, so the race goes on: a result
    # "seat 0 wins on count" at that point does not follow (the old check took any result that could be fair).
    countdown, reveal = sealed_deal(0)
    events = (
        {"type": "countdown", "seed": 0, **countdown},
        {"type": "move", "slot": 0, "move_seq": 1, "move": "AS b>f", "count": 1, "left": 51, "status": "playing"},
        {"type": "attempt_ended", "slot": 1, "reason": "resigned", "count": 0, "left": 52},
        {"type": "result", "winner": 0, "reason": "count", "players": [{"slot": 0, "count": 1, "moves": 1}, {"slot": 1, "count": 0, "moves": 0}], **reveal},
    )
    assert verify_record(record({"undo": False}, *events)).winner == 0
    with pytest.raises(RecordInvalid, match="does not follow"):
        verify_record(record({"undo": True}, *events))
