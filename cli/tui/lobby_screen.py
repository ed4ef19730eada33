"""The lobby: the open races as a live table, a key to join the selected one, create (after a settings dialog), quick
match, race a bot or resume."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from cli.tui.keys import speak_bindings
from cli.tui.texts import creator_label, entry_options
from client import Resumed
from client.race_client import Incoming, RaceClient
from client.race_view import race_status_words
from client.sessions import SavedRace
from client.words import count_words, words
from shared.protocol import LobbyEvent, RaceSettings

COLUMNS = (
    ("race", "term.lobby.column.race", 13),
    ("creator", "term.lobby.column.creator", 24),
    ("seats", "term.lobby.column.seats", 7),
    ("status", "term.lobby.column.status", 23),
    ("settings", "term.lobby.column.settings", 31),
)
"""The table's columns (key, the word key of its heading) and their widths (fixed: the rows change all the time); with each column's padding they fit
110 columns without a horizontal scroll bar; narrower, the line under the table shows the selected race whole."""


class LobbyScreen(Screen[None]):
    """The open public races of the server, updated as they change."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,j", "join", "term.lobby.join"),
        Binding("c", "create", "term.lobby.create"),
        Binding("k", "quick", "term.lobby.quick"),
        Binding("b", "bot", "term.lobby.bot"),
        Binding("r", "resume", "term.lobby.resume"),
        Binding("question_mark", "help", "term.key.help"),
        Binding("q", "app.leave(0)", "term.key.quit", show=False),
    ]
    DEFAULT_CSS = """
    #lobby-title { height: 2; background: $boost; padding: 0 1; }
    #lobby-table { height: 1fr; }
    #lobby-detail { height: auto; padding: 0 1; background: $boost; }
    #lobby-message { height: 2; padding: 0 1; color: $warning; }
    """

    def __init__(self, client: RaceClient, saved: SavedRace | None) -> None:
        super().__init__()
        speak_bindings(self)
        self.client = client
        self.saved = saved

    def compose(self) -> ComposeResult:
        yield Static("", id="lobby-title")
        yield DataTable(id="lobby-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="lobby-detail")
        yield Static("", id="lobby-message", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#lobby-table", DataTable)
        for key, heading, width in COLUMNS:
            table.add_column(words(heading), width=width, key=key)
        self.redraw()
        table.focus()

    def say(self, text: str) -> None:
        self.query_one("#lobby-message", Static).update(text)

    def redraw(self) -> None:
        table = self.query_one("#lobby-table", DataTable)
        selected = self.selected_race()
        table.clear()
        for entry in self.client.lobby.values():
            table.add_row(entry.race, escape(creator_label(entry)), f"{entry.seats}/2", race_status_words(entry.status), entry_options(entry), key=entry.race)
        if selected in self.client.lobby:
            table.move_cursor(row=table.get_row_index(selected))
        races = count_words("term.lobby.open_races", len(self.client.lobby))
        title = words("term.lobby.title", server=escape(self.client.url or ""), races=f"[b]{escape(races)}[/]")
        resume = "\n" + escape(words("term.lobby.can_resume", race=self.saved.race)) if self.saved is not None else ""
        self.query_one("#lobby-title", Static).update(title + resume)
        self.draw_detail()

    def draw_detail(self) -> None:
        """The selected race whole, its settings in full (the table's columns are cut on a narrow terminal)."""
        race = self.selected_race()
        entry = self.client.lobby.get(race) if race is not None else None
        text = "" if entry is None else words(
            "term.lobby.detail",
            race=f"[b]{entry.race}[/]",
            creator=escape(creator_label(entry)),
            seats=entry.seats,
            status=escape(race_status_words(entry.status)),
            settings=escape(entry_options(entry)),
        )
        self.query_one("#lobby-detail", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.draw_detail()

    def selected_race(self) -> str | None:
        table = self.query_one("#lobby-table", DataTable)
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return None if row_key.value is None else str(row_key.value)

    async def incoming(self, item: Incoming | Resumed) -> None:
        if isinstance(item, LobbyEvent | Resumed):
            self.redraw()

    def _start(self, **how: object) -> None:
        from cli.tui.app import FlowerGardenApp

        app = self.app
        assert isinstance(app, FlowerGardenApp)
        app.run_worker(app.race_from_lobby(how), group="open", exclusive=True)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_join()

    def action_join(self) -> None:
        race = self.selected_race()
        if race is None:
            self.say(words("term.lobby.nothing_to_join"))
            return
        self._start(join=race)

    def action_create(self) -> None:
        """The settings dialog, then a race created with them (Escape: nothing)."""
        from cli.tui.app import FlowerGardenApp
        from cli.tui.dialogs import SettingsScreen

        app = self.app
        assert isinstance(app, FlowerGardenApp)
        request = app.seat_request()

        def chosen(settings: RaceSettings | None) -> None:
            if settings is not None:
                self._start(settings=settings)

        app.push_screen(SettingsScreen(request.settings, logged_in=request.login is not None), chosen)

    def action_help(self) -> None:
        """The lobby's keys in full."""
        from cli.tui.dialogs import HelpScreen

        title, text = words("term.lobby.keys_help").split("\n", 1)
        self.app.push_screen(HelpScreen(title, text))

    def action_quick(self) -> None:
        self._start(quick=True)

    def action_bot(self) -> None:
        """Race a practice bot of level 3 (``flowergarden race --bot LEVEL`` picks another level)."""
        self._start(bot=3)

    def action_resume(self) -> None:
        if self.saved is None:
            self.say(words("term.lobby.no_saved_race"))
            return
        self._start(resume=self.saved)
