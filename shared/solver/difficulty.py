"""How hard a deal is, from what the solver spent to win it: a tier players can ask for and the lobby shows.

The tier is read off one solve of the deal from its start: the positions the
search expanded before it reached its first win. A deal the quick finder wins
almost at once is easy for a person too (its winning lines are plentiful and
greedy play finds them); one that needs a broad search hides its lines behind
choices that look equal. The thresholds split the winnable deals of seeds
1–1000 (classic, 2 s budget) into roughly equal thirds; docs/BENCHMARKS.md
has the measured distribution, docs/PROTOCOL.md the tiers. The compiled and
the pure-Python searches expand the same positions, so the tier does not
depend on which ran, as long as the budget did not cut the search short.
"""

from __future__ import annotations

from shared.protocol.states import Difficulty
from shared.solver.results import SolveResult, Verdict

__all__ = ["EASY_MAX_NODES", "MEDIUM_MAX_NODES", "WINNABLE_TIERS", "Difficulty", "difficulty_of"]

EASY_MAX_NODES = 2_000
"""Winnable deals whose first win took at most this many expanded positions are easy (34 % of winnable deals)."""
MEDIUM_MAX_NODES = 20_000
"""… at most this many: medium (35 %); more: hard (31 %)."""


WINNABLE_TIERS = (Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD)
"""The tiers a ``solvable_only`` race may ask for."""


def difficulty_of(result: SolveResult) -> Difficulty:
    """The tier of a deal from the solver's answer on its starting position."""
    if result.verdict is Verdict.UNSOLVABLE:
        return Difficulty.UNWINNABLE
    if result.verdict is Verdict.UNKNOWN:
        return Difficulty.UNKNOWN
    if result.nodes <= EASY_MAX_NODES:
        return Difficulty.EASY
    if result.nodes <= MEDIUM_MAX_NODES:
        return Difficulty.MEDIUM
    return Difficulty.HARD
