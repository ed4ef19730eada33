"""Turning a search path (canonical keys, anonymous bouquet cards) into the engine's moves on the real board."""

from __future__ import annotations

from itertools import pairwise

from shared.board import Board
from shared.cards import Card
from shared.moves import Move
from shared.solver.position import BOUQUET_SRC, FOUNDATION_DST, VIRTUAL, Expander, RawMove


class SolverBug(RuntimeError):
    """The search produced a line the engine refuses; never expected, raised rather than reporting a wrong answer."""


class Replay:
    """Follows a path on the real columns, giving each anonymous bouquet card its suit once the path decides it."""

    def __init__(self, board: Board) -> None:
        self.columns: list[list[tuple[int, int]]] = [[(card, -1) for card in column] for column in board.columns]
        """Per real column: (token, anonymous id or -1)."""
        self.found = list(board.foundations)
        self.pool = set(board.bouquet)
        self.played: list[tuple[int, int, int, int]] = []
        """(card or -1, anonymous id or -1, source, target) in real column numbers."""
        self.card_of_id: dict[int, int] = {}
        self._next_id = 0

    def canonical_order(self) -> list[int]:
        """Real column numbers in the order the position's key lists them."""
        return sorted(range(6), key=lambda index: bytes(token for token, _ in self.columns[index]))

    def apply(self, moves: tuple[RawMove, ...] | list[RawMove], order: list[int] | None) -> None:
        """Apply raw moves whose column numbers are positions in ``order`` (or real numbers when None)."""
        for token, source, target in moves:
            real_source = source if order is None or source == BOUQUET_SRC else order[source]
            real_target = target if order is None or target == FOUNDATION_DST else order[target]
            ident = -1
            if real_source == BOUQUET_SRC:
                if token >= VIRTUAL:
                    ident = self._next_id
                    self._next_id += 1
                    token_card = -1
                else:
                    token_card = token
            else:
                top, ident = self.columns[real_source].pop()
                if ident >= 0 and target == FOUNDATION_DST:
                    self.card_of_id[ident] = token
                token_card = token if top < VIRTUAL else -1
            if real_target == FOUNDATION_DST:
                self.found[token // 13] += 1
            else:
                self.columns[real_target].append((token, ident))
            self.played.append((token_card, ident, real_source, real_target))

    def moves(self) -> list[Move]:
        """The engine moves played so far; anonymous cards never decided get any suit the pool still allows."""
        undecided = {ident for column in self.columns for token, ident in column if ident >= 0}
        spare = sorted(card for card in self.pool if self.found[card // 13] <= card % 13 and card not in self.card_of_id.values())
        cards = dict(self.card_of_id)
        for column in self.columns:
            for token, ident in column:
                if ident in undecided and ident not in cards:
                    rank = token - VIRTUAL + 1
                    choice = next(card for card in spare if card % 13 + 1 == rank)
                    spare.remove(choice)
                    cards[ident] = choice
        return [Move(Card(card if card >= 0 else cards[ident]), source, target) for card, ident, source, target in self.played]


def replay_path(board: Board, root_moves: list[RawMove], path: list[bytes], expander: Expander) -> list[Move]:
    """The engine moves from ``board`` along ``path`` (root key first), checked on a copy of the board."""
    replay = Replay(board)
    replay.apply(root_moves, None)
    for parent, child in pairwise(path):
        order = replay.canonical_order()
        step = next((moves for key, moves in expander.children(parent) if key == child), None)
        if step is None:
            raise SolverBug("a search path step is not a child of its parent")
        replay.apply(step, order)
    moves = replay.moves()
    check = board.copy()
    for move in moves:
        error = check.check_move(move)
        if error is not None:
            raise SolverBug(f"the solver's line plays an illegal move {move}: {error.message}")
        check.push(move)
    return moves
