"""Move-entry help (shared/assist.py): a card's destinations, typed cards without a source, safe cards, the bouquet."""

from __future__ import annotations

import pytest
from engine_positions import cards, move, position

from shared import Board, IllegalMoveCode, IllegalMoveError, NotationError, NotationErrorCode
from shared.assist import destinations, read_typed_move, safe_moves, sorted_bouquet


def test_a_cards_destinations_list_the_foundation_first_then_columns_in_order() -> None:
    board = position(["6D", "", "4C", "6S", "9H", "KD"], bouquet="5H AC", foundations="4H")
    assert destinations(board, cards("5H")[0]) == [move("5H b>f"), move("5H b>1"), move("5H b>2"), move("5H b>4")]
    assert destinations(board, cards("KD")[0]) == [move("KD 6>2")]
    assert destinations(board, cards("9H")[0]) == [move("9H 5>2")]


def test_a_typed_card_with_one_destination_is_that_move_and_with_several_lists_them() -> None:
    board = position(["6D", "", "4C", "6S", "9H", "KD"], bouquet="5H AC", foundations="4H")
    assert read_typed_move(board, "kd").move == move("KD 6>2")
    several = read_typed_move(board, "5h")
    assert several.move is None and len(several.choices) == 4


def test_a_card_and_its_destination_need_no_source_because_each_card_is_in_one_place() -> None:
    board = position(["6D", "", "4C", "6S", "9H", "KD"], bouquet="5H AC", foundations="4H")
    assert read_typed_move(position(["", "", "", "", "", ""], bouquet="AS"), "as f").move == move("AS b>f")
    assert read_typed_move(board, "ac f").move == move("AC b>f")
    assert read_typed_move(board, "5H 4").move == move("5H b>4")
    assert read_typed_move(board, "9h 2").move == move("9H 5>2")
    assert read_typed_move(board, "5D b>3").move == move("5D b>3")  # full notation is taken as typed, legal or not


def test_a_card_that_cannot_move_says_why() -> None:
    board = position(["6D", "", "4C", "6S", "9H", "KD"], bouquet="5H AC", foundations="4H")
    buried = read_typed_move(board, "2C")  # under the cards of column 6
    assert buried.move is None and not buried.choices
    assert buried.why_not is not None and buried.why_not.code is IllegalMoveCode.CARD_COVERED
    with pytest.raises(IllegalMoveError) as home:
        read_typed_move(board, "3H f")
    assert home.value.code is IllegalMoveCode.CARD_NOT_AT_SOURCE
    with pytest.raises(NotationError) as unreadable:
        read_typed_move(board, "5X")
    assert unreadable.value.code is NotationErrorCode.BAD_CARD
    with pytest.raises(NotationError) as bad_place:
        read_typed_move(board, "5H 9")
    assert bad_place.value.code is NotationErrorCode.BAD_PLACE


def test_a_card_is_safe_to_send_home_only_when_every_card_a_rank_lower_is_on_a_foundation() -> None:
    board = position(["3C", "3D", "", "", "", ""], bouquet="2S AH", foundations="2C 2D AS")
    assert safe_moves(board) == [move("AH b>f")]  # 2S waits for every ace, 3C and 3D for every two
    board.push(move("AH b>f"))
    assert safe_moves(board) == [move("2S b>f")]
    board = position(["3C", "3D", "", "", "", ""], bouquet="3S", foundations="2C 2D 2H 2S")
    assert safe_moves(board) == [move("3C 1>f"), move("3D 2>f"), move("3S b>f")]


def test_the_bouquet_is_sorted_by_suit_then_rank() -> None:
    board = Board.deal(15)
    assert sorted_bouquet(board) == cards("2C 7C 9C TC KC 4D 9D TD 6H 9H AS 2S 3S 5S TS QS")
