"""A deal with a known winning line, so race tests can drive a race to a win.

The line comes from the project's solver (a node budget keeps it deterministic);
the lobby tests also rely on seed 15 being winnable.
"""

from __future__ import annotations

from functools import cache

from shared import Board, action_text, parse_action
from shared.solver import Budget, Verdict, solve

WINNABLE_SEED = 15


@cache
def winning_deal() -> tuple[int, tuple[str, ...]]:
    """Seed 15 and a winning line for it, in notation."""
    result = solve(Board.deal(WINNABLE_SEED), Budget(nodes=500_000))
    assert result.verdict is Verdict.SOLVED, f"the solver did not solve seed {WINNABLE_SEED}: {result.verdict}"
    return WINNABLE_SEED, tuple(action_text(move) for move in result.moves)


def first_foundation_prefix(seed: int, line: tuple[str, ...], count: int) -> list[str]:
    """The shortest prefix of ``line`` that puts ``count`` cards on the foundations."""
    board = Board.deal(seed)
    for index, move in enumerate(line):
        if board.foundation_count >= count:
            return list(line[:index])
        board.play(parse_action(move))
    raise AssertionError("the line never reaches that count")
