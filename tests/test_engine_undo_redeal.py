"""The undo option (counted, refusable) and the redeal-once house rule (deterministic, round-robin)."""

from __future__ import annotations

import pytest
from engine_positions import cards, move, position, snapshot

from shared import Board, IllegalMoveCode, IllegalMoveError, Rules, Special, SplitMix64
from shared.deal import REDEAL_SALT, redeal_columns, shuffle

UNDO = Rules(undo=True)
REDEAL = Rules(redeal_once=True)
BOTH = Rules(undo=True, redeal_once=True)


def refused(board: Board, action: Special) -> IllegalMoveCode:
    """Play ``action``, expect a refusal that leaves the board unchanged, and return its code."""
    before = snapshot(board)
    check = board.check_action(action)
    assert check is not None
    with pytest.raises(IllegalMoveError) as raised:
        board.play(action)
    assert snapshot(board) == before
    assert check.code is raised.value.code
    return raised.value.code


def first_legal(board: Board, count: int) -> None:
    """Push the first legal move ``count`` times."""
    for _ in range(count):
        board.push(board.legal_moves()[0])


# --- undo ---------------------------------------------------------------------------------------------------


def test_undo_is_refused_when_the_game_does_not_allow_it() -> None:
    board = Board.deal(42)
    first_legal(board, 1)
    assert refused(board, Special.UNDO) is IllegalMoveCode.UNDO_NOT_ALLOWED
    assert board.undos == 0


def test_undo_with_no_move_played_is_refused() -> None:
    assert refused(Board.deal(42, UNDO), Special.UNDO) is IllegalMoveCode.NOTHING_TO_UNDO


def test_undo_reverts_the_last_move_and_is_counted() -> None:
    board = Board.deal(42, UNDO)
    fresh = snapshot(board)
    first_legal(board, 1)
    undone = board.undo()
    assert board.undos == 1
    assert (board.columns, board.bouquet, board.foundations, board.move_stack) == fresh[:3] + fresh[5:]
    assert undone in board.legal_moves()


def test_undo_reverts_any_move_even_a_card_sent_to_a_foundation() -> None:
    board = position(["AC", "QH", "QS", "QC", "QD", "KS"], rules=UNDO)
    board.push(move("AC 1>f"))
    board.play(Special.UNDO)
    assert board.foundations == (0, 0, 0, 0)
    assert board.columns[0] == tuple(cards("AC"))
    assert board.undos == 1


def test_undo_puts_a_bouquet_card_back_in_its_place() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], bouquet="4D 5D 9D", rules=UNDO)
    board.push(move("5D b>1"))
    board.undo()
    assert board.bouquet == tuple(cards("4D 5D 9D"))


def test_undos_are_counted_separately_from_moves() -> None:
    board = Board.deal(3, UNDO)
    first_legal(board, 3)
    board.undo()
    board.undo()
    first_legal(board, 1)
    assert board.undos == 2
    assert len(board.move_stack) == 2


def test_pop_takes_back_a_move_without_counting_an_undo() -> None:
    board = Board.deal(3)
    first_legal(board, 1)
    board.pop()
    assert board.undos == 0
    with pytest.raises(IndexError):
        board.pop()


# --- redeal -------------------------------------------------------------------------------------------------


def test_redeal_is_refused_without_the_house_rule() -> None:
    assert refused(Board.deal(5), Special.REDEAL) is IllegalMoveCode.REDEAL_NOT_ALLOWED


def test_redeal_is_allowed_once_per_game() -> None:
    board = Board.deal(5, REDEAL)
    board.play(Special.REDEAL)
    assert board.redeal_used
    assert refused(board, Special.REDEAL) is IllegalMoveCode.REDEAL_ALREADY_USED


def test_redeal_needs_the_seed_the_position_was_dealt_from() -> None:
    board = position(["6C", "QH", "QS", "QC", "QD", "KS"], rules=REDEAL)
    assert refused(board, Special.REDEAL) is IllegalMoveCode.REDEAL_NEEDS_SEED


def test_redeal_gathers_only_the_column_cards_and_keeps_bouquet_and_foundations() -> None:
    board = Board.deal(42, REDEAL)
    board.push(move("AC 1>f"))
    board.push(move("TC b>2"))
    column_cards = sorted(card for column in board.columns for card in column)
    bouquet, foundations = board.bouquet, board.foundations
    board.redeal()
    assert sorted(card for column in board.columns for card in column) == column_cards
    assert (board.bouquet, board.foundations) == (bouquet, foundations)


def test_redeal_deals_round_robin_a_pile_shuffled_from_the_game_seed() -> None:
    seed = 42
    board = Board.deal(seed, REDEAL)
    board.push(move("AC 1>f"))
    pile = [card for column in board.columns for card in column]  # column 1 to 6, first-dealt first
    shuffle(pile, SplitMix64(seed ^ REDEAL_SALT))
    board.redeal()
    assert board.columns == tuple(tuple(pile[k::6]) for k in range(6))
    assert [len(column) for column in board.columns] == [6, 6, 6, 6, 6, 5]  # 35 cards: the first columns get one more


def test_redeal_is_deterministic_for_a_seed_and_differs_between_seeds() -> None:
    twins = [Board.deal(9, REDEAL) for _ in range(2)]
    for twin in twins:
        first_legal(twin, 2)
        twin.redeal()
    assert twins[0].columns == twins[1].columns
    columns = Board.deal(9).columns
    assert redeal_columns(9, columns) == redeal_columns(9, columns)
    assert redeal_columns(9, columns) != redeal_columns(10, columns)


def test_redeal_of_empty_columns_leaves_them_empty() -> None:
    board = position(["", "", "", "", "", ""], bouquet=" ".join(f"{rank}S" for rank in "A23456789TJQK"),
                     foundations="KC KD KH", rules=REDEAL, seed=1, bury_rest_in=None)
    board.redeal()
    assert board.columns == ((),) * 6


def test_neither_a_redeal_nor_the_moves_before_it_can_be_undone() -> None:
    board = Board.deal(42, BOTH)
    first_legal(board, 1)
    board.redeal()
    assert refused(board, Special.UNDO) is IllegalMoveCode.NOTHING_TO_UNDO
    first_legal(board, 1)
    board.undo()
    assert refused(board, Special.UNDO) is IllegalMoveCode.NOTHING_TO_UNDO
    assert board.undos == 1
    assert board.redeal_used


def test_pop_takes_back_a_redeal_for_analysis_and_makes_it_available_again() -> None:
    board = Board.deal(42, BOTH)
    first_legal(board, 1)
    before = snapshot(board)
    board.redeal()
    assert board.pop() is Special.REDEAL
    assert snapshot(board) == before
    assert board.check_redeal() is None
    board.undo()
    assert board.move_stack == ()
