"""The solver's public functions: solve, is_dead, hint and the dead-check hook for Board.status."""

from __future__ import annotations

import time

from shared.board import Board, DeadCheck
from shared.moves import Move
from shared.solver.position import Expander, RawMove, make_key, virtual_counts
from shared.solver.replay import replay_path
from shared.solver.results import Budget, DeadResult, HintResult, Liveness, SolveResult, Verdict
from shared.solver.search import Goal, Limits, SearchOutcome, search

SOLVE_WEIGHT = (3, 5)
"""Weight of the estimate (in half moves) against steps taken: 3/5, so a move of estimate weighs 1.2 steps.
(2/5 decided three more of 1,000 deals with the compiled search but made the pure-Python median 40 % slower.)"""
DEAD_WEIGHT = (1, 1)

def _root(board: Board, expander: Expander, forced: bool) -> tuple[bytes, list[RawMove]]:
    """The board's key after its forced moves (when ``forced``), and those moves in real column numbers."""
    found = list(board.foundations)
    cols = [bytes(column) for column in board.columns]
    moves: list[RawMove] = []
    if forced:
        expander.play_forced(found, cols, virtual_counts(cols), moves)
    return make_key(found, cols), moves


def _search(board: Board, limits: Limits) -> tuple[Expander, list[RawMove], SearchOutcome]:
    expander = Expander(board.bouquet, board.rules.builds_on_columns)
    root, root_moves = _root(board, expander, forced=True)
    return expander, root_moves, search(expander, root, Goal.WON, limits, SOLVE_WEIGHT)


def relaxed_search(board: Board, limits: Limits) -> SearchOutcome:
    """Search the relaxed game from ``board`` (docs/SOLVER.md, "The relaxed game"). When it is exhausted the real
    position is proved unsolvable, usually with far fewer positions than the real search needs; a relaxed win
    proves nothing (the relaxed game can be won where the real one cannot)."""
    expander = Expander(board.bouquet, board.rules.builds_on_columns, anonymous=True)
    root, _ = _root(board, expander, forced=True)
    return search(expander, root, Goal.WON, limits, SOLVE_WEIGHT)


def solve(board: Board, budget: Budget) -> SolveResult:
    """Decide whether ``board`` can be won: SOLVED with a winning move list, UNSOLVABLE (proved) or UNKNOWN.

    The relaxed game is searched first, with at most half the budget: when it
    cannot be won the board cannot either. Otherwise the real game is searched
    with what is left. The board is not modified. Only plain moves are searched:
    undo and the redeal house rule are player options, not moves, so a position
    whose redeal is still unused may be UNSOLVABLE here and still be won by redealing.
    """
    start = time.perf_counter()
    spent = 0
    if board.rules.builds_on_columns:
        half = Limits(None if budget.nodes is None else budget.nodes // 2, None if budget.seconds is None else budget.seconds / 2)
        relaxed = relaxed_search(board, half)
        if relaxed.exhausted:
            return SolveResult(Verdict.UNSOLVABLE, [], relaxed.nodes, time.perf_counter() - start)
        spent = relaxed.nodes
    seconds_left = None if budget.seconds is None else max(0.0, budget.seconds - (time.perf_counter() - start))
    left = Limits(None if budget.nodes is None else budget.nodes - spent, seconds_left)
    expander, root_moves, outcome = _search(board, left)
    nodes = spent + outcome.nodes
    if outcome.goal_path is not None:
        moves = replay_path(board, root_moves, outcome.goal_path, expander)
        return SolveResult(Verdict.SOLVED, moves, nodes, time.perf_counter() - start)
    verdict = Verdict.UNSOLVABLE if outcome.exhausted else Verdict.UNKNOWN
    return SolveResult(verdict, [], nodes, time.perf_counter() - start)


def hint(board: Board, budget: Budget) -> HintResult:
    """A next move: the first move of a winning line when the search finds one, else the first move toward the
    position the search rated closest to a win (None when the board has no legal move)."""
    start = time.perf_counter()
    expander, root_moves, outcome = _search(board, Limits(budget.nodes, budget.seconds))
    if outcome.goal_path is not None:
        line = replay_path(board, root_moves, outcome.goal_path, expander)
        verdict = Verdict.SOLVED
    else:
        line = replay_path(board, root_moves, outcome.best_path[:2], expander)
        verdict = Verdict.UNSOLVABLE if outcome.exhausted else Verdict.UNKNOWN
    move: Move | None = line[0] if line else None
    if move is None:
        legal = board.legal_moves()
        move = legal[0] if legal else None
    return HintResult(move, verdict, outcome.nodes, time.perf_counter() - start)


def is_dead(board: Board, budget: Budget) -> DeadResult:
    """Whether no sequence of legal moves can bring another card to a foundation: DEAD (proved), ALIVE or UNKNOWN.

    A won board is ALIVE (it is not lost). The board is not modified.
    """
    start = time.perf_counter()
    if board.is_won() or any(board.accepts_on_foundation(card) for card, _ in board.available()):
        return DeadResult(Liveness.ALIVE, 0, time.perf_counter() - start)
    expander = Expander(board.bouquet, board.rules.builds_on_columns, foundation_moves=False)
    root, _ = _root(board, expander, forced=False)
    outcome = search(expander, root, Goal.FOUNDATION_MOVE, Limits(budget.nodes, budget.seconds), DEAD_WEIGHT)
    if outcome.goal_path is not None:
        liveness = Liveness.ALIVE
    else:
        liveness = Liveness.DEAD if outcome.exhausted else Liveness.UNKNOWN
    return DeadResult(liveness, outcome.nodes, time.perf_counter() - start)


def dead_check(budget: Budget) -> DeadCheck:
    """A hook for ``board.status(dead_check=...)``: True only when :func:`is_dead` proves the position DEAD."""

    def check(board: Board) -> bool:
        return is_dead(board, budget).liveness is Liveness.DEAD

    return check
