"""The Flower Garden engine: cards, deals, rules, notation. Pure, typed, no I/O."""

from shared.board import Board, DeadCheck, Status, render
from shared.cards import Card, Suit, card_label, card_text, make_card, parse_card, rank_of, suit_of
from shared.deal import Layout, SplitMix64, deal, parse_seed, redeal_columns
from shared.errors import EngineError, IllegalMoveCode, IllegalMoveError, NotationError, NotationErrorCode
from shared.moves import (
    BOUQUET,
    FOUNDATION,
    Action,
    Move,
    Special,
    action_text,
    decode_action,
    encode_action,
    move_label,
    move_text,
    notation_label,
    parse_action,
    parse_move,
)
from shared.rules import Profile, Rules

__all__ = [
    "BOUQUET", "FOUNDATION", "Action", "Board", "Card", "DeadCheck", "EngineError", "IllegalMoveCode",
    "IllegalMoveError", "Layout", "Move", "NotationError", "NotationErrorCode", "Profile", "Rules", "Special",
    "SplitMix64", "Status", "Suit", "action_text", "card_label", "card_text", "deal", "decode_action", "encode_action",
    "make_card", "move_label", "move_text", "notation_label", "parse_action", "parse_card", "parse_move", "parse_seed", "rank_of", "redeal_columns", "render",
    "suit_of",
]
