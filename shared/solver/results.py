"""What the solver is asked (a budget) and what it answers (verdicts and results).

A node budget makes an answer deterministic: the same position and the same
node limit always give the same result, which is what tests use. A seconds
budget is for people and servers, who care about wall-clock time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from shared.moves import Move


@dataclass(frozen=True, slots=True)
class Budget:
    """How much search one call may spend: a wall-clock limit, a node limit, or both (whichever ends first)."""

    seconds: float | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        if self.seconds is None and self.nodes is None:
            raise ValueError("a budget needs seconds, nodes or both")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"budget seconds must be positive, got {self.seconds!r}")
        if self.nodes is not None and (isinstance(self.nodes, bool) or not isinstance(self.nodes, int) or self.nodes < 1):
            raise ValueError(f"budget nodes must be a positive integer, got {self.nodes!r}")


class Verdict(str, Enum):
    """Whether a position can be won."""

    SOLVED = "solved"
    """A winning line was found (and is returned)."""
    UNSOLVABLE = "unsolvable"
    """Proved: no sequence of moves wins (the whole reachable space was exhausted after sound pruning)."""
    UNKNOWN = "unknown"
    """The budget ran out before either was shown."""


class Liveness(str, Enum):
    """Whether another card can still reach a foundation."""

    DEAD = "dead"
    """Proved: no sequence of legal moves brings another card to a foundation."""
    ALIVE = "alive"
    """Some sequence of moves brings another card to a foundation (or the game is already won)."""
    UNKNOWN = "unknown"
    """The budget ran out before either was shown."""


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The answer of :func:`shared.solver.solve`."""

    verdict: Verdict
    moves: list[Move] = field(default_factory=list)
    """When SOLVED, a move list that replays to a win from the given position; otherwise empty."""
    nodes: int = 0
    """Positions the search expanded."""
    seconds: float = 0.0
    """Wall-clock time spent."""


@dataclass(frozen=True, slots=True)
class DeadResult:
    """The answer of :func:`shared.solver.is_dead`."""

    liveness: Liveness
    nodes: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class HintResult:
    """The answer of :func:`shared.solver.hint`."""

    move: Move | None
    """A move on a winning line when one was found, else the move the search rated best; None without legal moves."""
    verdict: Verdict
    """The verdict of the search behind the hint (SOLVED means ``move`` starts a winning line)."""
    nodes: int = 0
    seconds: float = 0.0
