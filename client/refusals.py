"""A refused action in words for players: ``8♠ can't go to its foundation: the 7♠ isn't there yet``, and for the
actions that are no move (resign, stuck, rematch, leave) ``the race has no result yet``.

The server's refusal carries a code (``not_next_on_foundation``) and a message in notation (``8S 2>f: ...``);
people read what the code means for the move they made, on the board they see. This is the Python clients'
one mapping from a refusal's code to words (the web page's is ``server/web/static/js/refusals.js``, in the same
words); a code without words here is shown with the server's message and the code, which an operator needs then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from shared import Board, card_label, make_card, rank_of, suit_of
from shared.moves import BOUQUET, FOUNDATION, Action, Move


@dataclass(frozen=True, slots=True)
class Refused:
    """What a refusal's words may name: the card (in symbols), its place and destination, and the board."""

    card: str
    source: str
    target: str
    move: Move | None
    board: Board | None


def _place(index: int) -> str:
    return "the bouquet" if index == BOUQUET else "its foundation" if index == FOUNDATION else f"column {index + 1}"


def _not_next(refused: Refused) -> str | None:
    if refused.move is None:
        return None
    rank = rank_of(refused.move.card)
    below = card_label(make_card(rank - 1, suit_of(refused.move.card))) if rank > 1 else None
    return f"{refused.card} can't go to its foundation: the {below} isn't there yet" if below else None


def _rank_mismatch(refused: Refused) -> str | None:
    move, board = refused.move, refused.board
    if move is None or board is None or move.target >= len(board.columns) or not board.columns[move.target]:
        return None
    last = board.columns[move.target][-1]
    return f"{refused.card} can't go on {refused.target}: it ends in {card_label(last)}, which takes only a card one rank lower"


WORDS: Final[dict[str, Callable[[Refused], str | None]]] = {
    "not_next_on_foundation": _not_next,
    "column_rank_mismatch": _rank_mismatch,
    "column_building_forbidden": lambda r: f"{r.card} can't go on a column: in a foundation-only race cards go to the foundations only",
    "card_covered": lambda r: f"{r.card} can't move yet: other cards lie on it in {r.source}",
    "card_not_at_source": lambda r: f"{r.card} is not in {r.source}",
    "same_place": lambda r: f"{r.card} is already in {r.target}",
    "source_empty": lambda r: f"{r.source} is empty",
    "undo_not_allowed": lambda r: "this race has no undo",
    "nothing_to_undo": lambda r: "there is no move to undo",
    "redeal_not_allowed": lambda r: "this race has no redeal",
    "redeal_already_used": lambda r: "the one redeal is used up",
    "not_started": lambda r: "the race has not started yet",
    "race_over": lambda r: "the race is over",
    "attempt_over": lambda r: "your attempt has ended",
    "too_many_moves": lambda r: "this attempt has made as many moves as a race allows",
    "spectating": lambda r: "this connection watches the race, so it cannot play in it",
    "rate_limited": lambda r: "too many moves at once: slow down a little",
    "unavailable": lambda r: "the server cannot reach its store just now: nothing was played, try again",
    "not_seated": lambda r: "you have no seat in this race",
    "not_finished": lambda r: "the race has no result yet",
    "race_closed": lambda r: "the race was closed before it started",
    "already_started": lambda r: "the race has started: resign instead",
    "unknown_race": lambda r: "the server knows no such race",
    "not_queued": lambda r: "you are not waiting in the quick-match queue",
    "seed_pool_empty": lambda r: "no proven deal is ready just now: try again in a few seconds",
    "overloaded": lambda r: "the server is too busy to start anything new just now: try again in a few seconds",
    "weak_password": lambda r: "this password is too easy to guess: choose another",
    "invite_required": lambda r: "this private race is joined with its invite code, not its link",
    "server_busy": lambda r: "the server is busy checking other passwords: nothing was done, try again in a few seconds",
}
"""Refusal code -> its words for the move or other action refused (None: these words need what the client does not know)."""


def refusal_words(code: str, action: Action | None = None, board: Board | None = None) -> str | None:
    """The words for a refusal of ``action`` (as sent, on ``board`` as the client saw it); None when there are none."""
    move = action if isinstance(action, Move) else None
    refused = Refused(
        card=card_label(move.card) if move else "the card",
        source=_place(move.source) if move else "its place",
        target=_place(move.target) if move else "there",
        move=move,
        board=board,
    )
    words = WORDS.get(code)
    return None if words is None else words(refused)
