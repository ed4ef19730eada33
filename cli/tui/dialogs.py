"""The app's modal screens: a yes/no confirmation, and the result in words with what to do next."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Static

from client.race_view import RaceView


class Confirm(ModalScreen[bool]):
    """``question`` with what it means; ``y`` answers True, ``n`` or Escape False."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "answer(True)", "yes"), Binding("n,escape", "answer(False)", "no")]
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical { width: 72; max-width: 100%; height: auto; border: thick $warning; padding: 1 2; background: $surface; }
    """

    def __init__(self, question: str, meaning: str) -> None:
        super().__init__()
        self.question, self.meaning = question, meaning

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]{self.question}[/]")
            yield Static(self.meaning)
            yield Static("\n[b]y[/] yes    [b]n[/] no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class HelpScreen(ModalScreen[None]):
    """A screen's keys in full (``?``); Escape, ``q`` or ``?`` closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; padding: 1 2; background: $surface;
    }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(f"[b]{escape(self.title_text)}[/]")
            yield Static(self.text, id="help-text", markup=False)
            yield Static("\n[b]Esc[/] closes", id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)


class ResultScreen(ModalScreen[str]):
    """Who won and why, each player's count, time, moves and undos; dismissed with the key's choice.

    The choices: ``rematch``, ``replay``, ``lobby`` or ``quit``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('rematch')", "rematch"),
        Binding("p", "choose('replay')", "replay"),
        Binding("l", "choose('lobby')", "lobby"),
        Binding("q,escape", "choose('quit')", "quit"),
    ]
    DEFAULT_CSS = """
    ResultScreen { align: center middle; }
    ResultScreen > VerticalScroll {
        width: 96; max-width: 100%; height: auto; max-height: 100%; border: thick $success; padding: 1 2; background: $surface;
    }
    #result-note { color: $warning; }
    """

    def __init__(self, view: RaceView) -> None:
        super().__init__()
        self.view = view

    def compose(self) -> ComposeResult:
        view = self.view
        with VerticalScroll():  # on a small terminal the panel takes it whole, its lines wrapped, and scrolls
            yield Static(f"[b]{escape(view.result_headline())}[/]", id="result-headline")
            yield Static("\n".join(view.standing_lines()), id="result-standings", markup=False)
            yield Static("", id="result-note", markup=False)
            yield Static("\n[b]r[/] rematch    [b]p[/] replay this race    [b]l[/] lobby    [b]q[/] quit", id="result-keys")

    def note(self, text: str) -> None:
        """Show a line under the standings (a rematch offer made or received)."""
        self.query_one("#result-note", Static).update(text)

    def action_choose(self, choice: str) -> None:
        if choice == "rematch":
            self.run_worker(self._rematch())
        else:
            self.dismiss(choice)

    async def _rematch(self) -> None:
        from cli.tui.race_screen import RaceScreen

        screen = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if isinstance(screen, RaceScreen):
            self.note(await screen.offer_rematch())
