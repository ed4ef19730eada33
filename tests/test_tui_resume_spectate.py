"""The full-screen app taking a seat back after its process was killed, watching, replaying and the lobby."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from race_helpers import Race, drop, finished_race, play, player, seated_race
from server_processes import flowergarden, read_until
from textual.pilot import Pilot
from textual.widgets import DataTable
from tui_helpers import SIZES, SMALL, has_race_screen, race_screen, save_screenshot, send_keys, shown, type_move, until
from winning_lines import winning_deal

from cli.tui.app import FlowerGardenApp, LobbyStart, RaceStart, ReplayStart, WatchStart
from cli.tui.board import BoardWidget
from cli.tui.lobby_screen import LobbyScreen
from cli.tui.spectate_screens import ReplayScreen, WatchScreen
from client.race_session import RaceSession, SeatRequest
from client.sessions import SessionStore
from server.app import RaceServer
from shared.protocol import Back, Progress, RaceResult, RaceSettings, Started

ON_BOTH_SIZES = pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x45"])


@ON_BOTH_SIZES
async def test_a_killed_race_process_gets_its_seat_back_with_resume(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    seed, line = winning_deal()
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=seed))
    race_id = seated.race.race
    environment = {"XDG_CONFIG_HOME": str(tmp_path)}
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--join", race_id, env=environment)
    try:
        assert bob.stdin is not None
        await read_until(bob, "Go!")
        card, place = line[0].split()
        bob.stdin.write(f"{card.lower()} {place[-1]}\n")  # 'as f': a card and its destination, no source needed
        bob.stdin.flush()
        assert "1/52 on foundations" in await read_until(bob, "on foundations")
    finally:
        bob.kill()
        bob.wait(10)
    store = SessionStore(tmp_path / "flowergarden" / "sessions.json")
    saved = store.find(race_id)
    assert saved is not None and saved.slot == 1 and saved.name == "Bob"

    app = FlowerGardenApp(race_server.url, RaceStart(SeatRequest(resume=saved)), store=store)
    try:
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: has_race_screen(app) and race_screen(app).session.view is not None, what="the resumed race")
            screen = race_screen(app)
            assert screen.view.race_id == race_id and screen.view.slot == 1
            assert screen.view.board is not None and screen.view.board.foundation_count == 1
            await ann.wait_for(Back)
            await type_move(pilot, line[1])
            progress = await ann.wait_for(Progress)
            assert progress.slot == 1 and progress.count == 2
            save_screenshot(app, "race-resumed")
    finally:
        await ann.close()


@ON_BOTH_SIZES
async def test_watching_draws_both_boards_move_by_move(race_server: RaceServer, size: tuple[int, int]) -> None:
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, spectator_delay=0))
    app = FlowerGardenApp(race_server.url, WatchStart(race.race_id))
    try:
        async with app.run_test(size=size) as pilot:
            screen = await shown(pilot, WatchScreen)
            await play(race.ann, race.race_id, line[:4])
            await play(race.bob, race.race_id, line[:2])
            boards = [screen.query_one(f"#board-{slot}", BoardWidget) for slot in (0, 1)]
            await until(pilot, lambda: [board.board.foundation_count if board.board else -1 for board in boards] == [4, 2])
            assert "Ann (guest)  4/52  playing" in boards[0].title and "Bob (guest)  2/52  playing" in boards[1].title
            shown_title = str(boards[0].render()).splitlines()[0]
            assert shown_title == "Ann (guest)  4/52  playing  connected"  # no colour markup shown as text
            save_screenshot(app, "watch")
            await race.ann.resign(race.race_id)
            await race.bob.resign(race.race_id)
            await until(pilot, lambda: screen.view.result is not None)
            assert "Ann (guest) wins: more cards on foundations (4 to 2)." in str(screen.query_one("#spectator-message").render())
    finally:
        await race.close()


@asynccontextmanager
async def watching_a_delayed_race(url: str) -> AsyncIterator[tuple[Race, FlowerGardenApp, Pilot[None], WatchScreen]]:
    """The app watches a race with a 600 s spectator delay, two moves in: its status reads 'under way'."""
    seed, line = winning_deal()
    race = await seated_race(url, RaceSettings(seed=seed, spectator_delay=600))
    try:
        await play(race.ann, race.race_id, line[:2])
        app = FlowerGardenApp(url, WatchStart(race.race_id))
        async with app.run_test(size=SMALL) as pilot:
            screen = await shown(pilot, WatchScreen)
            await until(pilot, lambda: "under way" in str(screen.query_one("#spectator-status").render()))
            yield race, app, pilot, screen
    finally:
        await race.close()


async def test_watching_a_race_under_way_within_the_delay_says_so_not_waiting_for_an_opponent(race_server: RaceServer) -> None:
    async with watching_a_delayed_race(race_server.url) as (_, app, _, screen):
        status = str(screen.query_one("#spectator-status").render())
        assert "under way · shown 600 s late" in status and "waiting for an opponent" not in status
        assert "The race is under way: you see it 600 s late." in str(screen.query_one("#spectator-message").render())
        assert screen.view.boards == {}  # none of its moves before the delay
        save_screenshot(app, "watch-delayed")


async def test_watching_a_race_that_ended_while_the_connection_was_away_says_so_once_it_reconnects(race_server: RaceServer) -> None:
    """Within a 600 s delay no event tells the race ended: only the new watching reply's status_now, after a reconnect."""
    async with watching_a_delayed_race(race_server.url) as (race, app, pilot, screen):
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        assert app.client is not None
        drop(app.client)
        await until(pilot, lambda: "finished · shown 600 s late" in str(screen.query_one("#spectator-status").render()))
        assert "Reconnected." in str(screen.query_one("#spectator-message").render())


@ON_BOTH_SIZES
async def test_replay_steps_forward_and_back_and_plays_at_the_races_pace(race_server: RaceServer, size: tuple[int, int]) -> None:
    seed, line = winning_deal()
    race_id = await finished_race(race_server.url, RaceSettings(seed=seed), line[:3])
    app = FlowerGardenApp(race_server.url, ReplayStart(race_id))
    async with app.run_test(size=size) as pilot:
        screen = await shown(pilot, ReplayScreen)
        board = screen.query_one("#board-0", BoardWidget)
        await pilot.press("end")
        assert screen.view.result is not None and board.board is not None and board.board.foundation_count == 3
        assert "Ann (guest) wins: more cards on foundations (3 to 0)." in str(screen.query_one("#spectator-message").render())
        save_screenshot(app, "replay-end")
        moves = [index for index, event in enumerate(screen.events) if event.TYPE == "move"]
        await pilot.press("home")
        for _ in range(moves[1] + 1):
            await pilot.press("right")
        assert board.board is not None and board.board.foundation_count == 2
        await pilot.press("left")
        assert board.board.foundation_count == 1  # a fresh board drawn from the events before
        await pilot.press("home", "space")  # plays from the start at the race's pace
        await until(pilot, lambda: screen.position == len(screen.events), what="the replay to play through")
        assert screen.view.result is not None


@ON_BOTH_SIZES
async def test_the_lobby_lists_open_races_live_and_joins_the_selected_one(race_server: RaceServer, tmp_path: Path, size: tuple[int, int]) -> None:
    ann = await player(race_server.url, "Ann")
    app = FlowerGardenApp(race_server.url, LobbyStart(SeatRequest(name="Bob")), store=SessionStore(tmp_path / "s.json"))
    try:
        async with app.run_test(size=size) as pilot:
            lobby = await shown(pilot, LobbyScreen)
            await ann.create(RaceSettings(seed=3))  # listed first: the race joined is picked with the arrow keys
            seated = await ann.create(RaceSettings(seed=15, time_limit=300))
            race_id = seated.race.race
            table = lobby.query_one(DataTable)
            await until(pilot, lambda: race_id in [key.value for key in table.rows], what="the new race in the table")
            for _ in range(table.row_count):  # other tests' open races may be listed too (one Redis for the session)
                if lobby.selected_race() == race_id:
                    break
                await pilot.press("down")
            assert lobby.selected_race() == race_id and table.row_count >= 2
            assert table.get_cell(race_id, "status") == "waiting for an opponent"  # words, not the wire's 'waiting'
            if size[0] >= 110:
                assert table.max_scroll_x == 0  # every column fits the width: no horizontal scroll bar
            assert "classic, time limit 5:00" in str(lobby.query_one("#lobby-detail").render())  # whole at any width
            title = str(lobby.query_one("#lobby-title").render())
            assert re.search(r": \d+ open races?$", title.splitlines()[0]) and "race(s)" not in title
            save_screenshot(app, "lobby")
            send_keys(app, "j")
            await until(pilot, lambda: has_race_screen(app), what="the race screen")
            screen = race_screen(app)
            assert screen.view.race_id == seated.race.race and screen.view.slot == 1
            await ann.wait_for(Started)
            await until(pilot, lambda: screen.view.status == "running")
            assert screen.view.deadline is not None
            await until(pilot, lambda: "  ·  racing  ·  " in str(screen.query_one("#race-status").render()), what="the status in words")
    finally:
        await ann.close()


async def test_the_lobby_does_not_offer_to_resume_a_race_that_ended_meanwhile(race_server: RaceServer, tmp_path: Path) -> None:
    """A seat saved by a process that died before the result: the race ended without it, the lobby forgets the seat."""
    store = SessionStore(tmp_path / "s.json")
    ann = await player(race_server.url, "Ann")
    bob = await player(race_server.url, "Bob")
    try:
        session = RaceSession(ann, store)
        await session.open(SeatRequest("Ann", RaceSettings(seed=15)))
        race_id = session.race_id
        await bob.join(race_id)
        await ann.wait_for(Started)
        await ann.resign(race_id)  # sent past the session: it never sees the result, so the seat stays saved
        await bob.resign(race_id)
        await bob.wait_for(RaceResult)
        assert store.find(server=race_server.url) is not None
        app = FlowerGardenApp(race_server.url, LobbyStart(SeatRequest(name="Ann")), store=store)
        async with app.run_test(size=SMALL) as pilot:
            lobby = await shown(pilot, LobbyScreen)
            assert lobby.saved is None and "can be resumed" not in str(lobby.query_one("#lobby-title").render())
        assert store.find(server=race_server.url) is None
    finally:
        await ann.close()
        await bob.close()
