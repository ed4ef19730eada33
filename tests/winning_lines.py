"""A small best-first search for winning lines, so race tests can drive a deal to a win without the solver.

Deliberately simple and incomplete: it expands the positions with the most
cards on the foundations first, skips pointless moves (a column's only card to
an empty column), and remembers positions it has seen (columns as a multiset).
``find_winning_deal`` returns the first seed from ``start`` whose line it finds
within the node budget.
"""

from __future__ import annotations

import heapq
import itertools
from functools import cache

from shared import BOUQUET, FOUNDATION, Board, Move, Rules, action_text, parse_action

CLASSIC = Rules()


def _key(board: Board) -> tuple[object, ...]:
    return (tuple(sorted(board.columns)), frozenset(board.bouquet))


def _useful(board: Board, move: Move) -> bool:
    if move.target == FOUNDATION or board.columns[move.target]:
        return True
    return move.source == BOUQUET or len(board.columns[move.source]) > 1


def winning_line(board: Board, max_nodes: int = 20_000) -> list[str] | None:
    """A list of moves in notation that wins from ``board``, or None if none was found within ``max_nodes``."""
    order = itertools.count()
    frontier: list[tuple[int, int, int, Board, tuple[Move, ...]]] = [(0, 0, next(order), board.copy(), ())]
    seen = {_key(board)}
    while frontier and len(seen) <= max_nodes:
        _, _, _, position, line = heapq.heappop(frontier)
        if position.is_won():
            return [action_text(move) for move in line]
        for move in position.legal_moves():
            if not _useful(position, move):
                continue
            child = position.copy()
            child.push(move)
            key = _key(child)
            if key in seen:
                continue
            seen.add(key)
            heapq.heappush(frontier, (-child.foundation_count, len(line) + 1, next(order), child, (*line, move)))
    return None


def find_winning_deal(start: int, rules: Rules = CLASSIC, tries: int = 50, max_nodes: int = 20_000) -> tuple[int, list[str]]:
    """The first seed from ``start`` with a winning line found by :func:`winning_line`."""
    for seed in range(start, start + tries):
        line = winning_line(Board.deal(seed, rules), max_nodes)
        if line is not None:
            return seed, line
    raise LookupError(f"no winning line found for seeds {start}..{start + tries - 1}")


@cache
def winning_deal() -> tuple[int, tuple[str, ...]]:
    """A seed and a winning line for it (the simple search finds none for seeds 1-14 within its budget)."""
    seed, line = find_winning_deal(15)
    return seed, tuple(line)


def first_foundation_prefix(seed: int, line: tuple[str, ...], count: int) -> list[str]:
    """The shortest prefix of ``line`` that puts ``count`` cards on the foundations."""
    board = Board.deal(seed)
    for index, move in enumerate(line):
        if board.foundation_count >= count:
            return list(line[:index])
        board.play(parse_action(move))
    raise AssertionError("the line never reaches that count")
