"""Help for people entering moves: where a card may go, which cards are safe to send home, the bouquet in order.

Every front end (the terminal app, the line mode, the browser client mirrors it)
asks the same questions of a position, so the answers live here, next to the
rules, and nowhere else. Pure functions of a :class:`~shared.board.Board`.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.board import Board
from shared.cards import Card, parse_card, rank_of, suit_of
from shared.errors import IllegalMoveCode, IllegalMoveError, NotationError, NotationErrorCode, quote_input
from shared.moves import BOUQUET, FOUNDATION, Move, parse_move


def source_of(board: Board, card: Card) -> int | None:
    """Where ``card`` lies: a column index 0-5, BOUQUET, or None when it is on a foundation.

    Each card is in exactly one place, which is why a typed card needs no source.
    """
    if card in board.bouquet:
        return BOUQUET
    for index, column in enumerate(board.columns):
        if card in column:
            return index
    return None


def available_cards(board: Board) -> list[Card]:
    """The cards a move may take now: every bouquet card and the last card of each column."""
    return [card for card, _source in board.available()]


def destinations(board: Board, card: Card) -> list[Move]:
    """The legal moves of ``card``: foundation first, then columns in order (empty list if it cannot move)."""
    moves = [move for move in board.legal_moves() if move.card == card]
    return sorted(moves, key=lambda move: -1 if move.target == FOUNDATION else move.target)


def playable_cards(board: Board) -> set[Card]:
    """The available cards that have at least one legal move (what a front end marks as playable)."""
    return {move.card for move in board.legal_moves()}


def is_safe_to_send_home(board: Board, card: Card) -> bool:
    """Whether ``card`` may go to its foundation without ever costing a move elsewhere.

    A card is safe when it is the next card of its foundation and every card one rank
    lower, in all four suits, is already on a foundation: then nothing can still need
    to be built on it (any suit builds on any suit one rank higher).
    """
    if not board.accepts_on_foundation(card):
        return False
    below = rank_of(card) - 1
    return all(top >= below for top in board.foundations)


def safe_moves(board: Board) -> list[Move]:
    """The foundation moves of every available safe card (see :func:`is_safe_to_send_home`), lowest rank first."""
    moves = [
        move for move in board.legal_moves() if move.target == FOUNDATION and is_safe_to_send_home(board, move.card)
    ]
    return sorted(moves, key=lambda move: (rank_of(move.card), suit_of(move.card)))


def sorted_bouquet(board: Board) -> list[Card]:
    """The bouquet by suit (clubs, diamonds, hearts, spades) then rank, the order people scan it in."""
    return sorted(board.bouquet)


def target_key(target: int) -> str:
    """The key that picks a destination: ``f`` for the foundation, ``1``-``6`` for a column."""
    return "f" if target == FOUNDATION else str(target + 1)


def target_of(text: str) -> int:
    """A destination key: ``f`` for the foundation or ``1``-``6`` for a column; NotationError (bad_place) otherwise."""
    word = text.strip().lower()
    if word == "f":
        return FOUNDATION
    if len(word) == 1 and word in "123456":
        return int(word) - 1
    raise NotationError(NotationErrorCode.BAD_PLACE, f"destination {quote_input(text, 20)} must be 'f' or a column 1-6")


@dataclass(frozen=True, slots=True)
class TypedMove:
    """What a typed card (with or without a destination) comes to on a board.

    ``move`` is set when the entry names one move: the full notation given, a card with
    a destination, or a card whose only legal destination it is. Otherwise ``card`` is
    the card typed and ``choices`` its legal moves (several: pick one; none: see ``why_not``).
    """

    card: Card
    move: Move | None = None
    choices: tuple[Move, ...] = ()
    why_not: IllegalMoveError | None = None


def read_typed_move(board: Board, text: str) -> TypedMove:
    """Read ``5D b>3`` (full notation), ``5D 3`` or ``as f`` (card and destination), or ``5D`` alone.

    The source is never needed: the board knows where the card lies. A card alone
    resolves to its move when exactly one destination is legal. A move named in full
    is returned as typed, legal or not (the server explains a refusal); with a card
    and a destination the move is built from the card's place. Raises NotationError for
    text that is not a card, and IllegalMoveError (card_not_at_source) for a card
    already on a foundation.
    """
    parts = text.split()
    if len(parts) == 2 and ">" in parts[1]:
        move = parse_move(text)
        return TypedMove(move.card, move=move)
    if not 1 <= len(parts) <= 2:
        raise NotationError(NotationErrorCode.BAD_MOVE, f"{quote_input(text)} is not a move (examples: '5D', 'AS f', '5D b>3')")
    card = parse_card(parts[0])
    source = source_of(board, card)
    if source is None:
        raise IllegalMoveError(IllegalMoveCode.CARD_NOT_AT_SOURCE, f"{parts[0].upper()} is already on its foundation")
    if len(parts) == 2:
        return TypedMove(card, move=Move(card, source, target_of(parts[1])))
    choices = tuple(destinations(board, card))
    if len(choices) == 1:
        return TypedMove(card, move=choices[0], choices=choices)
    why_not = board.check_move(Move(card, source, FOUNDATION)) if not choices else None
    return TypedMove(card, choices=choices, why_not=why_not)
