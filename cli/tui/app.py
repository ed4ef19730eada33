"""The full-screen app behind ``flowergarden race``, ``watch``, ``replay`` and ``lobby`` on a terminal.

The app owns one :class:`~client.race_client.RaceClient` at a time and one task that
follows its events (across reconnects) and hands each to the screen in charge. It
starts on the screen the command asked for (a :class:`RaceStart`, :class:`WatchStart`,
:class:`ReplayStart` or :class:`LobbyStart`) and moves between them: the result's keys
lead to a rematch, the replay or the lobby; the lobby's keys to a race.

Ctrl-C, Ctrl-D and Ctrl-Q end it at once (Textual restores the terminal, and input
typed meanwhile is discarded rather than handed to the shell). Leaving a race that has
not started gives the seat up; leaving a running race keeps it for the grace period, and
the farewell printed after the app says how to take it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.theme import Theme
from textual.worker import Worker

from cli.connected import CONNECTION_FAILURES, unreachable
from cli.output import EXIT_OK, CommandError, race_exit_code
from cli.terminal_input import discard_typeahead
from cli.tui.keys import speak_bindings
from client import ConnectionLost, RaceClient, Resumed, ServerError
from client.race_client import Incoming
from client.race_session import Credentials, RaceSession, ResumeError, SeatRequest, introduce
from client.race_view import RaceView
from client.sessions import SavedRace, SessionStore
from client.words import words
from shared.protocol import OPEN_STATUSES, OVER_STATUSES, RaceEvent, RaceStatus

EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class RaceStart:
    """Start by taking a seat."""

    request: SeatRequest
    auto: bool = False


@dataclass(frozen=True, slots=True)
class WatchStart:
    """Start by watching a live race."""

    race: str


@dataclass(frozen=True, slots=True)
class ReplayStart:
    """Start by replaying a finished race (``speed`` None: paused at the start)."""

    race: str
    speed: float | None = None


@dataclass(frozen=True, slots=True)
class LobbyStart:
    """Start in the lobby; ``request`` holds the name and the settings of races created or quick-matched from it."""

    request: SeatRequest = field(default_factory=SeatRequest)


Start = RaceStart | WatchStart | ReplayStart | LobbyStart


class Consumer(Protocol):
    """A screen that takes the connection's events."""

    async def incoming(self, item: Incoming | Resumed) -> None: ...


class FlowerGardenApp(App[int]):
    """See the module docstring. ``run_and_exit_code`` runs it and returns the process's exit code."""

    TITLE = "Flower Garden Race"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "leave(130)", "term.key.quit", priority=True, show=False),
        Binding("ctrl+d", "leave(0)", "term.key.quit", priority=True, show=False),
        Binding("ctrl+q", "leave(0)", "term.key.quit", priority=True),
        Binding("ctrl+p", "command_palette", "term.key.palette", priority=True, show=False),
    ]
    """Ctrl-C, Ctrl-D and Ctrl-Q leave; Ctrl-P opens Textual's command palette (declared here for its words)."""

    @property
    def available_themes(self) -> dict[str, Theme]:
        """The themes the command palette offers: the dark ones with a background of their own, on which the cards'
        colours (red suits red, black suits light grey, covered cards dimmed) read; a light theme, or one taking the
        terminal's own background (``ansi-*``), would hide the black suits."""
        return {name: theme for name, theme in super().available_themes.items() if theme.dark and not name.startswith("ansi")}

    def __init__(self, server: str, start: Start, *, store: SessionStore | None = None) -> None:
        super().__init__()
        speak_bindings(self)
        self.server = server
        self.start = start
        self.store = store or SessionStore()
        self.client: RaceClient | None = None
        self.session: RaceSession | None = None
        self.consumer: Consumer | None = None
        self.error: CommandError | None = None
        self.farewell: list[str] = []
        """Lines printed after the app has closed (how to resume a seat left while racing)."""
        self._following: Worker[None] | None = None
        self._inbox: asyncio.Queue[Incoming | Resumed] = asyncio.Queue()
        """The connection's events, handed to the screen in charge by :meth:`_dispatch` (held while none is)."""
        self._consumer_ready = asyncio.Event()
        self._clock_offset_ms = 0.0

    # --- running -----------------------------------------------------------------------------

    def run_and_exit_code(self) -> int:
        """Run full screen; print the farewell; raise the error that ended it, if any; the exit code."""
        try:
            code = self.run()
        finally:
            discard_typeahead()
        for line in self.farewell:
            print(line)
        if self.error is not None:
            raise self.error
        return EXIT_OK if code is None else code

    async def on_mount(self) -> None:
        self.run_worker(self._dispatch(), name="dispatch", group="dispatch")
        self.run_worker(self._open(), name="open", exclusive=True, group="open")

    async def _open(self) -> None:
        try:
            await self._begin(self.start)
        except ResumeError as error:
            self.fail(CommandError(error.code, str(error)))
        except ServerError as error:
            self.fail(CommandError(error.code, error.error.message))  # the code is shown once, by the CommandError
        except CONNECTION_FAILURES as error:
            self.fail(unreachable(self.server, error))

    def fail(self, error: CommandError) -> None:
        """End the app with ``error`` (reported after the terminal is restored)."""
        self.error = error
        self.exit(error.exit_code)

    async def _begin(self, start: Start) -> None:
        if isinstance(start, RaceStart):
            await self.start_race(start.request, auto=start.auto)
        elif isinstance(start, WatchStart):
            await self.start_watch(start.race)
        elif isinstance(start, ReplayStart):
            await self.start_replay(start.race, start.speed)
        else:
            await self.start_lobby(start.request)

    async def connect(self, name: str | None, login: Credentials | None = None) -> RaceClient:
        """A new client (the previous one closed), with hello said (and logged in to ``login``) unless ``name`` is None."""
        await self._drop_client()
        client = await RaceClient.connect(self.server)
        self.client = client
        if name is not None:
            welcome = await client.hello(name)
            self._clock_offset_ms = welcome.server_time - time.time() * 1000
            await introduce(client, name, login)
        return client

    def seat_request(self) -> SeatRequest:
        """The name, login and settings this app was started with (a race or the lobby), for the races it seats next."""
        start = self.start
        request = start.request if isinstance(start, RaceStart | LobbyStart) else SeatRequest()
        return request if request.resume is None else replace(request, name=request.resume.name)

    def follow(self, consumer: Consumer) -> None:
        """Hand the client's events to ``consumer`` from now on, those that arrived meanwhile first."""
        self.consumer = consumer
        self._consumer_ready.set()
        if self._following is None or self._following.is_finished:
            self._following = self.run_worker(self._follow(), name="follow", group="follow", exclusive=True)

    def hold_events(self) -> None:
        """Keep the events that arrive from now on until the next :meth:`follow` (a screen is being replaced)."""
        self.consumer = None
        self._consumer_ready.clear()

    async def _dispatch(self) -> None:
        """Hand each event, in order, to the screen in charge (waiting while there is none)."""
        while True:
            item = await self._inbox.get()
            await self._consumer_ready.wait()
            if self.consumer is None:
                continue
            try:
                await self.consumer.incoming(item)
            except NoMatches:
                if self.is_running:
                    raise
                # the app is closing: its screens' widgets were taken down while the event was being drawn

    async def _follow(self) -> None:
        client = self.client
        assert client is not None
        try:
            async for item in client.follow():
                self._inbox.put_nowait(item)
        except ConnectionLost as error:
            self.notify(words("term.connection.lost_because", error=error), severity="error", timeout=30)

    async def _drop_client(self) -> None:
        if self._following is not None:
            self._following.cancel()
            self._following = None
        while not self._inbox.empty():  # what the old connection sent concerns nobody now
            self._inbox.get_nowait()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()
            self.client = None

    async def _switch(self, screen: Screen[Any]) -> None:
        """Show ``screen`` alone (below any modal screens nothing stays)."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        await self.push_screen(screen)

    # --- the screens ---------------------------------------------------------------------------

    async def start_race(self, request: SeatRequest, *, auto: bool = False, client: RaceClient | None = None) -> None:
        """Take a seat (on ``client``, or a new connection) and show the race screen."""
        from cli.tui.race_screen import RaceScreen

        if client is None:
            client = await self.connect(None)
        session = RaceSession(client, self.store, clock_offset_ms=self._clock_offset_ms)
        lines = await session.open(request)
        self.session = session
        screen = RaceScreen(session, auto=auto)
        await self._switch(screen)
        for line in lines:
            screen.say(line.strip())
        self.follow(screen)

    async def start_watch(self, race: str) -> None:
        from cli.tui.spectate_screens import WatchScreen

        client = await self.connect("spectator")
        watching = await client.watch(race)
        screen = WatchScreen(watching, self._clock_offset_ms)
        await self._switch(screen)
        self.follow(screen)

    async def start_replay(self, race: str, speed: float | None) -> None:
        from cli.tui.spectate_screens import ReplayScreen

        client = self.client if self.client is not None and self.client.session is not None else await self.connect("spectator")
        first = await client.replay_page(race, limit=1)
        events: list[RaceEvent] = [event async for event in client.replay(race)]
        screen = ReplayScreen(RaceView.before_start(first.race), events, speed=speed or 1.0, autoplay=speed is not None)
        self.hold_events()
        await self._switch(screen)

    async def start_lobby(self, request: SeatRequest) -> None:
        """Show the lobby on a new connection, as ``request``'s name (logged in to its account, if any)."""
        from cli.tui.lobby_screen import LobbyScreen

        client = await self.connect(request.name, request.login)
        await client.watch_lobby()
        screen = LobbyScreen(client, await self.resumable_seat(client))
        await self._switch(screen)
        self.follow(screen)

    async def resumable_seat(self, client: RaceClient) -> SavedRace | None:
        """The newest seat saved for this server, unless its race is over (then it is forgotten): the lobby offers to
        resume only a race that can be."""
        checked: set[str] = set()  # a file that cannot be written keeps a forgotten seat: look at each once
        while (saved := self.store.find(server=self.server)) is not None and saved.race not in checked:
            checked.add(saved.race)
            try:
                page = await client.replay_page(saved.race, limit=1)
            except ServerError as error:
                if error.code != "unknown_race":
                    return saved  # not_finished: it runs (or waits) still
            else:
                if page.race.status not in OVER_STATUSES:
                    return saved
            self.store.forget(saved.race)
        return None

    async def race_from_lobby(self, how: dict[str, Any]) -> None:
        """The lobby's keys: join the selected race, create one, quick match, race a bot, or resume the saved seat."""
        base = self.seat_request()
        request = SeatRequest(
            name=base.name,
            settings=how.get("settings") or base.settings,
            join=how.get("join"),
            quick=bool(how.get("quick")),
            resume=how.get("resume"),
            login=base.login,
            bot=how.get("bot"),
        )
        await self._guarded(self._lobby_race(request))

    async def _lobby_race(self, request: SeatRequest) -> None:
        client = self.client
        if client is not None:
            with contextlib.suppress(ServerError, ConnectionLost):
                await client.unwatch_lobby()
        if request.resume is not None:
            await self.start_race(request)  # a resumed seat says hello with its own token: a new connection
        else:
            self.hold_events()  # until the race screen takes over the follower: its first events come early
            await self.start_race(request, client=client)

    async def _guarded(self, work: Awaitable[None]) -> None:
        """Run ``work``; a refusal becomes a notification instead of ending the app."""
        try:
            await work
        except (ServerError, ResumeError) as error:
            self.notify(str(error), severity="error", timeout=10)

    def after_result(self, race: str, choice: str) -> None:
        """The result screen's choice: ``replay``, ``lobby`` or ``quit`` (a rematch is handled in place)."""
        if choice == "replay":
            self.run_worker(self._guarded(self.start_replay(race, None)), group="open", exclusive=True)
        elif choice == "lobby":
            self.run_worker(self._guarded(self.start_lobby(self.seat_request())), group="open", exclusive=True)
        else:
            view = self.session.view if self.session is not None else None
            self._keep_summary()
            self.exit(race_exit_code(view.result, view.slot) if view is not None else EXIT_OK)

    def _keep_summary(self) -> None:
        """The race's result in a few lines, printed after the app so that it stays in the terminal's scrollback."""
        view = self.session.view if self.session is not None else None
        if view is None or view.result is None:
            return
        summary = words("term.race.summary", race=view.race_id, headline=view.result_headline())
        self.farewell += [summary, *("  " + line for line in view.standing_lines())]

    # --- leaving ---------------------------------------------------------------------------

    async def action_leave(self, code: int) -> None:
        """Ctrl-C / Ctrl-D / Ctrl-Q: give up a seat not yet raced, remember how to resume a running one, exit."""
        session = self.session
        view = session.view if session is not None else None
        self._keep_summary()
        if session is not None and view is not None and view.result is None:
            if view.status in OPEN_STATUSES:
                with contextlib.suppress(ConnectionLost, ServerError, TimeoutError):
                    async with asyncio.timeout(2):
                        await session.leave()
            elif view.status is RaceStatus.RUNNING:
                self.farewell.append(words("term.line.left_running", race=view.race_id))
        self.exit(code)

    async def on_unmount(self) -> None:
        await self._drop_client()

