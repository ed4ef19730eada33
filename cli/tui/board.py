"""One Flower Garden board drawn as a fixed table: foundations, the six columns as columns, the sorted bouquet.

Red suits are red, playable cards bold and underlined, covered cards darker; a selected
card is shown reversed and the destinations it may go to light up. On an interactive
board every available card, column header and the foundations are clickable: the
clicks call the screen's ``pick_card`` and ``pick_target`` actions, the same paths as
typing a card and a destination key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.markup import escape
from textual.widgets import Static

from client.words import words
from shared import FOUNDATION, Board, Card, Suit, card_text, make_card, suit_of
from shared.assist import available_cards, playable_cards, sorted_bouquet
from shared.deal import COLUMN_COUNT

CELL = 5
"""Width of one column of cards, in terminal cells."""
RED_SUIT, BLACK_SUIT = "#ff5f5f", "#e0e0e0"
COVERED_RED, COVERED_BLACK = "#d75f5f", "#9e9e9e"
"""The suits' colours, of available and of covered cards: each at least 3:1 in contrast (WCAG) with the background of
every (dark) theme the app offers (:meth:`FlowerGardenApp.available_themes`); covered cards are drawn darker rather
than ``dim``, which some themes blend into their background."""
LIT = "#ffd75f"
"""The background of a destination the selected card may go to (black on it)."""


def card_markup(card: Card, *, playable: bool, available: bool, selected: bool, clickable: bool) -> str:
    """One card as Textual markup (``5♦`` in red, bold and underlined when playable, a click link when clickable)."""
    red = suit_of(card) in (Suit.DIAMONDS, Suit.HEARTS)
    if available or selected:
        colour = RED_SUIT if red else BLACK_SUIT
    else:
        colour = COVERED_RED if red else COVERED_BLACK
    style = [colour]
    if selected:
        style.append("reverse")
    elif playable:
        style += ["bold", "underline"]
    text = card_text(card, unicode=True)
    link = f" @click=screen.pick_card({int(card)})" if clickable and available else ""
    return f"[{' '.join(style)}{link}]{text}[/]"


class BoardWidget(Static):
    """A board as a fixed table; see the module docstring. ``interactive`` boards have click links."""

    DEFAULT_CSS = """
    BoardWidget { height: auto; padding: 0 1; }
    """

    def __init__(self, *, interactive: bool = False, with_bouquet: bool = True, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.auto_links = False  # Textual would paint every clickable card (and lit number) in the theme's link colour
        self.interactive = interactive
        self.with_bouquet = with_bouquet
        """Draw the bouquet under the columns (False: a :class:`BouquetWidget` beside the table draws it)."""
        self.board: Board | None = None
        self.title = ""
        self.selected: Card | None = None
        self.lit: set[int] = set()

    def show(self, board: Board | None, *, title: str = "", selected: Card | None = None, lit: Iterable[int] = ()) -> None:
        """Draw ``board`` (None: no deal yet) with a selected card and lit destinations."""
        self.board, self.title, self.selected, self.lit = board, title, selected, set(lit)
        self.update(self.markup())

    def markup(self) -> str:
        """The whole table as markup."""
        board = self.board
        lines = [f"[b]{escape(self.title)}[/]"] if self.title else []
        if board is None:
            return "\n".join([*lines, "", f"[dim]{escape(words('term.board.no_deal'))}[/]"])
        playable = playable_cards(board) if self.interactive else set()
        available = set(available_cards(board))
        lines.append(self._foundations(board))
        lines.append("")
        lines.append(self._headers(board))
        depth = max((len(column) for column in board.columns), default=0)
        for row in range(max(depth, 1)):
            cells = []
            for column in board.columns:
                if row < len(column):
                    card = column[row]
                    cells.append(self._card(card, card in playable, card in available) + " " * (CELL - 2))  # a card is 2 cells: rank letter, suit
                else:
                    cells.append(" " * CELL if row else "[dim] --  [/]")
            lines.append(" " + "".join(cells))
        if self.with_bouquet:
            lines.append("")
            lines.append(self._bouquet(board, playable))
        return "\n".join(lines)

    def _card(self, card: Card, playable: bool, available: bool) -> str:
        return card_markup(card, playable=playable, available=available, selected=card == self.selected, clickable=self.interactive)

    def _target_style(self, target: int) -> str:
        return f"black on {LIT}" if target in self.lit else "b"

    def _foundations(self, board: Board) -> str:
        piles = []
        for suit, top in zip(Suit, board.foundations):
            piles.append(card_text(make_card(top, suit), unicode=True) if top else f"[dim]{suit.symbol}-[/]")
        link = " @click=screen.pick_target(7)" if self.interactive else ""
        label = f"[{self._target_style(FOUNDATION)}{link}] {escape(words('term.board.foundations'))} [/]"
        return f"{label}  " + "  ".join(piles) + f"    [b]{board.foundation_count}/52[/]"

    def _headers(self, board: Board) -> str:
        cells = []
        for index in range(COLUMN_COUNT):
            link = f" @click=screen.pick_target({index})" if self.interactive else ""
            cells.append(f"[{self._target_style(index)}{link}] {index + 1} [/]" + " " * (CELL - 3))
        return " " + "".join(cells)

    def _bouquet(self, board: Board, playable: set[Card]) -> str:
        """The bouquet sorted by suit and rank, one row per suit."""
        rows = bouquet_rows(board, lambda card: self._card(card, card in playable, True))
        title = words("term.board.bouquet")
        if not rows:
            return f"[b]{escape(title)}[/]  [dim]{escape(words('term.board.empty'))}[/]"
        return "\n".join((f"[b]{escape(title)}[/]  " if index == 0 else " " * (len(title) + 2)) + row for index, row in enumerate(rows))


def bouquet_rows(board: Board, draw: Callable[[Card], str]) -> list[str]:
    """The bouquet sorted by suit and rank, one row of cards (each drawn by ``draw``) per suit that has any."""
    cards = sorted_bouquet(board)
    rows = [[card for card in cards if suit_of(card) is suit] for suit in Suit]
    return [" ".join(draw(card) for card in row) for row in rows if row]


class BouquetWidget(Static):
    """The race screen's bouquet, beside the table (a long column then leaves it in view): a heading, a row per suit."""

    DEFAULT_CSS = """
    BouquetWidget { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.auto_links = False  # as the board's: cards keep their suit colours

    def show(self, board: Board | None, *, selected: Card | None = None) -> None:
        """Draw the bouquet of ``board`` (nothing before the deal); its cards click as the table's do."""
        if board is None:
            self.update("")
            return
        playable = playable_cards(board)

        def draw(card: Card) -> str:
            return card_markup(card, playable=card in playable, available=True, selected=card == selected, clickable=True)

        rows = bouquet_rows(board, draw)
        self.update("\n".join(["[b]Bouquet[/]", *rows]) if rows else "[b]Bouquet[/]  [dim](empty)[/]")
