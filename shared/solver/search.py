"""Best-first search over canonical keys, within a node, time and memory budget.

:func:`best_first` is the reference implementation. When the optional compiled
module ``shared.solver._native`` was built (``pip install`` does it when a C
compiler is present), :func:`search` runs its twin instead: the same keys,
children, order and tie-breaking, so the same answers, nodes and paths, only
faster. Without a compiler everything works in pure Python.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from types import ModuleType
from typing import NamedTuple

from shared.solver import position
from shared.solver.position import Expander, buried_depth, has_foundation_move, is_won

_native: ModuleType | None
try:
    from shared.solver import _native
except ImportError:  # not compiled here: the pure-Python search is used
    _native = None

MAX_STORED_POSITIONS = 2_000_000
"""Positions kept at most by the Python search (about 250 bytes each); past it the search stops with no verdict."""
NATIVE_MAX_STORED_POSITIONS = 11_000_000
"""Positions kept at most by the compiled search (about 75 bytes each, so under 900 MB)."""
PREFER_NATIVE = True
"""Use the compiled search when it is available (tests and benchmarks turn it off to run the reference)."""


Weight = tuple[int, int]
"""(numerator, denominator): the estimate counts numerator/denominator of a step taken."""


class Goal(IntEnum):
    """What a search looks for."""

    WON = 0
    """Every card on its foundation (solve and hint)."""
    FOUNDATION_MOVE = 1
    """A real card at a column's end that its foundation wants (is_dead; no foundation moves are played)."""


def native_available() -> bool:
    """Whether the compiled search was built and may be used."""
    return _native is not None

ROOT_PARENT = b""


@dataclass
class SearchOutcome:
    """What one search found: a path to a goal, a proof that none exists, or neither."""

    goal_path: list[bytes] | None = None
    """Keys from the root to a goal key, when one was reached."""
    exhausted: bool = False
    """True when every reachable key was expanded without reaching a goal (a proof)."""
    nodes: int = 0
    best_path: list[bytes] = field(default_factory=list)
    """Keys from the root to the expanded key the heuristic rated closest to a goal."""


class Limits:
    """A node limit and a deadline, checked as the search expands positions."""

    def __init__(self, nodes: int | None, seconds: float | None) -> None:
        self.nodes = nodes
        self.deadline = None if seconds is None else time.perf_counter() + seconds

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None without one)."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def spent(self, expanded: int) -> bool:
        """Whether the budget is spent after ``expanded`` expansions."""
        if self.nodes is not None and expanded >= self.nodes:
            return True
        return self.deadline is not None and expanded & 63 == 0 and time.perf_counter() > self.deadline


class Switch(NamedTuple):
    """A change of order during one search: once ``at`` is spent, the open list is reordered by ``weight``.

    Positions already stored stay stored, so the search goes on where it was (a
    proof of exhaustion needs every position whatever the order)."""

    at: Limits
    weight: Weight


def _path(parents: dict[bytes, bytes], key: bytes) -> list[bytes]:
    path = [key]
    while parents[key] != ROOT_PARENT:
        key = parents[key]
        path.append(key)
    path.reverse()
    return path


def best_first(
    expander: Expander,
    root: bytes,
    is_goal: Callable[[bytes], bool],
    estimate: Callable[[bytes], int],
    limits: Limits,
    weight: Weight,
    max_stored: int | None = None,
    switch: Switch | None = None,
) -> SearchOutcome:
    """Weighted A* from ``root`` until a goal, exhaustion or the budget: the open list is ordered by the integer
    ``steps × denominator + estimate × numerator`` (``weight`` = (numerator, denominator)), then by the lower
    estimate, then first come first served.

    At most ``max_stored`` positions (default MAX_STORED_POSITIONS) are kept; past that it stops without a verdict.
    With a ``switch`` the order changes once, keeping everything found so far.
    """
    if max_stored is None:
        max_stored = MAX_STORED_POSITIONS
    parents: dict[bytes, bytes] = {root: ROOT_PARENT}
    if is_goal(root):
        return SearchOutcome(goal_path=[root])
    root_estimate = estimate(root)
    numerator, denominator = weight
    heap: list[tuple[int, int, int, int, bytes]] = [(numerator * root_estimate, root_estimate, 0, 0, root)]
    best_key, best_estimate = root, root_estimate
    expanded = 0
    counter = 0
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        if limits.spent(expanded) or len(parents) > max_stored:
            return SearchOutcome(nodes=expanded, best_path=_path(parents, best_key))
        if switch is not None and switch.at.spent(expanded):
            numerator, denominator = switch.weight
            heap = [(denominator * steps + numerator * estimate_, estimate_, order, steps, key) for _, estimate_, order, steps, key in heap]
            heapq.heapify(heap)
            switch = None
        _, key_estimate, _, steps, key = pop(heap)
        expanded += 1
        if key_estimate < best_estimate:
            best_key, best_estimate = key, key_estimate
        child_steps = steps + 1
        for child, _ in expander.children(key):
            if child in parents:
                continue
            parents[child] = key
            if is_goal(child):
                return SearchOutcome(goal_path=_path(parents, child), nodes=expanded)
            child_estimate = estimate(child)
            counter += 1
            push(heap, (denominator * child_steps + numerator * child_estimate, child_estimate, counter, child_steps, child))
    return SearchOutcome(exhausted=True, nodes=expanded, best_path=_path(parents, best_key))


def search(expander: Expander, root: bytes, goal: Goal, limits: Limits, weight: Weight, switch: Switch | None = None) -> SearchOutcome:
    """Search from ``root`` for ``goal`` with the compiled search when available and preferred, else in Python."""
    if _native is not None and PREFER_NATIVE:
        seconds = limits.remaining()
        switch_seconds = None if switch is None else switch.at.remaining()
        switch_nodes = None if switch is None else switch.at.nodes
        status, goal_path, nodes, best_path = _native.search(
            root, expander.pool_masks(), expander.builds, expander.foundation_moves, expander.anonymous, expander.shuffles,
            int(goal), weight,
            -1.0 if seconds is None else seconds, -1 if limits.nodes is None else limits.nodes, NATIVE_MAX_STORED_POSITIONS,
            position.ESTIMATE_WEIGHTS, -1.0 if switch_seconds is None else switch_seconds, -1 if switch_nodes is None else switch_nodes,
            weight if switch is None else switch.weight,
        )
        if status == 0:
            return SearchOutcome(goal_path=goal_path, nodes=nodes)
        return SearchOutcome(exhausted=status == 1, nodes=nodes, best_path=best_path)
    if goal is Goal.WON:
        return best_first(expander, root, is_won, expander.estimate, limits, weight, switch=switch)
    return best_first(expander, root, has_foundation_move, buried_depth, limits, weight, switch=switch)
