"""Watching a live race and replaying a finished one: both boards drawn side by side, move by move."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from cli.tui.board import BoardWidget
from cli.tui.keys import speak_bindings
from cli.tui.race_screen import connection_words
from client import Resumed
from client.race_client import Incoming
from client.race_view import RaceView, attempt_ending_words, clock_text, watched_status_note, watched_status_words
from client.words import count_words, words
from shared.protocol import LIVE_STATUSES, RaceEvent, RaceResult, RaceStatus, Watching

SPECTATOR_CSS = """
.status { height: 2; background: $boost; padding: 0 1; }
.boards { height: 1fr; }
.boards BoardWidget { width: 1fr; }
.message { height: 3; padding: 0 1; color: $warning; }
"""


def seat_title(view: RaceView, slot: int, now: int) -> str:
    """``Ann  12/52  playing  connected`` for a board's title: plain text (the board escapes its title, so the
    connection's colour markup would show as ``[green]connected[/]``)."""
    seat = view.seat(slot)
    state = words("term.race.playing") if seat.playing else attempt_ending_words(seat.state)
    connection = Text.from_markup(connection_words(seat.connection, seat.grace_until, now)).plain
    return f"{view.name(slot)}  {seat.count}/52  {state}  {connection}"


class SpectatorScreen(Screen[None]):
    """Both boards of a :class:`RaceView`, a status line and a message line (the base of watch and replay)."""

    DEFAULT_CSS = SPECTATOR_CSS

    def __init__(self, view: RaceView) -> None:
        super().__init__()
        speak_bindings(self)
        self.view = view

    def compose(self) -> ComposeResult:
        yield Static("", classes="status", id="spectator-status")
        with Horizontal(classes="boards"):
            yield BoardWidget(id="board-0")
            yield BoardWidget(id="board-1")
        yield Static("", classes="message", id="spectator-message", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()

    def now(self) -> int:
        """The time the boards are drawn at (server time for a live race)."""
        raise NotImplementedError

    def status_text(self) -> str:
        raise NotImplementedError

    def say(self, text: str) -> None:
        self.query_one("#spectator-message", Static).update(text)

    def redraw(self) -> None:
        now = self.now()
        for slot in (0, 1):
            board = self.view.boards.get(slot)
            self.query_one(f"#board-{slot}", BoardWidget).show(board, title=seat_title(self.view, slot, now))
        self.query_one("#spectator-status", Static).update(self.status_text())

    def clock_parts(self, now: int) -> list[str]:
        view = self.view
        parts = []
        clock = view.clock_ms(now)
        if clock is not None and view.status in LIVE_STATUSES:
            parts.append(words("term.race.clock", clock=clock_text(clock)))
        left = view.time_left_ms(now)
        if left is not None and view.status in LIVE_STATUSES:
            parts.append(words("term.race.time_left", clock=clock_text(left)))
        return parts


class WatchScreen(SpectatorScreen):
    """A live race, behind the players by the race's spectator delay; ends showing the result."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "app.leave(0)", "term.key.quit", show=False)]

    def __init__(self, watching: Watching, clock_offset_ms: float) -> None:
        super().__init__(RaceView.of_watching(watching))
        self.delay_ms = watching.delay_ms
        self.clock_offset_ms = clock_offset_ms

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.5, self.redraw)
        note = watched_status_note(self.view.status, self.view.status_now, self.delay_ms)
        if self.view.status is RaceStatus.FINISHED or self.view.status_now is RaceStatus.FINISHED:
            note = words("term.watch.replay_hint", note=note or words("term.watch.over"), race=self.view.race_id)
        if note:
            self.say(note)

    def now(self) -> int:
        import time

        return int(time.time() * 1000 + self.clock_offset_ms) - self.delay_ms

    def status_text(self) -> str:
        view = self.view
        status = watched_status_words(view.status, view.status_now, self.delay_ms)
        watching = count_words("term.race.watching", view.watchers)
        parts = [words("term.watch.title", race=f"[b]{view.race_id}[/]"), status, *self.clock_parts(self.now()), watching]
        return "  ·  ".join(parts) + "\n" + words("term.watch.behind", seconds=f"{self.delay_ms / 1000:g}")

    async def incoming(self, item: Incoming | Resumed) -> None:
        if isinstance(item, Resumed):
            watching = item.watching.get(self.view.race_id)
            if watching is not None:  # watched again: how the race stands now is the new reply's, not the first one's
                self.view.race.watchers = watching.race.watchers
                self.view.status_now = watching.status_now
            self.say(words("term.connection.reconnected"))
        elif isinstance(item, RaceEvent):
            line = self.view.apply(item)
            if line:
                self.say(line)
            if isinstance(item, RaceResult):
                self.say("\n".join([self.view.result_headline(), *self.view.standing_lines()]))
        self.redraw()


class ReplayScreen(SpectatorScreen):
    """A finished race from its event log: step forward and back, or play it at the race's own pace."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,n", "step(1)", "term.replay.next"),
        Binding("left,b", "step(-1)", "term.replay.back"),
        Binding("space", "play", "term.replay.play"),
        Binding("plus,equals_sign", "speed(2)", "term.replay.faster"),
        Binding("minus", "speed(0.5)", "term.replay.slower"),
        Binding("home", "jump(0)", "term.replay.start", show=False),
        Binding("end", "jump(-1)", "term.replay.end", show=False),
        Binding("q", "app.leave(0)", "term.key.quit", show=False),
    ]

    def __init__(self, race_info_view: RaceView, events: list[RaceEvent], *, speed: float = 1.0, autoplay: bool = False) -> None:
        super().__init__(race_info_view)
        self.template = race_info_view
        self.events = events
        self.position = 0
        """How many events are applied."""
        self.speed = speed
        self.autoplay = autoplay
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        super().on_mount()
        if self.autoplay:
            self.action_play()

    def now(self) -> int:
        if self.position == 0:
            return 0
        return self.events[self.position - 1].at

    def status_text(self) -> str:
        view = self.view
        pace = words("term.replay.playing" if self._timer is not None else "term.replay.paused", speed=f"{self.speed:g}")
        event = words("term.replay.event", position=self.position, total=len(self.events))
        parts = [words("term.replay.title", race=f"[b]{view.race_id}[/]"), event, *self.clock_parts(self.now())]
        return "  ·  ".join(parts) + "\n" + pace

    def rebuild(self) -> None:
        """The view after the first :attr:`position` events."""
        view = RaceView(race_id=self.template.race_id, rules=self.template.rules)
        line = None
        for event in self.events[: self.position]:
            line = view.apply(event) or line
        self.view = view
        if view.result is not None and self.position == len(self.events):
            self.say("\n".join([view.result_headline(), *view.standing_lines()]))
        else:
            self.say(line or "")
        self.redraw()

    def action_step(self, delta: int) -> None:
        self.position = max(0, min(len(self.events), self.position + delta))
        self.rebuild()

    def action_jump(self, position: int) -> None:
        self.position = len(self.events) if position < 0 else position
        self.rebuild()

    def action_speed(self, factor: float) -> None:
        self.speed = max(0.125, min(64.0, self.speed * factor))
        self.redraw()

    def action_play(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        else:
            if self.position >= len(self.events):
                self.position = 0
            self._schedule()
        self.redraw()

    def _schedule(self) -> None:
        if self.position >= len(self.events):
            self._timer = None
            self.redraw()
            return
        previous = self.events[self.position - 1].at if self.position else self.events[0].at
        wait = max(0, self.events[self.position].at - previous) / 1000 / self.speed
        self._timer = self.set_timer(min(max(wait, 0.001), 5.0), self._advance)  # Textual refuses a 0 s timer

    def _advance(self) -> None:
        self.position += 1
        self.rebuild()
        self._schedule()
