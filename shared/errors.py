"""Error codes of the engine: every refusal carries one code from a fixed list.

The codes are part of the public contract (docs/NOTATION.md, docs/PROTOCOL.md);
clients in other languages switch on them, so a code is never renamed.
"""

from __future__ import annotations

from enum import Enum


class IllegalMoveCode(str, Enum):
    """Why a syntactically valid action is not allowed in a position."""

    SOURCE_EMPTY = "source_empty"
    """The named column has no cards."""
    CARD_NOT_AT_SOURCE = "card_not_at_source"
    """The card is not in the named place (not in the bouquet, or not in that column)."""
    CARD_COVERED = "card_covered"
    """The card is in the named column but other cards lie on it."""
    SAME_PLACE = "same_place"
    """The destination column is the card's own column."""
    NOT_NEXT_ON_FOUNDATION = "not_next_on_foundation"
    """The card is not the next rank of its suit's foundation."""
    COLUMN_RANK_MISMATCH = "column_rank_mismatch"
    """The destination column's last card is not exactly one rank higher."""
    COLUMN_BUILDING_FORBIDDEN = "column_building_forbidden"
    """The foundation-only profile allows moves to foundations only."""
    UNDO_NOT_ALLOWED = "undo_not_allowed"
    """The game's options do not allow undo."""
    NOTHING_TO_UNDO = "nothing_to_undo"
    """No move of this game can be undone (none yet, or all before a redeal)."""
    REDEAL_NOT_ALLOWED = "redeal_not_allowed"
    """The game's options do not include the redeal-once house rule."""
    REDEAL_ALREADY_USED = "redeal_already_used"
    """The one redeal of this game has been used."""
    REDEAL_NEEDS_SEED = "redeal_needs_seed"
    """The position was not dealt from a seed, so its redeal order is undefined."""


class NotationErrorCode(str, Enum):
    """Why a text could not be read as a card, move or action."""

    BAD_CARD = "bad_card"
    """Not a card: a rank A 2-9 T/10 J Q K followed by a suit C D H S (or a suit symbol)."""
    BAD_MOVE = "bad_move"
    """Not of the form ``<card> <from>><to>`` (nor ``undo`` or ``redeal`` where an action is read)."""
    BAD_PLACE = "bad_place"
    """A source other than ``b`` or 1-6, or a destination other than ``f`` or 1-6."""
    BAD_ENCODING = "bad_encoding"
    """Bytes that are not the two-byte form of an action."""
    BAD_POSITION = "bad_position"
    """A position document or Board parts that do not hold the 52 cards in 6 columns, bouquet and 4 foundations."""
    BAD_RULES = "bad_rules"
    """An unknown profile, or options that are not an object of true/false ``undo`` and ``redeal_once``."""


class EngineError(Exception):
    """Base of the engine's exceptions; ``code`` is a stable machine-readable value."""

    code: IllegalMoveCode | NotationErrorCode

    def __init__(self, code: IllegalMoveCode | NotationErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class IllegalMoveError(EngineError):
    """An action was refused by the rules; the position is unchanged."""

    code: IllegalMoveCode

    def __init__(self, code: IllegalMoveCode, message: str) -> None:
        super().__init__(code, message)


class NotationError(EngineError):
    """A text or binary form could not be read."""

    code: NotationErrorCode

    def __init__(self, code: NotationErrorCode, message: str) -> None:
        super().__init__(code, message)


def quote_input(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters: messages echo untrusted input, which may be huge."""
    if isinstance(value, int) and value.bit_length() > 4000:
        return f"<{value.bit_length()}-bit integer>"  # repr() of such an int raises ValueError
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
