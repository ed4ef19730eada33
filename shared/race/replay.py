"""Replaying a player's stored actions on a race's deal: how servers rebuild positions and how anyone checks a record."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from shared.board import Board
from shared.moves import parse_action
from shared.rules import Rules


def replay_steps(board: Board, actions: Iterable[str]) -> Iterator[Board]:
    """Play ``actions`` on ``board`` one at a time, yielding the board (the same object, advanced; copy it to keep a
    position) after each. Raises the engine's error at the first action the rules refuse."""
    for text in actions:
        board.play(parse_action(text))
        yield board


def replay(seed: int, rules: Rules, actions: Iterable[str]) -> Board:
    """The position after ``actions`` on the deal of ``seed``."""
    board = Board.deal(seed, rules)
    for _ in replay_steps(board, actions):
        pass
    return board
