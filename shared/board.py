"""The position of one Flower Garden game and the rules that move it.

:class:`Board` is to this game what ``chess.Board`` is to chess: it holds the
columns, bouquet and foundations, lists legal moves, explains why a move is
illegal with a fixed code, and pushes and pops actions. It does no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shared.cards import DECK_SIZE, FULL_DECK, KING, SUIT_LETTERS, Card, Suit, card_text, make_card, parse_card, rank_of, suit_of
from shared.deal import COLUMN_COUNT, check_seed, deal, parse_seed, redeal_columns
from shared.errors import IllegalMoveCode, IllegalMoveError, NotationError, NotationErrorCode, quote_input
from shared.moves import BOUQUET, FOUNDATION, Action, Move, Special, move_text
from shared.rules import Profile, Rules


class Status(StrEnum):
    """Where a game stands."""

    PLAYING = "playing"
    """Moves remain and the game is not known to be lost."""
    WON = "won"
    """All 52 cards are on the foundations."""
    BLOCKED = "blocked"
    """No legal move exists at all."""
    DEAD = "dead"
    """Moves exist, but a dead-position check proved that no further card can reach a foundation."""


DeadCheck = Callable[["Board"], bool]
"""Answers True only when it has proved the position dead (the solver provides one)."""

CLASSIC_RULES = Rules()
"""The default rules: classic profile, no undo, no redeal."""


@dataclass(frozen=True, slots=True)
class _Pushed:
    """What :meth:`Board.pop` needs to revert one action."""

    action: Action
    bouquet_index: int = -1
    columns_before: tuple[tuple[Card, ...], ...] = ()
    undo_floor_before: int = 0


class Board:
    """A game position with its rules, its history and its undo and redeal counters."""

    def __init__(
        self,
        columns: Sequence[Sequence[Card]],
        bouquet: Sequence[Card],
        foundations: Sequence[int] = (0, 0, 0, 0),
        rules: Rules = CLASSIC_RULES,
        seed: int | None = None,
    ) -> None:
        """A position from its parts; ``foundations[s]`` is the top rank (0 = empty) of suit s.

        Raises :class:`NotationError` (bad_position) unless the 52 cards appear exactly once,
        and ValueError for a seed outside 0..2**64-1.
        """
        self.rules = rules
        self.seed = None if seed is None else check_seed(seed)
        self._columns: list[list[Card]] = [list(column) for column in columns]
        self._bouquet: list[Card] = list(bouquet)
        self._foundations: list[int] = list(foundations)
        self._stack: list[_Pushed] = []
        self._undo_floor = 0
        self.undos = 0
        """How many undos the player has made."""
        self.redeal_used = False
        """Whether the one redeal of the house rule has been used."""
        self._check_conservation()

    @classmethod
    def deal(cls, seed: int, rules: Rules = CLASSIC_RULES) -> Board:
        """The fresh position of ``seed`` under ``rules``."""
        layout = deal(seed)
        return cls(layout.columns, layout.bouquet, rules=rules, seed=seed)

    def _check_conservation(self) -> None:
        """Refuse (bad_position) anything but 6 columns, 4 foundations and each of the 52 cards exactly once."""
        if len(self._columns) != COLUMN_COUNT or len(self._foundations) != len(Suit):
            raise NotationError(NotationErrorCode.BAD_POSITION, "a position has 6 columns and 4 foundations")
        if any(not _is_int_in(top, 0, KING) for top in self._foundations):
            raise NotationError(NotationErrorCode.BAD_POSITION, "a foundation holds 0 to 13 cards")
        on_table = [*self._bouquet, *(card for column in self._columns for card in column)]
        if any(not _is_int_in(card, 0, DECK_SIZE - 1) for card in on_table):
            raise NotationError(NotationErrorCode.BAD_POSITION, "cards are integers 0 to 51")
        on_foundations = [make_card(rank, suit) for suit, top in zip(Suit, self._foundations) for rank in range(1, top + 1)]
        if sorted([*on_foundations, *on_table]) != list(FULL_DECK):
            raise NotationError(NotationErrorCode.BAD_POSITION, "the position must hold each of the 52 cards exactly once")

    # --- reading the position -------------------------------------------------

    @property
    def columns(self) -> tuple[tuple[Card, ...], ...]:
        """The six columns, first-dealt card first; the last card of each is available."""
        return tuple(tuple(column) for column in self._columns)

    @property
    def bouquet(self) -> tuple[Card, ...]:
        """The bouquet cards in deal order; every one is available."""
        return tuple(self._bouquet)

    @property
    def foundations(self) -> tuple[int, ...]:
        """Top rank on each suit's foundation (0 = empty), indexed by :class:`Suit`."""
        return tuple(self._foundations)

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations, 0 to 52."""
        return sum(self._foundations)

    @property
    def cards_left(self) -> int:
        """Cards not yet on the foundations."""
        return DECK_SIZE - self.foundation_count

    @property
    def move_stack(self) -> tuple[Action, ...]:
        """The actions that :meth:`pop` can take back, oldest first."""
        return tuple(pushed.action for pushed in self._stack)

    def is_won(self) -> bool:
        """All 52 cards are on the foundations."""
        return self.foundation_count == DECK_SIZE

    def available(self) -> Iterator[tuple[Card, int]]:
        """Each available card with its source: bouquet cards in deal order, then column tops."""
        for card in self._bouquet:
            yield card, BOUQUET
        for index, column in enumerate(self._columns):
            if column:
                yield column[-1], index

    def accepts_on_foundation(self, card: Card) -> bool:
        """Whether ``card`` is the next card of its suit's foundation."""
        return self._foundations[suit_of(card)] + 1 == rank_of(card)

    # --- moves ----------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        """Every legal move, pointless ones included (a lone card to an empty column, say)."""
        moves: list[Move] = []
        builds = self.rules.builds_on_columns
        tops = [column[-1] if column else None for column in self._columns]
        for card, source in self.available():
            if self.accepts_on_foundation(card):
                moves.append(Move(card, source, FOUNDATION))
            if not builds:
                continue
            rank = rank_of(card)
            for target, top in enumerate(tops):
                if target != source and (top is None or rank_of(top) == rank + 1):
                    moves.append(Move(card, source, target))
        return moves

    def has_legal_move(self) -> bool:
        """Whether :meth:`legal_moves` would list anything, without building the list (stops at the first move).

        The race server asks this after every move; listing every move just to learn that one exists was a fifth
        of its CPU time.
        """
        builds = self.rules.builds_on_columns
        tops = [column[-1] if column else None for column in self._columns]
        if builds and None in tops:
            return any(True for _ in self.available())  # any card may go to an empty column
        top_ranks = {rank_of(top) for top in tops if top is not None} if builds else set()
        # A card never builds on itself (its own column ends in its own rank, not one higher).
        return any(self.accepts_on_foundation(card) or rank_of(card) + 1 in top_ranks for card, _ in self.available())

    def check_move(self, move: Move) -> IllegalMoveError | None:
        """None if ``move`` is legal here, else the refusal with its code and a message for people."""
        name = move_text(move)
        if move.source == BOUQUET:
            if move.card not in self._bouquet:
                return IllegalMoveError(IllegalMoveCode.CARD_NOT_AT_SOURCE, f"{name}: {card_text(move.card)} is not in the bouquet")
        else:
            column = self._columns[move.source]
            if not column:
                return IllegalMoveError(IllegalMoveCode.SOURCE_EMPTY, f"{name}: column {move.source + 1} is empty")
            if column[-1] != move.card:
                code = IllegalMoveCode.CARD_COVERED if move.card in column else IllegalMoveCode.CARD_NOT_AT_SOURCE
                where = "is covered by other cards in" if move.card in column else "is not in"
                return IllegalMoveError(code, f"{name}: {card_text(move.card)} {where} column {move.source + 1}")
        if move.target == FOUNDATION:
            if not self.accepts_on_foundation(move.card):
                return IllegalMoveError(IllegalMoveCode.NOT_NEXT_ON_FOUNDATION, f"{name}: {self._foundation_needs(suit_of(move.card))}")
            return None
        if move.target == move.source:
            return IllegalMoveError(IllegalMoveCode.SAME_PLACE, f"{name}: the card is already in column {move.source + 1}")
        if not self.rules.builds_on_columns:
            return IllegalMoveError(IllegalMoveCode.COLUMN_BUILDING_FORBIDDEN, f"{name}: the {self.rules.profile.value} profile allows only foundation moves")
        target = self._columns[move.target]
        if target and rank_of(target[-1]) != rank_of(move.card) + 1:
            return IllegalMoveError(
                IllegalMoveCode.COLUMN_RANK_MISMATCH,
                f"{name}: column {move.target + 1} ends in {card_text(target[-1])}; only a card one rank lower may go there",
            )
        return None

    def _foundation_needs(self, suit: Suit) -> str:
        """What the foundation of ``suit`` accepts next, for refusal messages."""
        top = self._foundations[suit]
        name = suit.name.lower()
        if top == KING:
            return f"the {name} foundation is complete (no K→A wrap)"
        return f"the {name} foundation needs {card_text(make_card(top + 1, suit))} next"

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal here."""
        return self.check_move(move) is None

    def push(self, move: Move) -> None:
        """Make a legal move; raises :class:`IllegalMoveError` (position unchanged) otherwise."""
        error = self.check_move(move)
        if error is not None:
            raise error
        bouquet_index = -1
        if move.source == BOUQUET:
            bouquet_index = self._bouquet.index(move.card)
            del self._bouquet[bouquet_index]
        else:
            self._columns[move.source].pop()
        if move.target == FOUNDATION:
            self._foundations[suit_of(move.card)] += 1
        else:
            self._columns[move.target].append(move.card)
        self._stack.append(_Pushed(move, bouquet_index=bouquet_index))

    def pop(self) -> Action:
        """Take back the last pushed move or redeal, uncounted (for analysis); IndexError if none."""
        pushed = self._stack.pop()
        action = pushed.action
        if isinstance(action, Move):
            if action.target == FOUNDATION:
                self._foundations[suit_of(action.card)] -= 1
            else:
                self._columns[action.target].pop()
            if action.source == BOUQUET:
                self._bouquet.insert(pushed.bouquet_index, action.card)
            else:
                self._columns[action.source].append(action.card)
        else:
            self._columns = [list(column) for column in pushed.columns_before]
            self._undo_floor = pushed.undo_floor_before
            self.redeal_used = False
        return action

    # --- player actions beyond moves --------------------------------------------

    def check_undo(self) -> IllegalMoveError | None:
        """None if the player may undo now, else the refusal."""
        if not self.rules.undo:
            return IllegalMoveError(IllegalMoveCode.UNDO_NOT_ALLOWED, "undo is not allowed in this game")
        if len(self._stack) <= self._undo_floor:
            return IllegalMoveError(IllegalMoveCode.NOTHING_TO_UNDO, "there is no move to undo")
        return None

    def undo(self) -> Move:
        """The player's undo of its last move, counted in :attr:`undos`; raises :class:`IllegalMoveError`."""
        error = self.check_undo()
        if error is not None:
            raise error
        action = self.pop()
        assert isinstance(action, Move)  # the undo floor sits above every redeal
        self.undos += 1
        return action

    def check_redeal(self, *, columns_given: bool = False) -> IllegalMoveError | None:
        """None if the redeal house rule may be used now, else the refusal (``columns_given``: the caller has the
        dealt columns, so no seed is needed)."""
        if not self.rules.redeal_once:
            return IllegalMoveError(IllegalMoveCode.REDEAL_NOT_ALLOWED, "this game does not allow a redeal")
        if self.redeal_used:
            return IllegalMoveError(IllegalMoveCode.REDEAL_ALREADY_USED, "the one redeal of this game has been used")
        if self.seed is None and not columns_given:
            return IllegalMoveError(IllegalMoveCode.REDEAL_NEEDS_SEED, "this position has no seed to redeal from")
        return None

    def redeal(self, dealt: Sequence[Sequence[Card]] | None = None) -> None:
        """Gather, shuffle from the seed and deal back the column cards, once; it cannot be undone.

        ``dealt`` gives the columns the redeal produced instead (a race client does not know the seed until the
        result: the server sends them); ValueError unless they hold exactly the cards of the columns now.
        """
        error = self.check_redeal(columns_given=dealt is not None)
        if error is not None:
            raise error
        before = self.columns
        if dealt is None:
            assert self.seed is not None
            after = redeal_columns(self.seed, before)
        else:
            after = tuple(tuple(column) for column in dealt)
            if len(after) != COLUMN_COUNT or sorted(card for column in after for card in column) != sorted(
                card for column in before for card in column
            ):
                raise ValueError("the dealt columns do not hold the cards of the columns")
        self._columns = [list(column) for column in after]
        self._stack.append(_Pushed(Special.REDEAL, columns_before=before, undo_floor_before=self._undo_floor))
        self._undo_floor = len(self._stack)
        self.redeal_used = True

    def check_action(self, action: Action) -> IllegalMoveError | None:
        """None if ``action`` (move, undo or redeal) is allowed now, else the refusal."""
        if action is Special.UNDO:
            return self.check_undo()
        if action is Special.REDEAL:
            return self.check_redeal()
        assert isinstance(action, Move)
        return self.check_move(action)

    def play(self, action: Action) -> None:
        """Apply a move, undo or redeal as a player would; raises :class:`IllegalMoveError`."""
        if action is Special.UNDO:
            self.undo()
        elif action is Special.REDEAL:
            self.redeal()
        else:
            assert isinstance(action, Move)
            self.push(action)

    def status(self, dead_check: DeadCheck | None = None) -> Status:
        """WON, BLOCKED, DEAD (only when ``dead_check`` proves it) or PLAYING."""
        if self.is_won():
            return Status.WON
        if not self.has_legal_move():
            return Status.BLOCKED
        if dead_check is not None and dead_check(self):
            return Status.DEAD
        return Status.PLAYING

    # --- copies and the JSON position format --------------------------------------

    def copy(self) -> Board:
        """An independent copy with the same history and counters."""
        twin = type(self).__new__(type(self))
        twin.rules = self.rules
        twin.seed = self.seed
        twin._columns = [list(column) for column in self._columns]
        twin._bouquet = list(self._bouquet)
        twin._foundations = list(self._foundations)
        twin._stack = list(self._stack)
        twin._undo_floor = self._undo_floor
        twin.undos = self.undos
        twin.redeal_used = self.redeal_used
        return twin

    def to_json(self, dead_check: DeadCheck | None = None) -> dict[str, Any]:
        """The position in the documented JSON format (docs/NOTATION.md, "Position JSON")."""
        return {
            "seed": self.seed,
            "profile": self.rules.profile.value,
            "options": self.rules.options_json(),
            "columns": [[card_text(card) for card in column] for column in self._columns],
            "bouquet": [card_text(card) for card in self._bouquet],
            "foundations": {suit.letter: card_text(make_card(top, suit)) if top else None for suit, top in zip(Suit, self._foundations)},
            "foundation_count": self.foundation_count,
            "status": self.status(dead_check).value,
            "undos": self.undos,
            "redeal_used": self.redeal_used,
            "can_undo": self.check_undo() is None,
            "can_redeal": self.check_redeal() is None,
            "legal": [move_text(move) for move in self.legal_moves()],
        }

    @classmethod
    def from_json(cls, data: object) -> Board:
        """A board from the JSON position format; raises :class:`NotationError` (bad_position, bad_rules or bad_card).

        Reads ``seed`` (optional; a number or a decimal/0x text), ``profile``,
        ``options``, ``columns``, ``bouquet``, ``foundations`` (optional),
        ``undos`` and ``redeal_used`` (optional). The derived fields that
        :meth:`to_json` adds (``foundation_count``, ``status``, ``can_undo``,
        ``can_redeal``, ``legal``) are ignored. The history is not part of
        the format, so the new board has nothing to pop or undo.
        """
        if not isinstance(data, Mapping):
            raise NotationError(NotationErrorCode.BAD_POSITION, f"a position is a JSON object, got {quote_input(data)}")
        rules = Rules.from_json(data.get("profile", Profile.CLASSIC.value), data.get("options"))
        try:
            seed = None if data.get("seed") is None else parse_seed(data["seed"])
        except ValueError as error:
            raise NotationError(NotationErrorCode.BAD_POSITION, str(error)) from None
        columns_text = data.get("columns")
        if not isinstance(columns_text, list) or len(columns_text) != COLUMN_COUNT:
            raise NotationError(NotationErrorCode.BAD_POSITION, "columns must be a list of 6 lists of cards")
        columns = [_cards_from_json(column, f"column {index + 1}") for index, column in enumerate(columns_text)]
        bouquet = _cards_from_json(data.get("bouquet"), "bouquet")
        undos = data.get("undos", 0)
        if not _is_int_in(undos, 0, None):
            raise NotationError(NotationErrorCode.BAD_POSITION, f"undos must be a non-negative integer, got {quote_input(undos)}")
        redeal_used = data.get("redeal_used", False)
        if not isinstance(redeal_used, bool):
            raise NotationError(NotationErrorCode.BAD_POSITION, f"redeal_used must be true or false, got {quote_input(redeal_used)}")
        board = cls(columns, bouquet, _foundations_from_json(data.get("foundations")), rules, seed)
        board.undos = undos
        board.redeal_used = redeal_used
        return board

    def __str__(self) -> str:
        return render(self)

    def __repr__(self) -> str:
        columns = " | ".join(" ".join(map(card_text, column)) for column in self._columns)
        tops = " ".join(card_text(make_card(top, suit)) for suit, top in zip(Suit, self._foundations) if top)
        return (
            f"<Board {self.rules.profile.value} undo={self.rules.undo} redeal_once={self.rules.redeal_once} seed={self.seed} "
            f"columns=[{columns}] bouquet=[{' '.join(map(card_text, self._bouquet))}] foundations=[{tops}]>"
        )


def render(board: Board, *, unicode: bool = True) -> str:
    """A readable text picture of the board for people."""

    def show(card: Card) -> str:
        return card_text(card, unicode=unicode)

    founds = "  ".join(
        f"{suit.symbol if unicode else suit.letter}:{show(Card(suit * 13 + top - 1)) if top else '--'}"
        for suit, top in zip(Suit, board.foundations)
    )
    lines = [f"Foundations  {founds}   ({board.foundation_count}/52)"]
    for index, column in enumerate(board.columns):
        lines.append(f"Column {index + 1}     " + (" ".join(show(card) for card in column) or "(empty)"))
    lines.append("Bouquet      " + (" ".join(show(card) for card in board.bouquet) or "(empty)"))
    return "\n".join(lines)


def _is_int_in(value: object, low: int, high: int | None) -> bool:
    """Whether ``value`` is a true integer (not a bool) from ``low`` to ``high`` (None: no upper bound)."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value and (high is None or value <= high)


def _cards_from_json(value: object, where: str) -> list[Card]:
    """The cards of a JSON list of card texts; NotationError (bad_position, bad_card) otherwise."""
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise NotationError(NotationErrorCode.BAD_POSITION, f"{where} must be a list of card texts")
    return [parse_card(text) for text in value]


def _foundations_from_json(value: object) -> list[int]:
    """Top ranks per suit from ``{"C": "5C" | null, …}`` (absent suits are empty); NotationError otherwise."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping) or any(key not in SUIT_LETTERS for key in value):
        raise NotationError(NotationErrorCode.BAD_POSITION, 'foundations must be an object like {"C": "5C", "D": null, "H": null, "S": "AS"}')
    tops = [0] * len(Suit)
    for suit in Suit:
        top = value.get(suit.letter)
        if top is None:
            continue
        card = parse_card(top) if isinstance(top, str) else None
        if card is None or suit_of(card) is not suit:
            raise NotationError(NotationErrorCode.BAD_POSITION, f"foundation {suit.letter} cannot hold {quote_input(top)}")
        tops[suit] = rank_of(card)
    return tops
