"""A player's board rebuilt from what the protocol sends, without the seed (hidden until the result).

Clients get the layout in ``countdown`` (and in ``synced``/``watching`` as ``deal``), each action in notation, and
for the one redeal the columns it dealt (``columns`` of ``moved``/``move``, ``redeal_columns`` of ``synced`` and of a
``BoardView``): the redeal is shuffled from the seed, so a client could not compute it.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.board import Board
from shared.cards import Card, parse_card
from shared.moves import Special, parse_action
from shared.rules import Rules


def _cards(texts: Sequence[str]) -> list[Card]:
    return [parse_card(text) for text in texts]


def board_from_layout(columns: Sequence[Sequence[str]], bouquet: Sequence[str], rules: Rules) -> Board:
    """The fresh position of a dealt layout (six columns first-dealt card first, and the bouquet, in notation)."""
    return Board([_cards(column) for column in columns], _cards(bouquet), rules=rules)


def play_reported(board: Board, action: str, dealt: Sequence[Sequence[str]] | None = None) -> None:
    """Play an action the server accepted; a ``redeal`` needs the columns it dealt (``dealt``) unless the board has its seed."""
    if action == Special.REDEAL.value and dealt is not None:
        board.redeal([_cards(column) for column in dealt])
    else:
        board.play(parse_action(action))


def replay_reported(
    columns: Sequence[Sequence[str]],
    bouquet: Sequence[str],
    rules: Rules,
    actions: Sequence[str],
    redeal_columns: Sequence[Sequence[str]] | None = None,
) -> Board:
    """The position after a player's ``actions`` on the layout (``redeal_columns``: what its redeal dealt, if any)."""
    board = board_from_layout(columns, bouquet, rules)
    for action in actions:
        play_reported(board, action, redeal_columns)
    return board
