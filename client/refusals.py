"""A refused action in words for players: ``8♠ can't go to its foundation: the 7♠ isn't there yet``, and for the
actions that are no move (resign, stuck, rematch, leave) ``the race has no result yet``.

The server's refusal carries a code (``not_next_on_foundation``) and a message in notation (``8S 2>f: ...``);
people read what the code means for the move they made, on the board they see. This is the Python clients'
one mapping from a refusal's code to words: the ``refusal.<code>`` keys of the word tables (:mod:`shared.words`),
which the web page's ``server/web/static/js/refusals.js`` says too; a code without words is shown with the server's
message and the code, which an operator needs then.
"""

from __future__ import annotations

from client.words import TABLES, words
from shared import Board, Card, IllegalMoveError, card_label, make_card, rank_of, suit_of
from shared.assist import source_of
from shared.moves import BOUQUET, FOUNDATION, Action, Move


def _place(form: str, index: int | None) -> str:
    """A place as a refusal names it: ``form`` ``in`` (``in column 3``) or ``to`` (``on column 3``); None: unknown."""
    if index is None:
        return words(f"place.{form}.unknown")
    if index == BOUQUET:
        return words(f"place.{form}.bouquet")
    return words(f"place.{form}.foundation") if index == FOUNDATION else words(f"place.{form}.column", number=index + 1)


def _more(code: str, move: Move | None, board: Board | None) -> dict[str, str] | None:
    """What the words of ``code`` name beyond the card and its places (the card below, a column's last card); None
    when the client cannot say it."""
    if code == "not_next_on_foundation":
        if move is None or rank_of(move.card) == 1:
            return None
        return {"below": card_label(make_card(rank_of(move.card) - 1, suit_of(move.card)))}
    if code == "column_rank_mismatch":
        if move is None or board is None or move.target >= len(board.columns) or not board.columns[move.target]:
            return None
        return {"last": card_label(board.columns[move.target][-1])}
    return {}


def refusal_words(code: str, action: Action | None = None, board: Board | None = None) -> str | None:
    """The words for a refusal of ``action`` (as sent, on ``board`` as the client saw it); None when there are none."""
    key = f"refusal.{code}"
    move = action if isinstance(action, Move) else None
    more = _more(code, move, board)
    if key not in TABLES["en"] or more is None:
        return None
    return words(
        key,
        card=card_label(move.card) if move else words("place.the_card"),
        in_source=_place("in", move.source if move else None),
        in_target=_place("in", move.target if move else None),
        to_target=_place("to", move.target if move else None),
        **more,
    )


def no_move_words(card: Card, why_not: IllegalMoveError | None, board: Board) -> str:
    """Why a typed card has no legal move on ``board``: the rules' refusal of it to its foundation (``why_not``) in the
    players' words (``8♠ can't go to its foundation: the 7♠ isn't there yet.``), else ``8♠ cannot move now: ...``."""
    source = source_of(board, card)
    said = refusal_words(why_not.code.value, Move(card, source, FOUNDATION), board) if why_not and source is not None else None
    if said:
        return f"{said[0].upper()}{said[1:]}."
    reason = why_not.message if why_not else words("term.race.no_legal_move")
    return words("term.race.cannot_move", card=card_label(card), reason=reason)
