"""The race screen's keys: a help screen, a footer that follows the state, the redeal asked first, the move list's
first Enter, undo kept by auto-move, and the summary left in the scrollback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from race_helpers import player
from server_processes import flowergarden
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input
from tui_helpers import (
    SIZES,
    SMALL,
    ann_in_the_app,
    has_race_screen,
    own_actions,
    race_screen,
    result_text,
    save_screenshot,
    screen_lines,
    shown,
    until,
)

from cli.tui.app import FlowerGardenApp, LobbyStart
from cli.tui.dialogs import Confirm, HelpScreen, SettingsScreen
from cli.tui.lobby_screen import LobbyScreen
from client.race_session import SeatRequest
from client.sessions import SessionStore
from server.app import RaceServer
from shared import move_text
from shared.protocol import RaceSettings


def footer(app: object) -> str:
    """The footer: the screen's last line."""
    return screen_lines(app)[-1]  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])
async def test_question_mark_opens_the_keys_and_the_footer_offers_what_works_now(
    race_server: RaceServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15, undo=True), size=size) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        await pilot.pause()
        waiting = footer(app)
        assert "undo" not in waiting and "resign" not in waiting and "help" in waiting  # nothing to play yet
        await pilot.press("question_mark")
        help_screen = await shown(pilot, HelpScreen, "the help screen")
        text = " ".join(screen_lines(app))
        for key in ("auto-move", "declare stuck", "redeal", "Ctrl-Q", "rematch"):
            assert key in text, f"{key!r} missing from the help screen"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, what="the help closed")
        assert not help_screen.is_attached
        await race.start()
        await until(pilot, lambda: "undo" in footer(app) and "resign" in footer(app), what="the race's keys in the footer")
        assert "redeal" not in footer(app)  # this race has no redeal


async def test_the_redeal_asks_first(race_server: RaceServer, tmp_path: Path) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15, redeal_once=True), size=SMALL) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        await race.start()
        await until(pilot, lambda: "redeal" in footer(app), what="the redeal offered")
        await pilot.press("e")
        await shown(pilot, Confirm, "the redeal's question")
        assert "Redeal the columns?" in " ".join(screen_lines(app))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert screen.view.board is not None and not screen.view.board.redeal_used
        await pilot.press("e")
        await shown(pilot, Confirm, "the redeal's question")
        await pilot.press("y")
        await until(pilot, lambda: screen.view.board is not None and screen.view.board.redeal_used, what="the redeal")
        await until(pilot, lambda: "redeal" not in footer(app), what="the redeal gone from the footer")


async def test_the_move_lists_first_enter_plays_the_first_move(race_server: RaceServer, tmp_path: Path) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=SMALL) as race:
        pilot, screen = race.pilot, race.screen
        await race.start()
        board = screen.view.board
        assert board is not None
        first = board.legal_moves()[0]
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: len(own_actions(screen)) == 1, what="the first listed move played")
        assert own_actions(screen) == [move_text(first)]


async def test_auto_move_does_not_replay_the_card_an_undo_took_back(race_server: RaceServer, tmp_path: Path) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15, undo=True), auto=True, size=SMALL) as race:
        pilot, screen = race.pilot, race.screen
        await race.start()
        await until(pilot, lambda: own_actions(screen) == ["AS b>f"], what="the ace of spades sent home by auto-move")
        await until(pilot, lambda: screen._auto_worker is None or screen._auto_worker.is_finished)
        await pilot.press("u")
        await until(pilot, lambda: screen.view.board is not None and screen.view.board.undos == 1, what="the undo")
        await pilot.pause()
        await until(pilot, lambda: screen._auto_worker is None or screen._auto_worker.is_finished, what="auto-move done")
        assert screen.view.board is not None and screen.view.board.foundation_count == 0, own_actions(screen)
        assert any("Auto-move waits" in line for line in screen.messages)


async def test_quitting_after_the_result_leaves_a_summary_and_the_outcomes_exit_code(race_server: RaceServer, tmp_path: Path) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=SMALL) as race:
        app, pilot, screen, bob = race.app, race.pilot, race.screen, race.bob
        await race.start()
        await bob.resign(screen.view.race_id)
        await screen.session.resign()
        await until(pilot, lambda: bool(result_text(app)), what="the result screen")
        headline = result_text(app)
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running or app.return_value is not None, what="the app's exit")
    assert app.return_value == 4  # a draw's exit code (run_and_exit_code returns it)
    assert app.farewell[0] == f"Race {screen.view.race_id}: {headline}"
    assert any("Bob (guest)" in line for line in app.farewell[1:])


async def test_flowergarden_server_sets_the_default_server(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        process = flowergarden("lobby", "--once", env={"FLOWERGARDEN_SERVER": race_server.url})
        output, _ = await asyncio.to_thread(process.communicate, timeout=30)
        assert process.returncode == 0 and f"on {race_server.url}" in output.splitlines()[0], output
        process = flowergarden("lobby", "--once", env={"FLOWERGARDEN_SERVER": "nowhere"})
        output, _ = await asyncio.to_thread(process.communicate, timeout=30)
        assert process.returncode == 2 and "'nowhere' is not a server URL" in output
    finally:
        await ann.close()


async def click_create(pilot: Pilot[None], dialog: SettingsScreen) -> None:
    """Click the dialog's Create button where it is now: an error line above it may have pushed it down, out of the
    dialog's visible part at 80x24 (a click at its old place then hits nothing)."""
    dialog.query_one("#create").scroll_visible(animate=False)
    await pilot.pause()
    await pilot.click("#create")


async def test_c_in_the_lobby_asks_for_the_settings_then_creates_the_race(race_server: RaceServer, tmp_path: Path) -> None:
    app = FlowerGardenApp(race_server.url, LobbyStart(SeatRequest(name="Ann")), store=SessionStore(tmp_path / "s.json"))
    async with app.run_test(size=SMALL) as pilot:
        await shown(pilot, LobbyScreen)
        await pilot.press("c")
        dialog = await shown(pilot, SettingsScreen, "the settings dialog")
        text = " ".join(screen_lines(app))
        for setting in ("foundation-only", "Time limit", "undo", "redeal", "private", "rated", "Spectator delay"):
            assert setting in text, f"{setting!r} is not on the dialog at 80x24"
        save_screenshot(app, "lobby-settings-80x24")
        dialog.query_one("#time-limit", Input).value = "90000"
        dialog.query_one("#undo", Checkbox).value = True
        await click_create(pilot, dialog)
        await until(pilot, lambda: "time limit is a whole number" in str(dialog.query_one("#settings-error").render()))
        dialog.query_one("#time-limit", Input).value = "300"
        dialog.query_one("#rated", Checkbox).value = True
        await click_create(pilot, dialog)
        await until(pilot, lambda: "--login" in str(dialog.query_one("#settings-error").render()), what="rated refused to a guest")
        dialog.query_one("#rated", Checkbox).value = False
        await click_create(pilot, dialog)
        await until(pilot, lambda: has_race_screen(app), what="the race screen")
        view = race_screen(app).view
        assert view.rules.undo and not view.rated
        bob = await player(race_server.url, "Bob")
        try:
            listed = {entry.race: entry for entry in (await bob.watch_lobby()).races}
            assert listed[view.race_id].settings.time_limit == 300 and listed[view.race_id].settings.undo
        finally:
            await bob.close()
