"""The app's modal screens: a yes/no confirmation, the keys, the settings of a new race, and the result in words with
what to do next."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from cli.tui.keys import speak_bindings
from client.race_view import RaceView
from client.words import words
from shared import Profile
from shared.protocol import MAX_SPECTATOR_DELAY_SECONDS, MAX_TIME_LIMIT_SECONDS, RaceSettings


class Confirm(ModalScreen[bool]):
    """``question`` with what it means; ``y`` answers True, ``n`` or Escape False."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "answer(True)", "term.key.yes"), Binding("n,escape", "answer(False)", "term.key.no")]
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm > Vertical { width: 72; max-width: 100%; height: auto; border: thick $warning; padding: 1 2; background: $surface; }
    """

    def __init__(self, question: str, meaning: str) -> None:
        super().__init__()
        speak_bindings(self)
        self.question, self.meaning = question, meaning

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]{self.question}[/]")
            yield Static(self.meaning)
            yield Static(f"\n[b]y[/] {escape(words('term.key.yes'))}    [b]n[/] {escape(words('term.key.no'))}")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class HelpScreen(ModalScreen[None]):
    """A screen's keys in full (``?``); Escape, ``q`` or ``?`` closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "term.key.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; padding: 1 2; background: $surface;
    }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        speak_bindings(self)
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(f"[b]{escape(self.title_text)}[/]")
            yield Static(self.text, id="help-text", markup=False)
            yield Static("\n" + escape(words("term.help.closes")), id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)


class ResultScreen(ModalScreen[str]):
    """Who won and why, each player's count, time, moves and undos; dismissed with the key's choice.

    The choices: ``rematch``, ``replay``, ``lobby`` or ``quit``.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('rematch')", "term.result.rematch"),
        Binding("p", "choose('replay')", "term.result.replay"),
        Binding("l", "choose('lobby')", "term.result.lobby"),
        Binding("q,escape", "choose('quit')", "term.key.quit"),
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
        speak_bindings(self)
        self.view = view

    def compose(self) -> ComposeResult:
        view = self.view
        with VerticalScroll():  # on a small terminal the panel takes it whole, its lines wrapped, and scrolls
            yield Static(f"[b]{escape(view.result_headline())}[/]", id="result-headline")
            # Under 100 columns a player's whole line would wrap mid-figure in the panel: two lines each then.
            yield Static("\n".join(view.standing_lines(split=self.app.size.width < 100)), id="result-standings", markup=False)
            yield Static("", id="result-note", markup=False)
            yield Static("\n" + words("term.result.keys"), id="result-keys", markup=False)

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


class SettingsScreen(ModalScreen[RaceSettings | None]):
    """The lobby's ``c``: the settings of the race to create (the rules, time limit, undo, redeal, private, rated,
    solvable, hints, spectator delay), starting from ``settings``; dismissed with the chosen settings, or None (Escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "term.key.cancel")]
    DEFAULT_CSS = """
    SettingsScreen { align: center middle; }
    SettingsScreen > VerticalScroll {
        width: 72; max-width: 100%; height: auto; max-height: 100%; border: thick $primary; padding: 0 1; background: $surface;
    }
    SettingsScreen Horizontal { height: auto; margin: 1 0 0 0; }
    SettingsScreen Label { width: 30; }
    SettingsScreen Input { width: 1fr; height: 1; border: none; padding: 0 1; }
    SettingsScreen Checkbox { width: 1fr; height: 1; border: none; padding: 0; }
    SettingsScreen Button { margin: 0 2 0 0; }
    #settings-error { color: $error; height: auto; }
    """

    def __init__(self, settings: RaceSettings, *, logged_in: bool) -> None:
        super().__init__()
        speak_bindings(self)
        self.settings = settings
        self.logged_in = logged_in

    def compose(self) -> ComposeResult:
        settings = self.settings
        with VerticalScroll():
            yield Static(f"[b]{escape(words('term.settings.title'))}[/]  {escape(words('term.settings.how'))}")
            with Horizontal(classes="field"):
                yield Label(words("term.settings.time_limit"))
                limit = "" if settings.time_limit is None else str(settings.time_limit)
                yield Input(limit, placeholder=words("term.settings.no_time_limit"), id="time-limit")
            with Horizontal():
                yield Label(words("term.settings.delay"))
                delay = "" if settings.spectator_delay is None else str(settings.spectator_delay)
                yield Input(delay, placeholder=words("term.settings.server_default"), id="delay")
            yield Checkbox(words("term.settings.foundation_only"), settings.profile == Profile.FOUNDATION_ONLY, id="profile")
            yield Checkbox(words("term.settings.undo"), settings.undo, id="undo")
            yield Checkbox(words("term.settings.redeal"), settings.redeal_once, id="redeal")
            yield Checkbox(words("term.settings.private"), settings.private, id="private")
            yield Checkbox(words("term.settings.solvable"), settings.solvable_only, id="solvable")
            yield Checkbox(words("term.settings.hints"), settings.hints, id="hints")
            yield Checkbox(words("term.settings.rated"), settings.rated, id="rated")
            yield Static("", id="settings-error")
            with Horizontal():
                yield Button(words("term.settings.create"), variant="primary", id="create")
                yield Button(words("term.settings.cancel"), id="cancel")

    def chosen(self) -> RaceSettings:
        """The settings as filled in; ValueError with the reason when a field is wrong."""
        limit = _whole(self.query_one("#time-limit", Input).value, "term.settings.time_limit_range", 1, MAX_TIME_LIMIT_SECONDS)
        delay = _whole(self.query_one("#delay", Input).value, "term.settings.delay_range", 0, MAX_SPECTATOR_DELAY_SECONDS)
        rated, hints = self.query_one("#rated", Checkbox).value, self.query_one("#hints", Checkbox).value
        if rated and not self.logged_in:
            raise ValueError(words("term.settings.rated_needs_login"))
        if rated and hints:
            raise ValueError(words("term.settings.rated_no_hints"))
        return replace(
            self.settings,
            profile=(Profile.FOUNDATION_ONLY if self.query_one("#profile", Checkbox).value else Profile.CLASSIC).value,
            time_limit=limit,
            spectator_delay=delay,
            undo=self.query_one("#undo", Checkbox).value,
            redeal_once=self.query_one("#redeal", Checkbox).value,
            private=self.query_one("#private", Checkbox).value,
            solvable_only=self.query_one("#solvable", Checkbox).value,
            rated=rated,
            hints=hints,
        )

    def _create(self) -> None:
        try:
            self.dismiss(self.chosen())
        except ValueError as error:
            self.query_one("#settings-error", Static).update(escape(str(error)))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "create":
            self._create()
        else:
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._create()

    def action_cancel(self) -> None:
        self.dismiss(None)


def _whole(text: str, range_key: str, low: int, high: int) -> int | None:
    """A whole number typed in a field (empty: None), from ``low`` to ``high``; ValueError saying which field (the
    words of ``range_key``)."""
    if not text.strip():
        return None
    if not text.strip().isdigit() or not low <= int(text) <= high:
        raise ValueError(words(range_key, low=low, high=high))
    return int(text)
