"""The solver's public functions: solve, is_dead, hint and the dead-check hook for Board.status."""

from __future__ import annotations

import time

from shared.board import Board, DeadCheck
from shared.solver.results import Budget, DeadResult, HintResult, Liveness, SolveResult, Verdict
from shared.solver.search import OutOfBudget, Position, Search, to_move


def _won(position: Position) -> bool:
    return position.won()


def _foundation_move_available(position: Position) -> bool:
    found = position.found
    for card in position.bouquet:
        if found[card // 13] == card % 13:
            return True
    for column in position.cols:
        if column and found[column[-1] // 13] == column[-1] % 13:
            return True
    return False


def solve(board: Board, budget: Budget) -> SolveResult:
    """Decide whether ``board`` can be won: SOLVED with a winning move list, UNSOLVABLE (proved) or UNKNOWN."""
    start = time.perf_counter()
    search = Search(board, budget.nodes, budget.seconds)
    try:
        line = search.run(_won, foundation=True, autos=True)
    except OutOfBudget:
        return SolveResult(Verdict.UNKNOWN, [], search.nodes, time.perf_counter() - start)
    elapsed = time.perf_counter() - start
    if line is None:
        return SolveResult(Verdict.UNSOLVABLE, [], search.nodes, elapsed)
    return SolveResult(Verdict.SOLVED, [to_move(move) for move in line], search.nodes, elapsed)


def is_dead(board: Board, budget: Budget) -> DeadResult:
    """Whether no sequence of legal moves can bring another card to a foundation (DEAD, ALIVE or UNKNOWN)."""
    start = time.perf_counter()
    if board.is_won():
        return DeadResult(Liveness.ALIVE, 0, time.perf_counter() - start)
    search = Search(board, budget.nodes, budget.seconds)
    try:
        line = search.run(_foundation_move_available, foundation=False, autos=False)
    except OutOfBudget:
        return DeadResult(Liveness.UNKNOWN, search.nodes, time.perf_counter() - start)
    liveness = Liveness.DEAD if line is None else Liveness.ALIVE
    return DeadResult(liveness, search.nodes, time.perf_counter() - start)


def hint(board: Board, budget: Budget) -> HintResult:
    """A next move: the first move of a winning line when the search finds one, else the first legal move."""
    result = solve(board, budget)
    if result.verdict is Verdict.SOLVED and result.moves:
        return HintResult(result.moves[0], result.verdict, result.nodes, result.seconds)
    legal = board.legal_moves()
    return HintResult(legal[0] if legal else None, result.verdict, result.nodes, result.seconds)


def dead_check(budget: Budget) -> DeadCheck:
    """A hook for ``board.status(dead_check=...)``: True only when :func:`is_dead` proves the position DEAD."""

    def check(board: Board) -> bool:
        return is_dead(board, budget).liveness is Liveness.DEAD

    return check
