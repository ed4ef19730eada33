"""Properties of the engine under random play (Hypothesis): conservation, exact push/pop and undo, legal_moves
agreeing with check_move on every possible move, JSON round trips, and notation that never fails unexpectedly."""

from __future__ import annotations

import itertools
import json

from engine_positions import EVERY_MOVE, random_play, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from shared import (
    Board,
    IllegalMoveCode,
    NotationError,
    Profile,
    Rules,
    Special,
    decode_action,
    encode_action,
    move_text,
    parse_action,
    parse_card,
    parse_move,
)
from shared.cards import DECK_SIZE, FULL_DECK

PROPERTY = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


seeds = st.integers(min_value=0, max_value=2**64 - 1)
rule_sets = st.builds(Rules, st.sampled_from(Profile), st.booleans(), st.booleans())
plays = st.tuples(seeds, st.integers(min_value=10, max_value=150))
"""How a random player plays: the seed of its own SplitMix64 and how many actions it tries."""


@st.composite
def arbitrary_boards(draw: st.DrawFn, rules: st.SearchStrategy[Rules]) -> Board:
    """Any position at all: random foundation heights, the other cards in random order over columns and bouquet.

    Reaches what random play from a deal rarely does: near-won games, empty bouquets, many empty columns.
    """
    tops = draw(st.lists(st.integers(min_value=0, max_value=13), min_size=4, max_size=4))
    rest = draw(st.permutations([card for card in FULL_DECK if card % 13 >= tops[card // 13]]))
    places = draw(st.lists(st.integers(min_value=0, max_value=6), min_size=len(rest), max_size=len(rest)))
    columns = [[card for card, place in zip(rest, places, strict=True) if place == index] for index in range(6)]
    bouquet = [card for card, place in zip(rest, places, strict=True) if place == 6]
    return Board(columns, bouquet, tops, draw(rules), draw(st.none() | seeds))


def boards(rules: st.SearchStrategy[Rules] = rule_sets) -> st.SearchStrategy[Board]:
    """Fresh deals and arbitrary positions under ``rules``."""
    return st.builds(Board.deal, seeds, rules) | arbitrary_boards(rules)


def cards_everywhere(board: Board) -> list[int]:
    """Every card of the position, foundations included, sorted."""
    on_foundations = [suit * 13 + rank for suit, top in enumerate(board.foundations) for rank in range(top)]
    return sorted([*on_foundations, *board.bouquet, *(card for column in board.columns for card in column)])


@PROPERTY
@given(boards(), plays)
def test_the_52_cards_are_conserved_under_any_legal_play_with_undo_and_redeal(board: Board, play: tuple[int, int]) -> None:
    for _ in random_play(board, play):
        assert cards_everywhere(board) == list(FULL_DECK)
        assert 0 <= board.foundation_count <= DECK_SIZE
        Board(board.columns, board.bouquet, board.foundations)  # the constructor's own conservation check


@PROPERTY
@given(boards(), plays)
def test_pop_takes_back_every_push_and_redeal_exactly_including_bouquet_order(board: Board, play: tuple[int, int]) -> None:
    history = [snapshot(board)]
    for _ in random_play(board, play, specials=(Special.REDEAL,)):
        history.append(snapshot(board))
    for expected in reversed(history[:-1]):
        board.pop()
        assert snapshot(board) == expected


@PROPERTY
@given(boards(st.builds(Rules, st.sampled_from(Profile), st.just(True), st.booleans())), plays)
def test_each_undo_restores_the_position_before_the_move_and_counts_once(board: Board, play: tuple[int, int]) -> None:
    history = [snapshot(board)[:3]]
    for _ in random_play(board, play, specials=()):
        history.append(snapshot(board)[:3])
    for count, expected in enumerate(reversed(history[:-1]), start=1):
        board.undo()
        assert snapshot(board)[:3] == expected
        assert board.undos == count
    assert board.check_undo() is not None


@settings(max_examples=examples(50), deadline=None)
@given(boards(), st.tuples(seeds, st.integers(min_value=0, max_value=30)))
def test_legal_moves_are_exactly_the_moves_that_check_move_accepts(board: Board, play: tuple[int, int]) -> None:
    for step, _ in enumerate(itertools.chain([None], random_play(board, play))):
        if step % 3:
            continue  # every third position: each check covers all 2,548 moves, and a failure must shrink quickly
        legal = board.legal_moves()
        assert len(set(legal)) == len(legal)
        legal_set = set(legal)
        for candidate in EVERY_MOVE:
            error = board.check_move(candidate)
            if candidate in legal_set:
                assert error is None, move_text(candidate)
            else:
                assert error is not None, move_text(candidate)
                assert isinstance(error.code, IllegalMoveCode)


@PROPERTY
@given(boards(), plays)
def test_every_position_round_trips_through_its_json_text(board: Board, play: tuple[int, int]) -> None:
    for _ in random_play(board, play):
        pass
    document = board.to_json()
    twin = Board.from_json(json.loads(json.dumps(document)))
    assert snapshot(twin)[:5] == snapshot(board)[:5]
    assert (twin.rules, twin.seed) == (board.rules, board.seed)
    assert {**twin.to_json(), "can_undo": None} == {**document, "can_undo": None}  # the history is not in the format


@PROPERTY
@given(boards(), plays)
def test_every_action_played_round_trips_through_text_and_bytes(board: Board, play: tuple[int, int]) -> None:
    for action in random_play(board, play):
        text = action.value if isinstance(action, Special) else move_text(action)
        assert parse_action(text) == action
        assert decode_action(encode_action(action)) == action


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=24) | st.sampled_from(["5D b>3", "10♥ 4>f", "kc 6>1", "undo"]).map(lambda text: text + " "))
def test_reading_any_text_gives_an_action_or_a_notation_error(text: str) -> None:
    try:
        action = parse_action(text)
    except NotationError:
        return
    assert parse_action(action.value if isinstance(action, Special) else move_text(action)) == action


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=8))
def test_reading_any_text_as_a_card_gives_a_card_or_bad_card(text: str) -> None:
    try:
        card = parse_card(text)
    except NotationError as error:
        assert error.code.value == "bad_card"
    else:
        assert 0 <= card < DECK_SIZE


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(sorted(Board.deal(0).to_json())), json_values)
def test_from_json_refuses_any_spoiled_field_with_a_notation_error_only(field: str, value: object) -> None:
    document = {**Board.deal(0).to_json(), field: value}
    try:
        Board.from_json(document)
    except NotationError:
        pass


def test_move_parsing_agrees_with_the_exhaustive_move_list() -> None:
    assert {parse_move(move_text(candidate)) for candidate in EVERY_MOVE} == set(EVERY_MOVE)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boards(), plays)
def test_has_legal_move_agrees_with_the_full_list_of_legal_moves(board: Board, play: tuple[int, int]) -> None:
    assert board.has_legal_move() == bool(board.legal_moves())
    for _ in random_play(board, play):
        assert board.has_legal_move() == bool(board.legal_moves())


@given(st.sampled_from(Profile))
def test_has_legal_move_is_false_when_every_column_ends_in_a_king_or_a_jack_and_the_bouquet_is_empty(profile: Profile) -> None:
    kings, jacks = [suit * 13 + 12 for suit in range(4)], [10, 23]
    rest = [card for card in FULL_DECK if card not in kings and card not in jacks]
    columns = [[*rest[index::6], top] for index, top in enumerate([*kings, *jacks])]
    board = Board(columns, [], rules=Rules(profile))
    assert board.legal_moves() == []
    assert not board.has_legal_move()
