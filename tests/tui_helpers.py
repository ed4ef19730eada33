"""Helpers of the full-screen app tests: waiting on a headless app, typing moves, saving screenshots."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from cli.tui.app import FlowerGardenApp, RaceStart
from cli.tui.race_screen import RaceScreen
from client import RaceClient
from client.race_session import SeatRequest
from client.sessions import SessionStore
from shared.protocol import RaceSettings, RaceStatus

ROOT = Path(__file__).resolve().parent.parent
S = TypeVar("S", bound=Screen[Any])

SCREENSHOTS = Path(os.environ.get("FLOWERGARDEN_SCREENSHOTS", ROOT / "var" / "screenshots"))
"""Where the tests save SVG screenshots of the main screens (``var/`` is ignored by git)."""
SIZE = (110, 34)
"""The terminal size the app tests run at by default."""
SMALL, LARGE = (80, 24), (160, 45)
SIZES = [SMALL, LARGE]
"""The sizes every screen must work at: the classic 80x24 terminal, and a large one."""


async def until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10.0, what: str = "the condition") -> None:
    """Let the app run until ``condition()`` holds; fails after ``timeout`` seconds (never a timing assertion)."""
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.005)  # the app runs in this loop: a plain sleep lets it work
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}; the app's message line, if any: {_message_now(pilot)!r}") from None


async def shown(pilot: Pilot[Any], kind: type[S], what: str = "the screen") -> S:
    """Wait until the app shows a screen of type ``kind``, drawn; that screen."""
    await until(pilot, lambda: isinstance(pilot.app.screen, kind) and pilot.app.screen.is_mounted, what=what)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, kind)
    return screen


def _message_now(pilot: Pilot[Any]) -> str:
    """What the race screen's message line shows now ('' without a race screen), for failure messages."""
    return message_text(race_screen(pilot.app)) if has_race_screen(pilot.app) else ""


def race_screen(app: App[Any]) -> RaceScreen:
    """The race screen (below any modal screen)."""
    for screen in reversed(app.screen_stack):
        if isinstance(screen, RaceScreen):
            return screen
    raise AssertionError(f"no race screen in {app.screen_stack}")


def has_race_screen(app: App[Any]) -> bool:
    return any(isinstance(screen, RaceScreen) for screen in app.screen_stack)


@dataclass
class AppRace:
    """Ann in the full-screen app (headless), Bob a plain client of the same server."""

    app: FlowerGardenApp
    pilot: Pilot[Any]
    screen: RaceScreen
    bob: RaceClient

    async def start(self) -> None:
        """Bob joins; wait until the race runs on Ann's screen."""
        await self.bob.join(self.screen.view.race_id)
        await until(self.pilot, lambda: self.screen.view.status is RaceStatus.RUNNING, what="the start")


@contextlib.asynccontextmanager
async def ann_in_the_app(
    url: str, folder: Path, settings: RaceSettings, *, auto: bool = False, size: tuple[int, int] = SIZE
) -> AsyncIterator[AppRace]:
    """Ann creates a race with ``settings`` in the app (its saved seats under ``folder``), on a terminal of ``size``;
    Bob is connected."""
    app = FlowerGardenApp(url, RaceStart(SeatRequest("Ann", settings), auto=auto), store=SessionStore(folder / "sessions.json"))
    bob = await RaceClient.connect(url)
    await bob.hello("Bob")
    try:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: has_race_screen(app) and race_screen(app).session.view is not None, what="the race screen")
            await pilot.pause()  # drawn
            yield AppRace(app, pilot, race_screen(app), bob)
    finally:
        await bob.close()


def send_keys(app: App[Any], *keys: str) -> None:
    """Post key presses (printable keys) to the app as a terminal would, without Pilot's idle waits per key
    (about 50 ms each on a loaded machine): a race typed key by key stays a few seconds long."""
    for key in keys:
        app.post_message(events.Key(key, key))


async def type_move(pilot: Pilot[Any], move: str) -> bool:
    """Type ``move`` (``5D b>3``) as a player would: its card, then the destination key only if several light up.

    Returns whether several destinations lit up. Waits until the move is on the board.
    """
    screen = race_screen(pilot.app)
    before = len(own_actions(screen))
    card, places = move.split()
    send_keys(pilot.app, *card.lower())
    await until(pilot, lambda: bool(screen.choices) or len(own_actions(screen)) > before or "Refused" in message_text(screen))
    several = bool(screen.choices)
    if several:
        send_keys(pilot.app, places.split(">")[1].lower())
    await until(pilot, lambda: len(own_actions(screen)) > before, what=f"{move} on the board")
    return several


def own_actions(screen: RaceScreen) -> list[str]:
    """The actions on the player's own board, in order."""
    view = screen.view
    return view.actions.get(view.slot or 0, [])


def result_text(app: App[Any], part: str = "headline") -> str:
    """The result screen's ``headline``, ``standings`` or ``note`` ('' until the result screen is drawn)."""
    from textual.widgets import Static

    from cli.tui.dialogs import ResultScreen

    screen = app.screen
    if not isinstance(screen, ResultScreen):
        return ""
    found = screen.query(f"#result-{part}")
    return str(found.first(Static).render()) if found else ""


def message_text(screen: RaceScreen) -> str:
    """What the race screen said last on its message log ('' before anything)."""
    return screen.messages[-1] if screen.messages else ""


def save_screenshot(app: App[Any], name: str) -> Path:
    """An SVG screenshot of the app now, as ``<SCREENSHOTS>/<name>.svg``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.svg"
    path.write_text(app.export_screenshot(title=name), encoding="utf-8")
    return path


def screen_lines(app: App[Any]) -> list[str]:
    """The text of the screen on top as the terminal shows it, line by line (what fits; nothing past the edges)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App[Any]) -> str:
    """:func:`screen_lines` as one text."""
    return "\n".join(screen_lines(app))
