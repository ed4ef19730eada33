"""The solver agrees with exhaustive search, its lines replay to wins, and it never touches the caller's board.

These tests run the pure-Python search, the reference; tests/test_solver_native.py checks that the optional
compiled search gives exactly the same answers.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator

import pytest
from engine_positions import position, snapshot
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from solver_brute_force import foundation_move_reachable, has_foundation_move, random_board, winnable
from tiers import examples

from shared import Board, Move, Profile, Rules
from shared.solver import Budget, Liveness, Verdict, hint, is_dead, solve
from shared.solver import search as solver_search
from shared.solver.api import relaxed_search
from shared.solver.position import Expander, RawMove, make_key, virtual_counts
from shared.solver.replay import replay_path
from shared.solver.search import Goal, Limits

BUDGET = Budget(nodes=200_000)
FOUNDATION_ONLY = Rules(Profile.FOUNDATION_ONLY)
PROPERTY = settings(max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
QUICK_SEEDS = (7, 10, 15, 20)
"""Deals the solver wins within a few hundred positions; their lines seed the mid-game positions below."""


@pytest.fixture(autouse=True, scope="module")
def pure_python_search() -> Iterator[None]:
    """Run the reference search even where the compiled one was built."""
    preferred = solver_search.PREFER_NATIVE
    solver_search.PREFER_NATIVE = False
    yield
    solver_search.PREFER_NATIVE = preferred


def replays_to_win(board: Board, moves: list[Move]) -> bool:
    """Whether pushing ``moves`` one by one on a copy of ``board`` is legal throughout and ends won."""
    work = board.copy()
    for move in moves:
        if not work.is_legal(move):
            return False
        work.push(move)
    return work.is_won()


def assert_solver_gives(board: Board, winnable_: bool, alive: bool) -> None:
    """solve and is_dead answer exactly ``winnable_`` and ``alive`` (never unknown here), leaving the board as it was."""
    before = snapshot(board)
    result = solve(board, BUDGET)
    liveness = is_dead(board, BUDGET).liveness
    assert snapshot(board) == before
    assert result.verdict is (Verdict.SOLVED if winnable_ else Verdict.UNSOLVABLE)
    if winnable_:
        assert replays_to_win(board, result.moves)
    assert liveness is (Liveness.ALIVE if alive else Liveness.DEAD)


def check_against_brute_force(board: Board) -> None:
    """Inside a property test: compare with exhaustive search (positions too big for it are skipped)."""
    expected_win = winnable(board)
    expected_alive = board.is_won() or foundation_move_reachable(board)  # a won board is alive by definition
    assume(expected_win is not None and expected_alive is not None)
    assert expected_win is not None and expected_alive is not None
    event(f"{'winnable' if expected_win else 'unwinnable'}, {'alive' if expected_alive else 'dead'}")
    assert_solver_gives(board, expected_win, expected_alive)


# --- hand-made positions ------------------------------------------------------------------------------------


def test_a_position_needing_bouquet_cards_on_columns_is_solved_and_the_line_replays() -> None:
    # The 9C covers the 8C the clubs need next; it can only leave onto a ten, and both tens are in the bouquet.
    board = position(["8C 9C", "9S JS", "QS", "KC", "KS QC", "JC"], bouquet="TS TC", foundations="7C KD KH 8S", bury_rest_in=None)
    assert winnable(board) is True
    result = solve(board, BUDGET)
    assert result.verdict is Verdict.SOLVED
    assert replays_to_win(board, result.moves)


def test_kings_over_the_cards_their_suits_need_with_no_empty_column_are_unsolvable_and_dead() -> None:
    board = position(["9C JD KC", "9D JC KD", "QH KH", "QS KS", "QC TC", "QD TD"], foundations="8C 8D JH JS", bury_rest_in=None)
    assert winnable(board) is False
    assert foundation_move_reachable(board) is False
    assert solve(board, BUDGET).verdict is Verdict.UNSOLVABLE
    assert is_dead(board, BUDGET).liveness is Liveness.DEAD


def test_dead_is_never_claimed_while_a_foundation_move_is_available() -> None:
    board = Board.deal(20)
    for move in winning_line(20):
        if has_foundation_move(board):
            assert is_dead(board, BUDGET).liveness is Liveness.ALIVE
        board.push(move)
    assert board.is_won()
    assert is_dead(board, BUDGET).liveness is Liveness.ALIVE


def test_a_won_board_is_solved_with_no_moves() -> None:
    won = Board([[]] * 6, [], [13, 13, 13, 13])
    result = solve(won, BUDGET)
    assert result.verdict is Verdict.SOLVED
    assert result.moves == []


def test_foundation_only_wins_exactly_when_the_cards_come_out_in_order() -> None:
    in_order = position(["JC TC", "QC", "", "", "", ""], bouquet="KC", foundations="9C KD KH KS", rules=FOUNDATION_ONLY, bury_rest_in=None)
    blocked = position(["TC JC", "QC", "", "", "", ""], bouquet="KC", foundations="9C KD KH KS", rules=FOUNDATION_ONLY, bury_rest_in=None)
    assert solve(in_order, BUDGET).verdict is Verdict.SOLVED
    assert solve(blocked, BUDGET).verdict is Verdict.UNSOLVABLE
    assert is_dead(blocked, BUDGET).liveness is Liveness.DEAD
    classic = position(["TC JC", "QC", "", "", "", ""], bouquet="KC", foundations="9C KD KH KS", bury_rest_in=None)
    assert solve(classic, BUDGET).verdict is Verdict.SOLVED
    assert is_dead(classic, BUDGET).liveness is Liveness.ALIVE


# --- random small positions ----------------------------------------------------------------------------------


@st.composite
def small_positions(draw: st.DrawFn) -> Board:
    """6–14 cards off the foundations, either profile (foundation-only ones are mostly lost)."""
    rules = Rules(draw(st.sampled_from([Profile.CLASSIC, Profile.CLASSIC, Profile.FOUNDATION_ONLY])))
    rng = random.Random(draw(st.integers(0, 2**32)))
    return random_board(rng, draw(st.integers(6, 14)), rules, bouquet_at_most=5, buried_low=0.3)


@st.composite
def tight_positions(draw: st.DrawFn) -> Board:
    """Classic positions with 16–22 cards, low cards buried and no foundation move: where unsolvable and dead
    positions of the classic rules live (about one in ten is lost)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    board = random_board(rng, draw(st.integers(16, 22)), Rules(), bouquet_at_most=2, buried_low=0.8)
    assume(not has_foundation_move(board))
    return board


@PROPERTY
@given(small_positions())
def test_random_small_positions_agree_with_exhaustive_search(board: Board) -> None:
    check_against_brute_force(board)


@pytest.mark.search
@settings(PROPERTY, max_examples=examples(40))
@given(tight_positions())
def test_tight_classic_positions_agree_with_exhaustive_search(board: Board) -> None:
    check_against_brute_force(board)


@settings(PROPERTY, max_examples=examples(60))
@given(st.one_of(tight_positions(), small_positions()))
def test_the_relaxed_game_is_exhausted_only_where_exhaustive_search_finds_no_win(board: Board) -> None:
    expected_win = winnable(board)
    assume(expected_win is not None)
    relaxed = relaxed_search(board, Limits(BUDGET.nodes, None))
    event(f"{'winnable' if expected_win else 'unwinnable'}, relaxed {'exhausted' if relaxed.exhausted else 'won or spent'}")
    if relaxed.exhausted:
        assert expected_win is False


@pytest.mark.parametrize(("seed", "dead"), [(111, True), (314, True), (453, True), (255, False), (993, False), (1034, False)])
def test_lost_tight_positions_are_proved_unsolvable_and_dead_only_when_dead(seed: int, dead: bool) -> None:
    # Found by scanning random_board(random.Random(seed), 16 + seed % 7, ...) for positions exhaustive search loses.
    board = random_board(random.Random(seed), 16 + seed % 7, Rules(), bouquet_at_most=2, buried_low=0.8)
    assert winnable(board) is False
    assert foundation_move_reachable(board) is (not dead)
    assert_solver_gives(board, False, not dead)


@functools.cache
def winning_line(seed: int) -> tuple[Move, ...]:
    result = solve(Board.deal(seed), Budget(nodes=20_000))
    assert result.verdict is Verdict.SOLVED
    return tuple(result.moves)


@st.composite
def played_positions(draw: st.DrawFn) -> Board:
    """A deal played along a winning line until 6–13 cards are left, then 0–8 random legal moves (which may lose)."""
    seed = draw(st.sampled_from(QUICK_SEEDS))
    board = Board.deal(seed)
    target = draw(st.integers(6, 13))
    for move in winning_line(seed):
        if board.cards_left <= target:
            break
        board.push(move)
    for _ in range(draw(st.integers(0, 8))):
        legal = board.legal_moves()
        if not legal:
            break
        board.push(draw(st.sampled_from(legal)))
    return board


@pytest.mark.search
@PROPERTY
@given(played_positions())
def test_positions_reached_by_play_agree_with_exhaustive_search(board: Board) -> None:
    check_against_brute_force(board)


# --- whole deals ------------------------------------------------------------------------------------------------


@pytest.mark.search
@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_deal_solutions_replay_to_a_win_and_leave_the_board_untouched(seed: int) -> None:
    board = Board.deal(seed)
    before = snapshot(board)
    result = solve(board, Budget(nodes=20_000))
    assert snapshot(board) == before
    assert result.verdict is Verdict.SOLVED
    assert replays_to_win(board, result.moves)


def test_mid_game_position_solutions_replay_from_that_position() -> None:
    board = Board.deal(20)
    for move in winning_line(20)[:30]:
        board.push(move)
    result = solve(board, Budget(nodes=20_000))
    assert result.verdict is Verdict.SOLVED
    assert replays_to_win(board, result.moves)


@pytest.mark.parametrize("seed", [5, 41, 72, 100])
def test_known_unsolvable_deals_are_proved_quickly(seed: int) -> None:
    assert solve(Board.deal(seed), Budget(nodes=2_000)).verdict is Verdict.UNSOLVABLE


@pytest.mark.search
@pytest.mark.parametrize("seed", [172, 188])
def test_the_relaxed_game_proves_lost_deals_the_real_search_cannot_finish(seed: int) -> None:
    # The real search needs 207,175 (seed 172) and 122,356 (seed 188) positions to exhaust these deals.
    assert hint(Board.deal(seed), Budget(nodes=50_000)).verdict is Verdict.UNKNOWN  # no relaxed game in hint
    assert relaxed_search(Board.deal(seed), Limits(25_000, None)).exhausted
    assert solve(Board.deal(seed), Budget(nodes=50_000)).verdict is Verdict.UNSOLVABLE



@pytest.mark.search
def test_the_finder_wins_a_deal_the_complete_search_cannot_within_its_budget() -> None:
    # Seed 616: the complete search needs more than 16 million positions; the finder about 2,000.
    board = Board.deal(616)
    found, columns = list(board.foundations), [bytes(column) for column in board.columns]
    moves: list[RawMove] = []
    Expander(board.bouquet, builds=True).play_forced(found, columns, virtual_counts(columns), moves)
    outcomes = {
        shuffles: solver_search.search(Expander(board.bouquet, builds=True, shuffles=shuffles), make_key(found, columns), Goal.WON, Limits(20_000, None), (3, 5))
        for shuffles in (True, False)
    }
    assert outcomes[True].goal_path is None and not outcomes[True].exhausted
    finder_path = outcomes[False].goal_path
    assert finder_path is not None
    assert replays_to_win(board, replay_path(board, moves, finder_path, Expander(board.bouquet, builds=True, shuffles=False)))
    result = hint(board, Budget(nodes=20_000))  # the quick finder first
    assert result.verdict is Verdict.SOLVED and result.move is not None and board.is_legal(result.move)


def test_a_node_budget_gives_the_same_answer_every_time() -> None:
    board = Board.deal(48)
    first, second = solve(board, Budget(nodes=300)), solve(board, Budget(nodes=300))
    assert first.verdict is second.verdict is Verdict.UNKNOWN
    assert first.nodes == second.nodes == 300
