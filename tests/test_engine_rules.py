"""One test per rule of issue 2 (classic and foundation-only profiles), named after the rule it proves."""

from __future__ import annotations

import pytest
from engine_positions import cards, move, position, snapshot

from shared import (
    BOUQUET,
    FOUNDATION,
    Board,
    IllegalMoveCode,
    IllegalMoveError,
    Move,
    NotationError,
    NotationErrorCode,
    Profile,
    Rules,
    Status,
    decode_action,
    encode_action,
    move_text,
    parse_card,
    parse_move,
)
from shared.cards import FULL_DECK

FOUNDATION_ONLY = Rules(Profile.FOUNDATION_ONLY)


def legal_texts(board: Board) -> set[str]:
    """The board's legal moves in notation."""
    return {move_text(legal) for legal in board.legal_moves()}


def refusal(board: Board, text: str) -> IllegalMoveCode:
    """The code with which the board refuses a move (fails the test if the move is legal)."""
    error = board.check_move(parse_move(text))
    assert error is not None, f"{text} should be illegal"
    return error.code


# --- the deal -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, 2**63, 2**64 - 1])
def test_a_deal_has_six_columns_of_six_a_bouquet_of_sixteen_and_empty_foundations(seed: int) -> None:
    board = Board.deal(seed)
    assert [len(column) for column in board.columns] == [6] * 6
    assert len(board.bouquet) == 16
    assert board.foundations == (0, 0, 0, 0)
    assert board.foundation_count == 0
    assert sorted([*board.bouquet, *(card for column in board.columns for card in column)]) == list(FULL_DECK)


def test_foundation_only_deals_the_same_layout_as_classic() -> None:
    classic, strict = Board.deal(7), Board.deal(7, FOUNDATION_ONLY)
    assert (classic.columns, classic.bouquet) == (strict.columns, strict.bouquet)


# --- available cards ----------------------------------------------------------------------------------------


def test_available_cards_are_every_bouquet_card_and_the_last_card_of_each_non_empty_column() -> None:
    board = position(["3C 9S", "QH", "", "JD 4H", "TC", "KS"], bouquet="5D 7C 2S")
    assert set(board.available()) == {
        *((card, BOUQUET) for card in cards("5D 7C 2S")),
        *zip(cards("9S QH 4H TC KS"), [0, 1, 3, 4, 5], strict=True),
    }


def test_an_interior_column_card_is_refused_even_where_it_would_fit() -> None:
    board = position(["9S 6C", "TH", "QS", "QC", "QD", "KS"], foundations="8S")
    assert refusal(board, "9S 1>f") is IllegalMoveCode.CARD_COVERED
    assert refusal(board, "9S 1>2") is IllegalMoveCode.CARD_COVERED


def test_a_move_takes_one_card_and_never_a_group() -> None:
    board = position(["9S 6C 5H", "6D", "QS", "QC", "QD", "KS"])
    assert refusal(board, "6C 1>2") is IllegalMoveCode.CARD_COVERED  # 6C cannot take 5H along
    board.push(move("5H 1>2"))
    assert board.columns[0][-2:] == tuple(cards("9S 6C"))
    assert board.columns[1] == tuple(cards("6D 5H"))


# --- foundations ------------------------------------------------------------------------------------------


def test_an_ace_starts_its_foundation_from_the_bouquet_or_a_column() -> None:
    board = position(["AC", "QH", "QS", "QC", "QD", "KS"], bouquet="AD 5H")
    assert {"AC 1>f", "AD b>f"} <= legal_texts(board)
    board.push(move("AD b>f"))
    board.push(move("AC 1>f"))
    assert board.foundations == (1, 1, 0, 0)
    assert board.foundation_count == 2


def test_a_foundation_takes_only_the_next_rank_of_its_own_suit() -> None:
    board = position(["JH", "QH", "QS", "QC", "QD", "KS"], bouquet="6C 5D 5C", foundations="4C")
    assert refusal(board, "6C b>f") is IllegalMoveCode.NOT_NEXT_ON_FOUNDATION
    assert refusal(board, "5D b>f") is IllegalMoveCode.NOT_NEXT_ON_FOUNDATION
    board.push(move("5C b>f"))
    assert "6C b>f" in legal_texts(board)


def test_a_foundation_starts_with_an_ace_only_not_a_king() -> None:
    board = position(["JH", "QH", "QS", "QC", "QD", "KS"], bouquet="KD 2D")
    assert refusal(board, "KD b>f") is IllegalMoveCode.NOT_NEXT_ON_FOUNDATION
    assert refusal(board, "2D b>f") is IllegalMoveCode.NOT_NEXT_ON_FOUNDATION


def test_no_king_to_ace_wrap_on_a_foundation() -> None:
    board = position(["JH", "QH", "QS", "AD", "QD", "KS"], bouquet="KC", foundations="QC")
    board.push(move("KC b>f"))
    assert board.foundations[0] == 13
    assert not any(board.accepts_on_foundation(card) for card in cards("AC 2C KC"))
    error = board.check_move(move("AD 4>f"))
    assert error is None  # the diamond foundation is unaffected


def test_cards_on_a_foundation_never_come_back() -> None:
    board = position(["AC", "QH", "QS", "QC", "QD", "KS"])
    board.push(move("AC 1>f"))
    assert refusal(board, "AC 1>f") is IllegalMoveCode.SOURCE_EMPTY
    assert refusal(board, "AC b>f") is IllegalMoveCode.CARD_NOT_AT_SOURCE
    assert all(legal.card != parse_card("AC") for legal in board.legal_moves())
    with pytest.raises(NotationError) as raised:
        parse_move("AC f>1")
    assert raised.value.code is NotationErrorCode.BAD_PLACE
    with pytest.raises(NotationError):
        Move(parse_card("AC"), FOUNDATION, 0)


# --- columns -----------------------------------------------------------------------------------------------


def test_a_column_accepts_a_card_exactly_one_rank_lower_of_any_suit_or_colour() -> None:
    board = position(["6C", "6H", "6D", "6S", "QD", "KS"], bouquet="5D 5C")
    assert {"5D b>1", "5D b>2", "5D b>3", "5D b>4", "5C b>1", "5C b>4"} <= legal_texts(board)


def test_a_column_refuses_a_card_that_is_not_exactly_one_rank_lower() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], bouquet="4D 6D 7D")
    for text in ("4D b>1", "6D b>1", "7D b>1"):
        assert refusal(board, text) is IllegalMoveCode.COLUMN_RANK_MISMATCH


def test_no_king_to_ace_wrap_on_a_column() -> None:
    board = position(["AC", "KC", "2C", "QC", "QD", "KS"], bouquet="KD AD")
    assert refusal(board, "KD b>1") is IllegalMoveCode.COLUMN_RANK_MISMATCH
    assert refusal(board, "AD b>2") is IllegalMoveCode.COLUMN_RANK_MISMATCH
    assert "AD b>3" in legal_texts(board)


def test_any_card_may_go_to_an_empty_column_not_only_a_king() -> None:
    board = position(["", "7C", "QS", "QC", "QD", "KS"], bouquet="3H KD")
    assert {"3H b>1", "KD b>1", "7C 2>1", "QS 3>1"} <= legal_texts(board)
    board.push(move("3H b>1"))
    assert board.columns[0] == tuple(cards("3H"))


def test_a_lone_card_moving_to_another_empty_column_is_listed_although_pointless() -> None:
    board = position(["", "7C", "", "QC", "QD", "KS"])
    assert {"7C 2>1", "7C 2>3"} <= legal_texts(board)


def test_a_card_to_its_own_column_is_refused() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"])
    assert refusal(board, "6C 1>1") is IllegalMoveCode.SAME_PLACE
    assert refusal(position(["6C", "QH", "QS", "QC", "QD", "KS"], rules=FOUNDATION_ONLY), "6C 1>1") is IllegalMoveCode.SAME_PLACE


def test_nothing_goes_back_to_the_bouquet() -> None:
    with pytest.raises(NotationError) as raised:
        parse_move("6C 1>b")
    assert raised.value.code is NotationErrorCode.BAD_PLACE
    with pytest.raises(NotationError):
        Move(parse_card("6C"), 0, BOUQUET)
    with pytest.raises(NotationError) as decoded:
        decode_action(bytes([parse_card("6C"), 0 * 16 + BOUQUET]))
    assert decoded.value.code is NotationErrorCode.BAD_ENCODING
    assert encode_action(move("6C 1>f")) == bytes([parse_card("6C"), 0x07])


def test_a_column_may_stay_empty_and_nothing_refills_it() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], bouquet="5D 2H", foundations="5C")
    board.push(move("6C 1>f"))
    assert board.columns[0] == ()
    assert board.bouquet == tuple(cards("5D 2H"))
    assert board.status() is Status.PLAYING


# --- the worked example of the rules (seeds: rules-classic-en.txt, section 08) ------------------------------


def test_worked_example_five_of_diamonds_leaves_the_middle_of_the_bouquet_onto_six_of_clubs() -> None:
    four, five, nine, six_of_clubs = cards("4D 5D 9D 6C")
    rest = [card for card in FULL_DECK if card not in (four, five, nine, six_of_clubs)]
    columns = [[*rest[0:12], six_of_clubs], rest[12:21], rest[21:30], rest[30:39], rest[39:48], rest[48:]]
    board = Board(columns, [four, five, nine], (0, 0, 0, 0))

    assert board.check_move(Move(five, BOUQUET, 0)) is None  # straight from the middle of the bouquet
    board.push(Move(five, BOUQUET, 0))
    assert board.columns[0][-2:] == (six_of_clubs, five)  # 5♦ on 6♣: differing suits are legal
    assert list(board.bouquet) == [four, nine]
    assert {(four, BOUQUET), (nine, BOUQUET)} <= set(board.available())  # despite the gap
    assert Move(four, BOUQUET, 0) in board.legal_moves()
    board.push(Move(four, BOUQUET, 0))
    assert board.columns[0][-3:] == (six_of_clubs, five, four)
    assert list(board.bouquet) == [nine]


# --- winning, blocked and dead ------------------------------------------------------------------------------


def test_an_empty_bouquet_is_not_a_win() -> None:
    board = position(["KC", "KD", "KH", "KS", "", ""], foundations="QC QD QH QS", bury_rest_in=None)
    assert board.bouquet == ()
    assert not board.is_won()
    assert board.status() is Status.PLAYING


def test_the_game_is_won_with_all_52_cards_on_the_foundations() -> None:
    board = position(["KC", "KD", "KH", "KS", "", ""], foundations="QC QD QH QS", bury_rest_in=None)
    for text in ("KC 1>f", "KD 2>f", "KH 3>f"):
        board.push(move(text))
        assert board.status() is Status.PLAYING
    board.push(move("KS 4>f"))
    assert board.foundation_count == 52
    assert board.is_won()
    assert board.status() is Status.WON
    assert board.legal_moves() == []


def test_the_status_is_blocked_when_no_legal_move_exists() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], bouquet="5D", rules=FOUNDATION_ONLY)
    assert board.legal_moves() == []
    assert board.status() is Status.BLOCKED


def test_the_status_is_dead_only_when_the_dead_check_proves_it() -> None:
    board = Board.deal(42)
    assert board.status() is Status.PLAYING
    assert board.status(lambda _: False) is Status.PLAYING
    assert board.status(lambda _: True) is Status.DEAD
    won = position(["", "", "", "KS", "", ""], foundations="KC KD KH QS", bury_rest_in=None)
    won.push(move("KS 4>f"))
    assert won.status(lambda _: True) is Status.WON


# --- the foundation-only profile ----------------------------------------------------------------------------


def test_foundation_only_allows_moves_to_the_foundations_only() -> None:
    board = position(["6C", "", "QS", "QC", "QD", "KS"], bouquet="5D AC", rules=FOUNDATION_ONLY)
    assert legal_texts(board) == {"AC b>f"}
    assert refusal(board, "5D b>1") is IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN
    assert refusal(board, "5D b>2") is IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN  # even to an empty column
    assert refusal(board, "KS 6>2") is IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN


def test_foundation_only_plays_foundation_moves_like_classic() -> None:
    board = position(["AC", "QH", "QS", "QC", "QD", "KS"], bouquet="2C", rules=FOUNDATION_ONLY)
    board.push(move("AC 1>f"))
    board.push(move("2C b>f"))
    assert board.foundations == (2, 0, 0, 0)


# --- refusals leave the position alone ----------------------------------------------------------------------


def test_pushing_an_illegal_move_raises_with_its_code_and_changes_nothing() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], bouquet="4D")
    before = snapshot(board)
    with pytest.raises(IllegalMoveError) as raised:
        board.push(move("4D b>1"))
    assert raised.value.code is IllegalMoveCode.COLUMN_RANK_MISMATCH
    assert "4D b>1" in raised.value.message
    assert snapshot(board) == before
