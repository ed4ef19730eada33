"""Moves and player actions, with their text notation and compact binary form.

Text: ``<card> <from>><to>`` where from is ``b`` (bouquet) or ``1``–``6`` and to
is ``f`` (foundation) or ``1``–``6``: ``5D b>3``, ``KS 2>f``, ``9H 4>1``.
Binary: two bytes, ``[card, source * 16 + target]`` with columns 0–5, bouquet 6
and foundation 7; the actions ``undo`` and ``redeal`` are ``[52, 0]`` and ``[53, 0]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

from shared.cards import DECK_SIZE, Card, card_label, card_text, parse_card
from shared.deal import COLUMN_COUNT
from shared.errors import NotationError, NotationErrorCode, quote_input

BOUQUET: Final = 6
"""Source index of the bouquet (columns are 0–5)."""
FOUNDATION: Final = 7
"""Target index of the foundations (columns are 0–5); the card's suit picks the pile."""

_UNDO_BYTE: Final = 52
_REDEAL_BYTE: Final = 53


@dataclass(frozen=True, slots=True)
class Move:
    """One card from a source (column 0–5 or BOUQUET) to a target (column 0–5 or FOUNDATION)."""

    card: Card
    source: int
    target: int

    def __post_init__(self) -> None:
        if not 0 <= self.card < DECK_SIZE:
            raise NotationError(NotationErrorCode.BAD_CARD, f"card index {self.card} is outside 0..51")
        if not (0 <= self.source < COLUMN_COUNT or self.source == BOUQUET):
            raise NotationError(NotationErrorCode.BAD_PLACE, f"source {self.source} is not a column or the bouquet")
        if not (0 <= self.target < COLUMN_COUNT or self.target == FOUNDATION):
            raise NotationError(NotationErrorCode.BAD_PLACE, f"target {self.target} is not a column or the foundation")

    def __str__(self) -> str:
        return move_text(self)


class Special(str, Enum):
    """Player actions that are not card moves."""

    UNDO = "undo"
    REDEAL = "redeal"


Action = Move | Special
"""Anything a player may do in a game."""


def _place_text(index: int) -> str:
    if index == BOUQUET:
        return "b"
    if index == FOUNDATION:
        return "f"
    return str(index + 1)


def move_text(move: Move, *, unicode: bool = False) -> str:
    """The notation of a move, e.g. ``5D b>3`` (or ``5♦ b>3`` with ``unicode``)."""
    return f"{card_text(move.card, unicode=unicode)} {_place_text(move.source)}>{_place_text(move.target)}"


def move_label(move: Move) -> str:
    """A move for people: ``10♠ b→3`` (the card as :func:`~shared.cards.card_label` writes it): the move list's form,
    on the web page alike (engine.js ``moveLabel``); the notation (``TS b>3``) is what is sent and typed."""
    return f"{card_label(move.card)} {_place_text(move.source)}→{_place_text(move.target)}"


def action_text(action: Action) -> str:
    """The notation of any action: a move's text, ``undo`` or ``redeal``."""
    return action.value if isinstance(action, Special) else move_text(action)


def _parse_place(text: str, letter: str, letter_index: int, whole: str) -> int:
    if text.lower() == letter:
        return letter_index
    if len(text) == 1 and text in "123456":
        return int(text) - 1
    role = "source" if letter == "b" else "destination"
    raise NotationError(
        NotationErrorCode.BAD_PLACE, f"{role} {quote_input(text, 20)} in {quote_input(whole)} must be {letter!r} or a column 1-6"
    )


def parse_move(text: str) -> Move:
    """Read ``<card> <from>><to>``; raises :class:`NotationError` (bad_move, bad_card, bad_place)."""
    parts = text.split()
    if len(parts) != 2 or parts[1].count(">") != 1:
        raise NotationError(NotationErrorCode.BAD_MOVE, f"{quote_input(text)} is not a move (examples: '5D b>3', 'KS 2>f')")
    card = parse_card(parts[0])
    source_text, target_text = parts[1].split(">")
    source = _parse_place(source_text, "b", BOUQUET, text)
    target = _parse_place(target_text, "f", FOUNDATION, text)
    return Move(card, source, target)


def parse_action(text: str) -> Action:
    """Read a move, ``undo`` or ``redeal`` (any case)."""
    word = text.strip().lower()
    for special in Special:
        if word == special.value:
            return special
    return parse_move(text)


def notation_label(text: str) -> str:
    """A move in notation (``TS b>3``, as the server writes it) for people: ``10♠ b→3`` (:func:`move_label`);
    ``undo``, ``redeal`` and what is not a move as they are (engine.js ``moveLabel``, the web page's)."""
    try:
        action = parse_action(text)
    except NotationError:
        return text
    return move_label(action) if isinstance(action, Move) else text


def encode_action(action: Action) -> bytes:
    """The two-byte wire form of an action."""
    if action is Special.UNDO:
        return bytes((_UNDO_BYTE, 0))
    if action is Special.REDEAL:
        return bytes((_REDEAL_BYTE, 0))
    assert isinstance(action, Move)
    return bytes((action.card, action.source * 16 + action.target))


def decode_action(data: bytes | bytearray | memoryview) -> Action:
    """Read the two-byte wire form; raises :class:`NotationError` (bad_encoding) on anything else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise NotationError(NotationErrorCode.BAD_ENCODING, f"an action is 2 bytes, got {type(data).__name__}")
    if len(data) != 2:
        raise NotationError(NotationErrorCode.BAD_ENCODING, f"an action is 2 bytes, got {len(data)}")
    first, second = bytes(data)
    if first in (_UNDO_BYTE, _REDEAL_BYTE) and second == 0:
        return Special.UNDO if first == _UNDO_BYTE else Special.REDEAL
    try:
        return Move(Card(first), second >> 4, second & 0x0F)
    except NotationError as error:
        raise NotationError(NotationErrorCode.BAD_ENCODING, f"bytes {data.hex()} are not an action: {error}") from None
