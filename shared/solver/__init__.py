"""The Flower Garden solver: decide positions, prove dead positions, give hints. Pure, typed, no I/O.

``solve`` answers SOLVED (with a winning move list), UNSOLVABLE (proved) or
UNKNOWN (budget spent); ``is_dead`` answers whether another card can still
reach a foundation; ``hint`` suggests a move. The method and the soundness of
every pruning rule are explained in docs/SOLVER.md. The redeal house rule and
undo are player options, not moves: the solver searches plain moves only.
"""

from shared.solver.api import dead_check, hint, is_dead, solve
from shared.solver.replay import SolverBug
from shared.solver.results import Budget, DeadResult, HintResult, Liveness, SolveResult, Verdict

__all__ = [
    "Budget", "DeadResult", "HintResult", "Liveness", "SolveResult", "SolverBug", "Verdict", "dead_check", "hint", "is_dead",
    "solve",
]
