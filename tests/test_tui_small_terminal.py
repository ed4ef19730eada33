"""The full-screen app on an 80x24 terminal (and a large one): nothing cut off, nothing said lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_positions import position
from race_helpers import drop, player
from textual.widgets import DataTable, RichLog
from tui_helpers import (
    SIZES,
    SMALL,
    ann_in_the_app,
    result_text,
    save_screenshot,
    screen_lines,
    shown,
    until,
)

from cli.tui.app import FlowerGardenApp, LobbyStart
from cli.tui.dialogs import ResultScreen
from cli.tui.lobby_screen import LobbyScreen
from client.race_session import SeatRequest
from client.sessions import SessionStore
from server.app import RaceServer
from shared import card_text
from shared.protocol import RaceSettings

ON_BOTH_SIZES = pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])


def words_on_screen(lines: list[str]) -> str:
    """The screen's text with its lines joined by spaces (a wrapped line reads as one)."""
    return " ".join(" ".join(line.split()) for line in lines)


@ON_BOTH_SIZES
async def test_the_waiting_screen_shows_the_whole_join_command(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=size) as race:
        screen = race.screen
        command = f"flowergarden race --server {race_server.url} --join {screen.view.race_id}"
        await until(race.pilot, lambda: command in words_on_screen(screen_lines(race.app)), what="the join command on screen")
        save_screenshot(race.app, f"race-waiting-{size[0]}x{size[1]}")


@ON_BOTH_SIZES
async def test_a_thirteen_card_column_leaves_the_bouquet_and_every_card_on_screen(
    race_server: RaceServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    long_column = "KS QH JS TH 9S 8H 7S 6H 5S 4H 3S 2H AS"
    board = position(["", "", "", "", long_column, "KD QD"], bouquet="2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 2D 3D 4D 5D",
                     bury_rest_in=2)  # fmt: skip
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=size) as race:
        app, pilot, screen = race.app, race.pilot, race.screen
        screen.view.boards[screen.view.slot or 0] = board
        screen.redraw()
        await pilot.pause()
        text = words_on_screen(screen_lines(app))
        for card in [*board.columns[4], *board.bouquet]:
            assert card_text(card, unicode=True) in text, f"{card_text(card)} is off screen"
        assert "Bouquet" in text
        save_screenshot(app, f"race-long-column-{size[0]}x{size[1]}")


@ON_BOTH_SIZES
async def test_the_message_log_keeps_the_result_and_the_reconnection_and_the_result_panel_fits(
    race_server: RaceServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    async with ann_in_the_app(race_server.url, tmp_path, RaceSettings(seed=15), size=size) as race:
        app, pilot, screen, bob = race.app, race.pilot, race.screen, race.bob
        await race.start()
        await screen.play(screen.view.board.legal_moves()[0])  # type: ignore[union-attr]
        await bob.resign(screen.view.race_id)
        await screen.session.resign()
        await until(pilot, lambda: bool(result_text(app)), what="the result screen")
        headline = result_text(app)
        await until(pilot, lambda: headline in words_on_screen(screen_lines(app)), what="the result panel drawn")
        panel = words_on_screen(screen_lines(app))
        for part in ("Ann (guest, you)", "Bob (guest)", "resigned", "r rematch", "q quit", headline):
            assert part in panel, f"{part!r} is cut off the result panel"
        save_screenshot(app, f"race-result-{size[0]}x{size[1]}")
        assert isinstance(app.screen, ResultScreen) and app.client is not None
        drop(app.client)  # the race screen below the panel says the reconnection too
        await until(pilot, lambda: "Reconnected." in screen.messages, what="the reconnection said")
        assert headline in screen.messages  # still there: the log keeps everything said
        logged = [line.text for line in screen.query_one("#messages", RichLog).lines]
        assert any("Reconnected." in line for line in logged) and any(headline[:20] in line for line in logged)


async def test_the_lobby_at_80x24_shows_the_selected_races_settings_whole(race_server: RaceServer, tmp_path: Path) -> None:
    ann = await player(race_server.url, "Ann")
    app = FlowerGardenApp(race_server.url, LobbyStart(SeatRequest(name="Bob")), store=SessionStore(tmp_path / "s.json"))
    try:
        async with app.run_test(size=SMALL) as pilot:
            lobby = await shown(pilot, LobbyScreen)
            seated = await ann.create(RaceSettings(seed=15, time_limit=300, undo=True))
            race_id = seated.race.race
            table = lobby.query_one(DataTable)
            await until(pilot, lambda: race_id in [key.value for key in table.rows], what="the new race in the table")
            for _ in range(table.row_count):
                if lobby.selected_race() == race_id:
                    break
                await pilot.press("down")
            await pilot.pause()
            assert "classic, undo, time limit 5:00" in words_on_screen(screen_lines(app))
            save_screenshot(app, "lobby-80x24")
    finally:
        await ann.close()
