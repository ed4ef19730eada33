"""The solver's public functions: solve, is_dead, hint and the dead-check hook for Board.status."""

from __future__ import annotations

import time

from shared.board import Board, DeadCheck
from shared.moves import Move
from shared.solver.position import Expander, RawMove, make_key, virtual_counts
from shared.solver.replay import replay_path
from shared.solver.results import Budget, DeadResult, HintResult, Liveness, SolveResult, Verdict
from shared.solver.search import Goal, Limits, SearchOutcome, Switch, Weight, search

SOLVE_WEIGHT = (3, 5)
"""Weight of the estimate (in half moves) against steps taken: 3/5, so a move of estimate weighs 1.2 steps.
(2/5 decided three more of 1,000 deals with the compiled search but made the pure-Python median 40 % slower.)"""
DEAD_WEIGHT = (1, 1)

QUICK_FINDER: tuple[float, Weight] = (0.1, (3, 5))
"""(share of the budget, weight) of the finder search ``solve`` runs first: it wins most deals in milliseconds."""
RELAXED_SHARE = 0.5
"""At most this share of what is left goes to the relaxed game (it usually needs far less)."""
LATER_FINDERS: tuple[tuple[float, Weight], ...] = ((0.2, (1, 3)), (0.05, (2, 1)))
"""(share of what is left, weight) of the finder searches run after the relaxed game: a broader one, a greedier one."""
OPENING_SHARE = 0.15
OPENING_WEIGHT = (2, 1)
"""The complete search orders by this greedier weight for its first OPENING_SHARE, then by SOLVE_WEIGHT."""


def _root(board: Board, expander: Expander, forced: bool) -> tuple[bytes, list[RawMove]]:
    """The board's key after its forced moves (when ``forced``), and those moves in real column numbers."""
    found = list(board.foundations)
    cols = [bytes(column) for column in board.columns]
    moves: list[RawMove] = []
    if forced:
        expander.play_forced(found, cols, virtual_counts(cols), moves)
    return make_key(found, cols), moves


def _search(
    board: Board, limits: Limits, weight: Weight = SOLVE_WEIGHT, *, complete: bool = True, switch: Switch | None = None
) -> tuple[Expander, list[RawMove], SearchOutcome]:
    """The real game's complete search from ``board``, or the finder's when ``complete`` is False."""
    expander = Expander(board.bouquet, board.rules.builds_on_columns, shuffles=complete)
    root, root_moves = _root(board, expander, forced=True)
    return expander, root_moves, search(expander, root, Goal.WON, limits, weight, switch)


def relaxed_search(board: Board, limits: Limits) -> SearchOutcome:
    """Search the relaxed game from ``board`` (docs/SOLVER.md, "The relaxed game"). When it is exhausted the real
    position is proved unsolvable, usually with far fewer positions than the real search needs; a relaxed win
    proves nothing (the relaxed game can be won where the real one cannot)."""
    expander = Expander(board.bouquet, board.rules.builds_on_columns, anonymous=True)
    root, _ = _root(board, expander, forced=True)
    return search(expander, root, Goal.WON, limits, SOLVE_WEIGHT)


class _Allowance:
    """What is left of a solve budget as its searches spend it."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.start = time.perf_counter()
        self.nodes = 0

    def share(self, part: float) -> Limits:
        """Limits for a search that may use ``part`` of what is left."""
        seconds = self.budget.seconds
        nodes = self.budget.nodes
        return Limits(
            None if nodes is None else int((nodes - self.nodes) * part),
            None if seconds is None else max(0.0, seconds - self.elapsed()) * part,
        )

    def elapsed(self) -> float:
        """Seconds since the solve began."""
        return time.perf_counter() - self.start


def solve(board: Board, budget: Budget) -> SolveResult:
    """Decide whether ``board`` can be won: SOLVED with a winning move list, UNSOLVABLE (proved) or UNKNOWN.

    The budget is shared, in turn (docs/SOLVER.md, "Method"), by the finder,
    which wins most deals fast but proves nothing; the relaxed game, whose
    exhaustion proves the board lost; the finder again with a broader and
    with a greedier order; and the complete search of the real game, which
    can do both.
    The board is not modified. Only plain moves are searched: undo and the
    redeal house rule are player options, not moves, so a position whose redeal
    is still unused may be UNSOLVABLE here and still be won by redealing.
    """
    allowance = _Allowance(budget)
    if board.rules.builds_on_columns:
        won = _find(board, allowance, *QUICK_FINDER)
        if won is not None:
            return won
        relaxed = relaxed_search(board, allowance.share(RELAXED_SHARE))
        allowance.nodes += relaxed.nodes
        if relaxed.exhausted:
            return SolveResult(Verdict.UNSOLVABLE, [], allowance.nodes, allowance.elapsed())
        for share, weight in LATER_FINDERS:
            won = _find(board, allowance, share, weight)
            if won is not None:
                return won
    switch = Switch(allowance.share(OPENING_SHARE), SOLVE_WEIGHT)
    expander, root_moves, outcome = _search(board, allowance.share(1.0), OPENING_WEIGHT, switch=switch)
    allowance.nodes += outcome.nodes
    if outcome.goal_path is not None:
        return _solved(board, root_moves, outcome.goal_path, expander, allowance)
    verdict = Verdict.UNSOLVABLE if outcome.exhausted else Verdict.UNKNOWN
    return SolveResult(verdict, [], allowance.nodes, allowance.elapsed())


def _find(board: Board, allowance: _Allowance, share: float, weight: Weight) -> SolveResult | None:
    """Run the finder with ``share`` of what is left: SOLVED when it wins, else None (its exhaustion proves nothing)."""
    expander, root_moves, outcome = _search(board, allowance.share(share), weight, complete=False)
    allowance.nodes += outcome.nodes
    if outcome.goal_path is None:
        return None
    return _solved(board, root_moves, outcome.goal_path, expander, allowance)


def _solved(board: Board, root_moves: list[RawMove], path: list[bytes], expander: Expander, allowance: _Allowance) -> SolveResult:
    """The SOLVED result for a search that reached a win: its line, replayed and checked on the engine."""
    moves = replay_path(board, root_moves, path, expander)
    return SolveResult(Verdict.SOLVED, moves, allowance.nodes, allowance.elapsed())


def hint(board: Board, budget: Budget) -> HintResult:
    """A next move: the first move of a winning line when a search finds one (the quick finder first, then the
    complete search), else the first move toward the position the complete search rated closest to a win (None
    when the board has no legal move)."""
    allowance = _Allowance(budget)
    won = _find(board, allowance, *QUICK_FINDER) if board.rules.builds_on_columns else None
    if won is not None:
        line, verdict = won.moves, Verdict.SOLVED
    else:
        expander, root_moves, outcome = _search(board, allowance.share(1.0))
        allowance.nodes += outcome.nodes
        if outcome.goal_path is not None:
            line, verdict = replay_path(board, root_moves, outcome.goal_path, expander), Verdict.SOLVED
        else:
            line = replay_path(board, root_moves, outcome.best_path[:2], expander)
            verdict = Verdict.UNSOLVABLE if outcome.exhausted else Verdict.UNKNOWN
    move: Move | None = line[0] if line else None
    if move is None:
        legal = board.legal_moves()
        move = legal[0] if legal else None
    return HintResult(move, verdict, allowance.nodes, allowance.elapsed())


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
