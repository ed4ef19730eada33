"""Replaying a player's stored actions on a race's deal: how servers rebuild positions and how anyone checks a record."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from shared.board import Board
from shared.moves import parse_action
from shared.rules import Rules


def replay_steps(seed: int, rules: Rules, actions: Iterable[str]) -> Iterator[Board]:
    """The position after each action of ``actions`` on the deal of ``seed`` (the same board object, advanced each
    step; copy it to keep one). Raises the engine's error at the first action the rules refuse."""
    board = Board.deal(seed, rules)
    for text in actions:
        board.play(parse_action(text))
        yield board


def replay(seed: int, rules: Rules, actions: Iterable[str]) -> Board:
    """The position after ``actions`` on the deal of ``seed``."""
    board = Board.deal(seed, rules)
    for board in replay_steps(seed, rules, actions):
        pass
    return board
