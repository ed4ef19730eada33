"""The fold of a race's events into a snapshot, one behaviour per event type (pure: no server, no Redis)."""

from __future__ import annotations

from shared.board import Status
from shared.protocol import (
    EVENT_TYPES,
    AnalysisReady,
    AttemptEnded,
    AttemptState,
    Back,
    CloseReason,
    Countdown,
    Disconnected,
    EmoteSent,
    FinalStanding,
    MoveMade,
    PlayerJoined,
    PlayerLeft,
    Progress,
    RaceClosed,
    RaceEvent,
    RaceResult,
    RaceStatus,
    RematchOffered,
    RematchStarted,
    ResultReason,
    Started,
    WatcherCount,
)
from shared.race import RaceSnapshot, fold_events
from shared.race.fold import FOLDS

R = "raceFold001"


def joined() -> list[RaceEvent]:
    return [
        PlayerJoined(race=R, seq=1, at=10, slot=0, player="pa", name="Ann"),
        PlayerJoined(race=R, seq=2, at=20, slot=1, player="pb", name="Bob"),
    ]


def counted_down() -> list[RaceEvent]:
    return [*joined(), Countdown(
        race=R, seq=3, at=30, commitment="c0ffee", seed_chosen=False, difficulty=None, start_at=3030, deadline=9000, columns=[], bouquet=[]
    )]


def running() -> list[RaceEvent]:
    return [*counted_down(), Started(race=R, seq=4, at=3030)]


def move(seq: int, slot: int, move_seq: int, count: int) -> MoveMade:
    return MoveMade(race=R, seq=seq, at=4000 + seq, slot=slot, move="x", move_seq=move_seq, count=count, left=52 - count, status=Status.PLAYING)


def test_a_new_race_waits_with_nobody_seated() -> None:
    race = fold_events([])
    assert (race.status, race.seats(), race.event_seq, race.seed) == (RaceStatus.WAITING, [], 0, None)


def test_player_joined_seats_a_player_playing_with_no_cards_home() -> None:
    race = fold_events(joined())
    assert [(p.slot, p.player, p.name, p.count, p.left, p.state) for p in race.seats()] == [
        (0, "pa", "Ann", 0, 52, AttemptState.PLAYING),
        (1, "pb", "Bob", 0, 52, AttemptState.PLAYING),
    ]
    assert race.actions == {0: 0, 1: 0} and race.event_seq == 2


def test_countdown_publishes_the_commitment_and_the_times_but_never_the_seed() -> None:
    race = fold_events(counted_down())
    assert (race.status, race.seed, race.commitment, race.start_at, race.deadline) == (RaceStatus.COUNTDOWN, None, "c0ffee", 3030, 9000)


def test_started_opens_the_race() -> None:
    assert fold_events(running()).status is RaceStatus.RUNNING


def test_a_move_updates_that_players_counts_and_action_number_only() -> None:
    race = fold_events([*running(), move(5, 0, 1, 1), move(6, 0, 2, 2)])
    ann, bob = race.seats()
    assert (ann.count, ann.left, race.actions[0]) == (2, 50, 2)
    assert (bob.count, bob.left, race.actions[1]) == (0, 52, 0)


def test_attempt_ended_records_how_and_the_final_counts() -> None:
    race = fold_events([*running(), move(5, 1, 1, 1), AttemptEnded(race=R, seq=6, at=5000, slot=1, reason=AttemptState.RESIGNED, count=1, left=51)])
    bob = race.seats()[1]
    assert (bob.state, bob.count, bob.left) == (AttemptState.RESIGNED, 1, 51)
    assert race.seats()[0].state is AttemptState.PLAYING and race.status is RaceStatus.RUNNING


def test_result_finishes_the_race_with_every_standing() -> None:
    standings = [
        FinalStanding(slot=0, player="pa", name="Ann", count=52, left=0, ended=AttemptState.CLEARED, time_ms=1, moves=60, undos=0),
        FinalStanding(slot=1, player="pb", name="Bob", count=9, left=43, ended=AttemptState.RACE_OVER, time_ms=1, moves=20, undos=0),
    ]
    race = fold_events([*running(), RaceResult(
        race=R, seq=5, at=6000, winner=0, reason=ResultReason.CLEARED, players=standings, seed=42, salt="00" * 16
    )])
    assert race.status is RaceStatus.FINISHED and race.seed == 42  # the result reveals the seed
    assert [p.state for p in race.seats()] == [AttemptState.CLEARED, AttemptState.RACE_OVER]


def test_disconnected_marks_the_player_away_with_its_grace_deadline_and_back_clears_it() -> None:
    away = fold_events([*running(), Disconnected(race=R, seq=5, at=5000, slot=0, grace_until=65000)])
    assert (away.seats()[0].connected, away.seats()[0].grace_until) == (False, 65000)
    returned = fold_events([Back(race=R, seq=6, at=5500, slot=0)], away)
    assert (returned.seats()[0].connected, returned.seats()[0].grace_until) == (True, None)
    assert returned.event_seq == 6


def test_watchers_sets_the_spectator_count() -> None:
    race = fold_events([*running(), WatcherCount(race=R, seq=5, at=5000, count=3), WatcherCount(race=R, seq=6, at=5001, count=2)])
    assert race.watchers == 2


def test_the_second_player_leaving_the_countdown_returns_the_race_to_waiting_without_a_deal() -> None:
    race = fold_events([*counted_down(), PlayerLeft(race=R, seq=4, at=40, slot=1, player="pb")])
    assert (race.status, race.commitment, race.start_at, race.deadline) == (RaceStatus.WAITING, None, None, None)
    assert [p.slot for p in race.seats()] == [0] and race.actions == {0: 0}


def test_the_creator_leaving_changes_nothing_until_race_closed() -> None:
    left = fold_events([joined()[0], PlayerLeft(race=R, seq=2, at=20, slot=0, player="pa")])
    assert left.status is RaceStatus.WAITING and [p.slot for p in left.seats()] == [0]
    closed = fold_events([RaceClosed(race=R, seq=3, at=30, reason=CloseReason.LEFT)], left)
    assert (closed.status, closed.seed) == (RaceStatus.CLOSED, None)


def test_progress_and_rematch_events_change_nothing_but_the_sequence() -> None:
    before = fold_events(running())
    after = fold_events(
        [
            Progress(race=R, seq=5, at=1, slot=0, count=1, left=51, status=Status.PLAYING),
            RematchOffered(race=R, seq=6, at=2, slot=0, until=99),
            RematchStarted(race=R, seq=7, at=3, new_race="raceFold002"),
        ],
        RaceSnapshot(status=before.status, commitment=before.commitment, start_at=before.start_at, deadline=before.deadline,
                     players=dict(before.players), actions=dict(before.actions)),
    )  # fmt: skip
    assert (after.status, after.seats(), after.actions, after.event_seq) == (before.status, before.seats(), before.actions, 7)


def test_every_event_type_either_folds_or_is_known_to_change_nothing() -> None:
    silent = {Progress, RematchOffered, RematchStarted, AnalysisReady, EmoteSent}
    assert set(FOLDS) | silent == set(EVENT_TYPES.values()) and not set(FOLDS) & silent
