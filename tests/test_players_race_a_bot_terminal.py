"""Racing one of the server's practice bots from the terminal, as the web page's **Race a bot** does: the lobby's
``b`` key in the full-screen app and ``flowergarden race --bot LEVEL`` (line mode here) create a private race and
call the bot into it; it plays, labelled a bot."""

from __future__ import annotations

from pathlib import Path

from race_helpers import server_config
from server_processes import flowergarden, read_until
from tui_helpers import SIZE, has_race_screen, race_screen, send_keys, shown, until

from cli.tui.app import FlowerGardenApp, LobbyStart
from cli.tui.lobby_screen import LobbyScreen
from client.race_session import SeatRequest
from client.sessions import SessionStore
from server.app import RaceServer
from shared.protocol import RaceStatus


async def test_the_lobbys_b_key_races_a_practice_bot_labelled_as_a_bot(redis_url: str, tmp_path: Path) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server:
        app = FlowerGardenApp(server.url, LobbyStart(SeatRequest(name="Bob")), store=SessionStore(tmp_path / "s.json"))
        async with app.run_test(size=SIZE) as pilot:
            await shown(pilot, LobbyScreen)
            send_keys(app, "b")
            await until(pilot, lambda: has_race_screen(app), what="the race screen")
            screen = race_screen(app)
            await until(pilot, lambda: screen.view.opponent is not None and bool(screen.view.opponent.label), timeout=30, what="the bot seated")
            opponent = screen.view.opponent
            assert opponent is not None and opponent.label.endswith("(bot)") and opponent.label.startswith("FlowerBot3_")
            await until(pilot, lambda: screen.view.status is not RaceStatus.WAITING, timeout=30, what="the countdown")
            record = await server.races.record(screen.view.race_id)  # type: ignore[union-attr]
            assert record.settings.private  # nobody else can take the seat meant for the bot


async def test_race_bot_plays_a_private_race_against_a_practice_bot_of_the_level_asked(redis_url: str, tmp_path: Path) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server:
        racer = flowergarden("race", "--server", server.url, "--name", "Cid", "--bot", "2", "--plain", env={"XDG_CONFIG_HOME": str(tmp_path)})
        try:
            assert "A practice bot of level 2 takes the other seat" in await read_until(racer, "practice bot", timeout=30)
            joined = await read_until(racer, "joined", timeout=30)
            assert "FlowerBot2_" in joined and "(bot)" in joined
        finally:
            racer.kill()
            racer.wait(10)


def test_race_bot_refuses_a_level_outside_1_to_5() -> None:
    racer = flowergarden("race", "--bot", "7")
    output, _ = racer.communicate(timeout=30)
    assert racer.returncode == 2 and "a bot's level is 1 to 5, not '7'" in output
