"""The reference the solver is checked against (exhaustive search with the engine's own moves and no pruning),
and random positions to check it on.

Every legal move of ``Board.legal_moves()`` is tried (pointless ones too), positions are compared exactly
(no column symmetry, no forced moves, no anonymous cards), so an answer here depends on nothing the solver
assumes. It is only feasible for small positions; past ``limit`` positions it answers None.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from shared import FOUNDATION, Board, Card, Rules, Suit
from shared.cards import make_card, rank_of


def _state(board: Board) -> tuple[object, ...]:
    return board.columns, frozenset(board.bouquet), board.foundations


def reachable(board: Board, goal: Callable[[Board], bool], *, foundation_moves: bool, limit: int) -> bool | None:
    """Whether some sequence of legal moves from ``board`` reaches a position where ``goal`` holds (None: too big).

    With ``foundation_moves`` False, moves to a foundation are never played (the dead-position question).
    """
    work = board.copy()
    if goal(work):
        return True
    seen = {_state(work)}
    frames = [(work.legal_moves(), 0)]
    while frames:
        moves, index = frames[-1]
        if index == len(moves):
            frames.pop()
            if frames:
                work.pop()
            continue
        frames[-1] = (moves, index + 1)
        move = moves[index]
        if move.target == FOUNDATION and not foundation_moves:
            continue
        work.push(move)
        if goal(work):
            return True
        state = _state(work)
        if state in seen:
            work.pop()
            continue
        seen.add(state)
        if len(seen) > limit:
            return None
        frames.append((work.legal_moves(), 0))
    return False


def winnable(board: Board, limit: int = 60_000) -> bool | None:
    """Whether some sequence of legal moves wins (None when the position is too big to exhaust)."""
    return reachable(board, Board.is_won, foundation_moves=True, limit=limit)


def has_foundation_move(board: Board) -> bool:
    """Whether an available card can go to its foundation right now."""
    return any(board.accepts_on_foundation(card) for card, _ in board.available())


def foundation_move_reachable(board: Board, limit: int = 60_000) -> bool | None:
    """Whether moves to columns alone can make a foundation move available (None when too big)."""
    return reachable(board, has_foundation_move, foundation_moves=False, limit=limit)


def random_board(rng: random.Random, left: int, rules: Rules, *, bouquet_at_most: int, buried_low: float) -> Board:
    """A legal position with ``left`` cards off the foundations on all six columns and a small bouquet; each
    column is, with probability ``buried_low``, ordered low cards first so they lie under higher ones."""
    while True:
        tops = [rng.randint(0, 13) for _ in range(4)]
        if sum(tops) == 52 - left:
            break
    rest = [make_card(rank, Suit(suit)) for suit in range(4) for rank in range(tops[suit] + 1, 14)]
    rng.shuffle(rest)
    in_bouquet = rng.randint(0, min(len(rest) - 6, bouquet_at_most))
    columns: list[list[Card]] = [[] for _ in range(6)]
    for index, card in enumerate(rest[in_bouquet:]):
        columns[index if index < 6 else rng.randrange(6)].append(card)
    for column in columns:
        if rng.random() < buried_low:
            column.sort(key=rank_of)
    return Board(columns, rest[:in_bouquet], tops, rules)
