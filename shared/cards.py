"""Cards of the 52-card deck as small integers, with their text forms.

A card is an ``int`` from 0 to 51: ``suit * 13 + (rank - 1)`` with suits in the
order clubs, diamonds, hearts, spades and ranks 1 (ace) to 13 (king). Integers
keep positions cheap to copy and hash, which the solver depends on.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NewType

from shared.errors import NotationError, NotationErrorCode, quote_input

Card = NewType("Card", int)
"""One card, 0..51 (see the module docstring for the numbering)."""


class Suit(IntEnum):
    """The four suits, in deck order; each owns one foundation."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        """The ASCII letter used in notation: C, D, H or S."""
        return SUIT_LETTERS[self]

    @property
    def symbol(self) -> str:
        """The Unicode symbol shown to people: ♣ ♦ ♥ ♠."""
        return SUIT_SYMBOLS[self]


ACE = 1
KING = 13
RANKS_PER_SUIT = 13
DECK_SIZE = 52
RANK_LETTERS = "A23456789TJQK"
SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
WHITE_SUIT_SYMBOLS = "♧♢♡♤"
"""The outlined suit symbols, also accepted on input."""
EMOJI_VARIATION_SELECTOR = "\ufe0f"
"""Phones often append U+FE0F to suit symbols (♥️); input ignores it."""
_SUIT_INPUT = {
    character: Suit(index)
    for alphabet in (SUIT_LETTERS, SUIT_SYMBOLS, WHITE_SUIT_SYMBOLS)
    for index, character in enumerate(alphabet)
}
_RANK_INPUT = {**{c: i + 1 for i, c in enumerate(RANK_LETTERS)}, "10": 10}

FULL_DECK: tuple[Card, ...] = tuple(Card(i) for i in range(DECK_SIZE))
"""Every card once, in deck order (AC, 2C, …, KC, AD, …, KS)."""


def make_card(rank: int, suit: Suit) -> Card:
    """The card of ``rank`` (1..13) and ``suit``."""
    if not ACE <= rank <= KING:
        raise ValueError(f"rank {rank} is outside 1..13")
    return Card(int(suit) * RANKS_PER_SUIT + rank - 1)


def rank_of(card: Card) -> int:
    """The card's rank, 1 (ace) to 13 (king)."""
    return card % RANKS_PER_SUIT + 1


def suit_of(card: Card) -> Suit:
    """The card's suit."""
    return Suit(card // RANKS_PER_SUIT)


def card_text(card: Card, *, unicode: bool = False) -> str:
    """Notation of a card: ``5D``, or ``5♦`` with ``unicode`` for people."""
    suit = suit_of(card)
    return RANK_LETTERS[rank_of(card) - 1] + (suit.symbol if unicode else suit.letter)


def card_label(card: Card) -> str:
    """A card in words shown to people: ``5♦``, ``10♠`` (not the notation's one-letter ``T``): the form of every
    sentence and move list, on the web page alike (engine.js ``cardLabel``). A board cell one character wide uses
    ``card_text(card, unicode=True)`` (``T♠``) instead."""
    text = card_text(card, unicode=True)
    return "10" + text[1:] if rank_of(card) == 10 else text


def parse_card(text: str) -> Card:
    """Read a card: rank ``A 2-9 T|10 J Q K`` then suit ``C D H S``, ``♣♦♥♠`` or ``♧♢♡♤``, any case.

    Raises :class:`NotationError` with code ``bad_card`` otherwise.
    """
    cleaned = text.strip().replace(EMOJI_VARIATION_SELECTOR, "").upper()
    if len(cleaned) < 2 or cleaned[:-1] not in _RANK_INPUT or cleaned[-1] not in _SUIT_INPUT:
        raise NotationError(NotationErrorCode.BAD_CARD, f"{quote_input(text, 20)} is not a card (examples: 5D, TS, 10♥, kc)")
    return make_card(_RANK_INPUT[cleaned[:-1]], _SUIT_INPUT[cleaned[-1]])
