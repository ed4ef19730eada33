"""Deterministic deals: a seed (unsigned 64-bit) fixes the layout everywhere.

The algorithm is written down in docs/NOTATION.md ("Deals") so that any
language can reproduce it: SplitMix64 as the generator, an unbiased bounded
draw by rejection, and a Fisher–Yates shuffle of the deck in card order.
Python's ``random`` module is never used: its output may change between
versions, and a race needs both players, the replay checker and every client
to see the same cards forever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.cards import FULL_DECK, Card
from shared.errors import quote_input

MASK64 = (1 << 64) - 1
COLUMN_COUNT = 6
COLUMN_DEPTH = 6
BOUQUET_SIZE = 16
REDEAL_SALT = 0x52454445414C  # ASCII "REDEAL": separates the redeal stream from the deal stream.


class SplitMix64:
    """The SplitMix64 generator (Steele, Lea, Flood 2014): 64-bit state, 64-bit outputs."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next_u64(self) -> int:
        """The next 64-bit output."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)``: outputs at or above the largest multiple of bound are redrawn."""
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            value = self.next_u64()
            if value < limit:
                return value % bound


def shuffle(cards: list[Card], rng: SplitMix64) -> None:
    """Fisher–Yates in place: for i from the last index down to 1, swap i with ``rng.below(i + 1)``."""
    for i in range(len(cards) - 1, 0, -1):
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]


def check_seed(seed: object) -> int:
    """Return ``seed`` if it is an unsigned 64-bit integer, else raise ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MASK64:
        raise ValueError(f"seed must be an integer from 0 to {MASK64}, got {quote_input(seed)}")
    return seed


_DECIMAL_SEED = re.compile(r"0*[0-9]{1,20}")
_HEX_SEED = re.compile(r"0[xX]0*[0-9a-fA-F]{1,16}")


def parse_seed(value: object) -> int:
    """A seed from an integer or a text (decimal, or hexadecimal with ``0x``); ValueError otherwise.

    Texts exist because JSON numbers above 2**53 lose precision in many
    languages (JavaScript), so documents may carry the seed as a string.
    """
    if isinstance(value, str):
        text = value.strip()
        if _DECIMAL_SEED.fullmatch(text):
            return check_seed(int(text, 10))
        if _HEX_SEED.fullmatch(text):
            return check_seed(int(text, 16))
        raise ValueError(f"seed must be an integer from 0 to {MASK64} (decimal, or hex with 0x), got {quote_input(value)}")
    return check_seed(value)



@dataclass(frozen=True, slots=True)
class Layout:
    """A fresh deal: six columns (first-dealt card first, last card available) and the bouquet."""

    columns: tuple[tuple[Card, ...], ...]
    bouquet: tuple[Card, ...]


def deal(seed: int) -> Layout:
    """The layout of ``seed``: shuffled deck, column k takes cards 6k..6k+5, the bouquet the last 16."""
    deck = list(FULL_DECK)
    shuffle(deck, SplitMix64(check_seed(seed)))
    columns = tuple(tuple(deck[k * COLUMN_DEPTH : (k + 1) * COLUMN_DEPTH]) for k in range(COLUMN_COUNT))
    return Layout(columns=columns, bouquet=tuple(deck[COLUMN_COUNT * COLUMN_DEPTH :]))


def redeal_columns(seed: int, columns: tuple[tuple[Card, ...], ...]) -> tuple[tuple[Card, ...], ...]:
    """The columns after the redeal house rule.

    The column cards are gathered column 1 to 6, each first-dealt first,
    shuffled with SplitMix64 seeded by ``seed XOR REDEAL_SALT``, and dealt back
    round-robin: the i-th card of the shuffled pile goes to column ``i mod 6``.
    """
    gathered = [card for column in columns for card in column]
    shuffle(gathered, SplitMix64(check_seed(seed) ^ REDEAL_SALT))
    return tuple(tuple(gathered[k::COLUMN_COUNT]) for k in range(COLUMN_COUNT))
