"""Shared material of the engine tests: hand-built positions (name the cards that matter, the rest is placed),
the committed vectors, the list of every possible move, the position JSON fields and a random player."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shared import (
    BOUQUET,
    FOUNDATION,
    Action,
    Board,
    Card,
    Move,
    Rules,
    Special,
    SplitMix64,
    Suit,
    make_card,
    parse_card,
    parse_move,
)
from shared.cards import FULL_DECK, rank_of, suit_of

VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "vectors" / "deals.json").read_text(encoding="utf-8"))
"""The committed deal vectors (tests/vectors/deals.json)."""

EVERY_MOVE = [
    Move(card, source, target)
    for card, source, target in itertools.product(FULL_DECK, [*range(6), BOUQUET], [*range(6), FOUNDATION])
]
"""Every syntactically valid move: 52 cards x 7 sources x 7 targets."""

POSITION_FIELDS = {
    "seed", "profile", "options", "columns", "bouquet", "foundations", "foundation_count", "status", "undos",
    "redeal_used", "can_undo", "can_redeal", "legal",
}  # fmt: skip
"""The keys of the position JSON (docs/NOTATION.md)."""


def cards(text: str) -> list[Card]:
    """Cards from a space-separated text such as ``"4D 5D 9D"``."""
    return [parse_card(word) for word in text.split()]


def position(
    columns: Sequence[str],
    bouquet: str = "",
    foundations: str = "",
    *,
    rules: Rules | None = None,
    seed: int | None = None,
    bury_rest_in: int | None = 5,
) -> Board:
    """A board from six column texts (first-dealt first), a bouquet text and the foundations' top cards.

    Every card not named (and not under a named foundation top) is put, in
    deck order, at the bottom of column ``bury_rest_in`` (0-based), beneath
    that column's named cards, so it is covered and changes no available card.
    With ``bury_rest_in=None`` the named cards must already be all 52.
    """
    assert len(columns) == 6, "a position has six columns"
    tops = [0] * 4
    for card in cards(foundations):
        tops[suit_of(card)] = rank_of(card)
    on_foundations = {make_card(rank, suit) for suit in Suit for rank in range(1, tops[suit] + 1)}
    laid_out = [cards(text) for text in columns]
    bouquet_cards = cards(bouquet)
    named = on_foundations | set(bouquet_cards) | {card for column in laid_out for card in column}
    rest = [card for card in FULL_DECK if card not in named]
    if bury_rest_in is not None:
        laid_out[bury_rest_in] = rest + laid_out[bury_rest_in]
    return Board(laid_out, bouquet_cards, tops, rules or Rules(), seed)


def move(text: str) -> Move:
    """Shorthand for :func:`shared.parse_move`."""
    return parse_move(text)


def snapshot(board: Board) -> tuple[object, ...]:
    """Everything a player can see of a position, for exact before/after comparisons."""
    return (board.columns, board.bouquet, board.foundations, board.undos, board.redeal_used, board.move_stack)


def random_play(board: Board, play: tuple[int, int], *, specials: tuple[Special, ...] = tuple(Special)) -> Iterator[Action]:
    """A random player: foundation moves often, the allowed ``specials`` sometimes, any legal move otherwise.

    Plays up to ``play[1]`` actions chosen with ``SplitMix64(play[0])`` and yields each after playing it.
    Favouring foundation moves reaches deep positions (empty columns, long foundations) that uniform play rarely does.
    """
    rng = SplitMix64(play[0])
    for _ in range(play[1]):
        moves = board.legal_moves()
        allowed = [special for special in specials if board.check_action(special) is None]
        to_foundation = [move for move in moves if move.target == FOUNDATION]
        roll = rng.below(100)
        if allowed and roll < 6:
            action: Action = allowed[rng.below(len(allowed))]
        elif to_foundation and roll < 70:
            action = to_foundation[rng.below(len(to_foundation))]
        elif moves:
            action = moves[rng.below(len(moves))]
        else:
            return
        board.play(action)
        yield action
