"""Messages made of the records that hold their fields (shared.protocol.project), not copied field by field: a field
added to the message must exist in the record, and these tests say so before a reply fails at run time."""

from __future__ import annotations

from dataclasses import fields

from server.services.race import MoveOutcome
from server.store import SeatRecord
from shared.board import Status
from shared.protocol import AttemptState, Moved, PlayerInfo, project


def names(kind: type) -> set[str]:
    return {field.name for field in fields(kind)}


def test_a_stored_seat_holds_every_field_players_are_shown() -> None:
    assert names(PlayerInfo) <= names(SeatRecord)


def test_a_move_outcome_holds_every_field_of_the_moved_reply_but_the_request_id() -> None:
    assert names(Moved) - {"id"} <= names(MoveOutcome)


def test_a_projection_takes_the_fields_of_the_same_name_and_the_ones_given() -> None:
    seat = SeatRecord(slot=1, player="p1", name="Bob", count=7, left=45, moves=9, undos=1, status=Status.PLAYING,
                      state=AttemptState.PLAYING, ended_at=0, connected=False, grace_until=1234, account="bob", bot=True)  # fmt: skip
    assert project(seat, PlayerInfo) == PlayerInfo(1, "p1", "Bob", 7, 45, AttemptState.PLAYING, False, 1234, "bob", True)
    outcome = MoveOutcome(race="r1", move="5D b>3", seq=4, count=1, left=51, status=Status.PLAYING, undos=0, duplicate=False)
    assert project(outcome, Moved, id=12) == Moved(12, "r1", "5D b>3", 4, 1, 51, Status.PLAYING, 0, False, None)
