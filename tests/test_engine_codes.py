"""Every refusal code of shared/errors.py is produced by the engine, and the codes' texts never change."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_positions import move, position

from shared import (
    Board,
    EngineError,
    IllegalMoveCode,
    NotationError,
    NotationErrorCode,
    Profile,
    Rules,
    decode_action,
    parse_card,
    parse_move,
)

TABLE = ["6C", "", "9S 6D", "QC", "QD", "KS"]
"""Column 1 ends in 6C, column 2 is empty, 9S is covered in column 3; the rest is buried under KS."""


def refusal_of(text: str, rules: Rules | None = None, bouquet: str = "5D 4H", foundations: str = "") -> EngineError | None:
    """The refusal of ``text`` on the TABLE position."""
    return position(TABLE, bouquet=bouquet, foundations=foundations, rules=rules).check_move(move(text))


def after_redeal() -> EngineError | None:
    board = Board.deal(1, Rules(redeal_once=True))
    board.redeal()
    return board.check_redeal()


ILLEGAL_MOVE_EXAMPLES: dict[IllegalMoveCode, Callable[[], EngineError | None]] = {
    IllegalMoveCode.SOURCE_EMPTY: lambda: refusal_of("5D 2>f"),
    IllegalMoveCode.CARD_NOT_AT_SOURCE: lambda: refusal_of("6C b>f"),
    IllegalMoveCode.CARD_COVERED: lambda: refusal_of("9S 3>f", foundations="8S"),
    IllegalMoveCode.SAME_PLACE: lambda: refusal_of("6C 1>1"),
    IllegalMoveCode.NOT_NEXT_ON_FOUNDATION: lambda: refusal_of("5D b>f"),
    IllegalMoveCode.COLUMN_RANK_MISMATCH: lambda: refusal_of("4H b>1"),
    IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN: lambda: refusal_of("5D b>1", Rules(Profile.FOUNDATION_ONLY)),
    IllegalMoveCode.UNDO_NOT_ALLOWED: lambda: Board.deal(1).check_undo(),
    IllegalMoveCode.NOTHING_TO_UNDO: lambda: Board.deal(1, Rules(undo=True)).check_undo(),
    IllegalMoveCode.REDEAL_NOT_ALLOWED: lambda: Board.deal(1).check_redeal(),
    IllegalMoveCode.REDEAL_ALREADY_USED: after_redeal,
    IllegalMoveCode.REDEAL_NEEDS_SEED: lambda: position(TABLE, rules=Rules(redeal_once=True)).check_redeal(),
}

NOTATION_EXAMPLES: dict[NotationErrorCode, Callable[[], object]] = {
    NotationErrorCode.BAD_CARD: lambda: parse_card("1X"),
    NotationErrorCode.BAD_MOVE: lambda: parse_move("5D"),
    NotationErrorCode.BAD_PLACE: lambda: parse_move("5D x>1"),
    NotationErrorCode.BAD_ENCODING: lambda: decode_action(b"\xff\xff"),
    NotationErrorCode.BAD_POSITION: lambda: Board([[]] * 6, []),
    NotationErrorCode.BAD_RULES: lambda: Rules.from_json("klondike"),
}


@pytest.mark.parametrize("code", list(IllegalMoveCode))
def test_every_illegal_move_code_is_produced_by_the_engine(code: IllegalMoveCode) -> None:
    error = ILLEGAL_MOVE_EXAMPLES[code]()
    assert error is not None
    assert error.code is code
    assert error.message


@pytest.mark.parametrize("code", list(NotationErrorCode))
def test_every_notation_error_code_is_produced_by_the_engine(code: NotationErrorCode) -> None:
    with pytest.raises(NotationError) as raised:
        NOTATION_EXAMPLES[code]()
    assert raised.value.code is code
    assert raised.value.message


def test_the_error_codes_are_a_fixed_public_list() -> None:
    assert [code.value for code in IllegalMoveCode] == [
        "source_empty", "card_not_at_source", "card_covered", "same_place", "not_next_on_foundation",
        "column_rank_mismatch", "column_building_forbidden", "undo_not_allowed", "nothing_to_undo",
        "redeal_not_allowed", "redeal_already_used", "redeal_needs_seed",
    ]  # fmt: skip
    assert [code.value for code in NotationErrorCode] == [
        "bad_card", "bad_move", "bad_place", "bad_encoding", "bad_position", "bad_rules",
    ]  # fmt: skip
