"""The optional compiled search gives exactly what the pure-Python reference gives: verdicts, nodes and lines."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solver_brute_force import random_board
from tiers import examples

from shared import Board, Profile, Rules
from shared.solver import Budget, hint, is_dead, solve
from shared.solver import search as solver_search
from shared.solver.api import relaxed_search
from shared.solver.position import Expander, make_key
from shared.solver.search import Goal, Limits, SearchOutcome, Switch

pytestmark = pytest.mark.skipif(not solver_search.native_available(), reason="the compiled search was not built (no C compiler)")


@pytest.fixture(autouse=True)
def restore_preference() -> Iterator[None]:
    preferred = solver_search.PREFER_NATIVE
    yield
    solver_search.PREFER_NATIVE = preferred


def both(call: Callable[[], Any]) -> tuple[Any, Any]:
    """``call()`` with the Python search, then with the compiled one."""
    solver_search.PREFER_NATIVE = False
    reference = call()
    solver_search.PREFER_NATIVE = True
    return reference, call()


def assert_same_answers(board: Board, nodes: int) -> None:
    budget = Budget(nodes=nodes)
    python, native = both(lambda: solve(board, budget))
    assert (native.verdict, native.nodes, native.moves) == (python.verdict, python.nodes, python.moves)
    python, native = both(lambda: is_dead(board, budget))
    assert (native.liveness, native.nodes) == (python.liveness, python.nodes)
    python, native = both(lambda: hint(board, budget))
    assert (native.move, native.verdict, native.nodes) == (python.move, python.verdict, python.nodes)


@pytest.mark.search
@pytest.mark.parametrize("seed", range(1, 31))
def test_deals_get_the_same_answers_nodes_and_lines(seed: int) -> None:
    assert_same_answers(Board.deal(seed), 2_000)


@pytest.mark.search
def test_a_long_search_expands_the_same_positions() -> None:
    assert_same_answers(Board.deal(50), 30_000)


def test_foundation_only_deals_get_the_same_answers() -> None:
    for seed in range(1, 6):
        assert_same_answers(Board.deal(seed, Rules(Profile.FOUNDATION_ONLY)), 2_000)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.integers(6, 24), st.sampled_from([Profile.CLASSIC, Profile.CLASSIC, Profile.FOUNDATION_ONLY]))
def test_random_positions_get_the_same_answers(seed: int, left: int, profile: Profile) -> None:
    board = random_board(random.Random(seed), left, Rules(profile), bouquet_at_most=4, buried_low=0.5)
    assert_same_answers(board, 3_000)


@pytest.mark.search
@pytest.mark.parametrize("seed", [188, 232, 2])
def test_the_relaxed_game_gets_the_same_answers(seed: int) -> None:
    # 188: exhausted after 14,474 positions; 232: still open after 40,000; 2: a relaxed win.
    python, native = both(lambda: relaxed_search(Board.deal(seed), Limits(40_000, None)))
    assert (native.exhausted, native.nodes, native.goal_path) == (python.exhausted, python.nodes, python.goal_path)


@pytest.mark.search
@pytest.mark.parametrize("shuffles", [True, False])
def test_a_search_that_changes_order_midway_expands_the_same_positions(shuffles: bool) -> None:
    board = Board.deal(98)
    expander = Expander(board.bouquet, builds=True, shuffles=shuffles)
    root = make_key(list(board.foundations), [bytes(column) for column in board.columns])

    def run() -> SearchOutcome:
        return solver_search.search(expander, root, Goal.WON, Limits(20_000, None), (2, 1), Switch(Limits(7_000, None), (3, 5)))

    python, native = both(run)
    assert (native.nodes, native.exhausted, native.goal_path, native.best_path) == (python.nodes, python.exhausted, python.goal_path, python.best_path)


def test_a_time_budget_stops_the_compiled_search_too() -> None:
    solver_search.PREFER_NATIVE = True
    result = solve(Board.deal(48), Budget(seconds=0.2))
    assert result.verdict.value == "unknown" and result.nodes > 0
