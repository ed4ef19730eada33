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
    BAD_MOVE = "bad_move"
    BAD_PLACE = "bad_place"
    BAD_ENCODING = "bad_encoding"
    BAD_POSITION = "bad_position"


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
