"""Depth-first search over positions with a transposition table (first, plain version)."""

from __future__ import annotations

import time
from collections.abc import Callable

from shared.board import Board
from shared.cards import Card
from shared.moves import Move

BOUQUET_SRC = 6
FOUNDATION_DST = 7
RANK = [card % 13 + 1 for card in range(52)]
SUIT = [card // 13 for card in range(52)]

RawMove = tuple[int, int, int]


class OutOfBudget(Exception):
    """Raised inside the search when the budget is spent."""


class Position:
    """A compact mutable copy of a board for searching: columns, bouquet and foundation tops."""

    __slots__ = ("bouquet", "builds", "cols", "found")

    def __init__(self, board: Board) -> None:
        self.cols: list[list[int]] = [list(column) for column in board.columns]
        self.bouquet: list[int] = list(board.bouquet)
        self.found: list[int] = list(board.foundations)
        self.builds = board.rules.builds_on_columns

    def apply(self, move: RawMove) -> None:
        card, src, dst = move
        if src == BOUQUET_SRC:
            self.bouquet.remove(card)
        else:
            self.cols[src].pop()
        if dst == FOUNDATION_DST:
            self.found[SUIT[card]] += 1
        else:
            self.cols[dst].append(card)

    def unapply(self, move: RawMove) -> None:
        card, src, dst = move
        if dst == FOUNDATION_DST:
            self.found[SUIT[card]] -= 1
        else:
            self.cols[dst].pop()
        if src == BOUQUET_SRC:
            self.bouquet.append(card)
        else:
            self.cols[src].append(card)

    def key(self) -> bytes:
        return bytes(self.found) + b"\x40".join(sorted(bytes(column) for column in self.cols))

    def won(self) -> bool:
        return sum(self.found) == 52

    def auto_moves(self, applied: list[RawMove]) -> None:
        """Play every safe foundation move (see docs/SOLVER.md), appending them to ``applied``."""
        found = self.found
        progress = True
        while progress:
            progress = False
            limit = min(found) + 1
            for card in list(self.bouquet):
                rank = RANK[card]
                if rank <= limit and found[SUIT[card]] == rank - 1:
                    move = (card, BOUQUET_SRC, FOUNDATION_DST)
                    self.apply(move)
                    applied.append(move)
                    progress = True
                    limit = min(found) + 1
            for index, column in enumerate(self.cols):
                while column:
                    card = column[-1]
                    rank = RANK[card]
                    if not (rank <= limit and found[SUIT[card]] == rank - 1):
                        break
                    move = (card, index, FOUNDATION_DST)
                    self.apply(move)
                    applied.append(move)
                    progress = True
                    limit = min(found) + 1

    def moves(self, foundation: bool = True) -> list[RawMove]:
        """Candidate moves in a good order: foundation moves, moves off columns, bouquet builds, then to empty columns."""
        cols = self.cols
        found = self.found
        top_rank = [RANK[column[-1]] if column else 0 for column in cols]
        first_empty = top_rank.index(0) if 0 in top_rank else -1
        to_found: list[RawMove] = []
        off_column: list[RawMove] = []
        from_bouquet: list[RawMove] = []
        to_empty: list[RawMove] = []
        builds = self.builds
        for src in range(6):
            column = cols[src]
            if not column:
                continue
            card = column[-1]
            rank = RANK[card]
            if foundation and found[SUIT[card]] == rank - 1:
                to_found.append((card, src, FOUNDATION_DST))
            if builds:
                for dst in range(6):
                    if top_rank[dst] == rank + 1:
                        off_column.append((card, src, dst))
                if first_empty >= 0 and len(column) > 1:
                    to_empty.append((card, src, first_empty))
        for card in self.bouquet:
            rank = RANK[card]
            if foundation and found[SUIT[card]] == rank - 1:
                to_found.append((card, BOUQUET_SRC, FOUNDATION_DST))
            if builds:
                for dst in range(6):
                    if top_rank[dst] == rank + 1:
                        from_bouquet.append((card, BOUQUET_SRC, dst))
                if first_empty >= 0:
                    to_empty.append((card, BOUQUET_SRC, first_empty))
        return to_found + off_column + from_bouquet + to_empty


class Search:
    """One budgeted depth-first search from a board, never touching the board itself."""

    def __init__(self, board: Board, max_nodes: int | None, max_seconds: float | None) -> None:
        self.position = Position(board)
        self.max_nodes = max_nodes
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds
        self.nodes = 0

    def _charge(self) -> None:
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise OutOfBudget
        if self.deadline is not None and self.nodes & 255 == 0 and time.perf_counter() > self.deadline:
            raise OutOfBudget

    def run(self, goal: Callable[[Position], bool], foundation: bool, autos: bool) -> list[RawMove] | None:
        """A move list reaching ``goal``, or None when the reachable space holds none. May raise OutOfBudget."""
        position = self.position
        root_applied: list[RawMove] = []
        if autos:
            position.auto_moves(root_applied)
        if goal(position):
            return root_applied
        visited = {position.key()}
        self._charge()
        stack: list[tuple[list[RawMove], list[int], list[RawMove]]] = [(position.moves(foundation), [0], root_applied)]
        while stack:
            moves, cursor, _ = stack[-1]
            index = cursor[0]
            if index == len(moves):
                _, _, applied = stack.pop()
                for move in reversed(applied):
                    position.unapply(move)
                continue
            cursor[0] = index + 1
            move = moves[index]
            position.apply(move)
            applied = [move]
            if autos:
                position.auto_moves(applied)
            if goal(position):
                return [m for frame in stack for m in frame[2]] + applied
            key = position.key()
            if key in visited:
                for undo in reversed(applied):
                    position.unapply(undo)
                continue
            visited.add(key)
            self._charge()
            stack.append((position.moves(foundation), [0], applied))
        return None


def to_move(move: RawMove) -> Move:
    """The engine's Move for a raw search move."""
    card, src, dst = move
    return Move(Card(card), src, dst)
