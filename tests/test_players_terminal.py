"""Accounts in the terminal client: ``race --login``/``--rated`` in the full-screen app and the line mode, the rating
change in the result words, account, guest and bot labels, ``--resume`` of a logged-in seat, and a rated quick
match's pairing followed into the partner's race."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from player_helpers import PASSWORD, new_handle, registered, set_rating
from race_helpers import player, server_config
from server_processes import flowergarden, read_until
from textual.markup import to_content
from textual.widgets import DataTable
from tui_helpers import SIZE, has_race_screen, race_screen, result_text, save_screenshot, shown, until

from cli.tui.app import FlowerGardenApp, LobbyStart, RaceStart
from cli.tui.lobby_screen import LobbyScreen
from client.race_session import Credentials, RaceSession, SeatRequest
from client.race_view import rating_text
from client.sessions import SessionStore
from server.app import RaceServer
from server.services.quick_match import RatingWindow
from shared.glicko2 import Game, Rating, update
from shared.protocol import RaceResult, RaceSettings, RaceStatus


async def test_a_logged_in_rated_race_in_the_app_ends_with_the_rating_change(race_server: RaceServer, tmp_path: Path) -> None:
    url = race_server.url
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    await (await registered(url, ann_handle)).close()
    bob = await registered(url, bob_handle)
    request = SeatRequest("someone", RaceSettings(rated=True, grace=1), login=Credentials(ann_handle, PASSWORD))
    app = FlowerGardenApp(url, RaceStart(request), store=SessionStore(tmp_path / "sessions.json"))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: has_race_screen(app) and race_screen(app).session.view is not None, what="the race screen")
            screen = race_screen(app)
            await until(pilot, lambda: any("You are" in line for line in screen.messages), what="the greeting")
            assert f"You are {ann_handle}, seat 1 of race {screen.view.race_id}." in screen.messages
            join = f"flowergarden race --server {url} --login HANDLE --join {screen.view.race_id}"  # a rated race seats accounts
            assert join in screen.messages
            await until(pilot, lambda: join in str(screen.query_one("#entry").render()), what="the join command on the screen")
            await bob.join(screen.view.race_id)
            await until(pilot, lambda: screen.view.status is RaceStatus.RUNNING, what="the start")
            await pilot.pause()
            opponent = str(screen.query_one("#opponent").render())
            assert bob_handle in opponent and "(guest)" not in opponent
            assert "rated, classic" in str(screen.query_one("#race-status").render())  # the screen says it is rated
            await bob.close()  # Bob's connection is gone for good: past the 1 s grace he abandons, which loses a rated race
            await until(pilot, lambda: bool(result_text(app)), timeout=20, what="the result screen")
            won, lost = update(Rating(), [Game(Rating(), 1.0)]), update(Rating(), [Game(Rating(), 0.0)])
            gain, loss = round(won.rating) - 1500, round(lost.rating) - 1500
            assert result_text(app) == (
                f"You win: the opponent abandoned the rated race. Your rating: 1500 -> {round(won.rating)}? ({gain:+d})."
            )
            standings = result_text(app, "standings").splitlines()
            assert standings[0].startswith(f"{ann_handle} (you) ") and standings[1] == f"  rating 1500 -> {round(won.rating)}? ({gain:+d})"
            assert standings[2].startswith(f"{bob_handle} ") and "(guest)" not in standings[2]
            assert standings[3] == f"  rating 1500 -> {round(lost.rating)}? ({loss:+d})"
            save_screenshot(app, "race-rated-result")
    finally:
        await bob.close()


async def test_the_lobby_tells_a_guest_using_a_handle_from_the_account_and_labels_bots(race_server: RaceServer, tmp_path: Path) -> None:
    url = race_server.url
    handle, bot_handle = new_handle("Ann"), new_handle("Bot")
    account = await registered(url, handle)
    bot = await player(url, bot_handle)
    await bot.register(bot_handle, bot=True)
    impostor = await player(url, handle)  # anonymous, with the account's handle as display name
    bot_race = await bot.create(RaceSettings())
    impostor_race = await impostor.create(RaceSettings())
    app = FlowerGardenApp(url, LobbyStart(SeatRequest(name="Cid")), store=SessionStore(tmp_path / "sessions.json"))
    try:
        async with app.run_test(size=SIZE) as pilot:
            lobby = await shown(pilot, LobbyScreen, "the lobby")
            table = lobby.query_one("#lobby-table", DataTable)

            def creator(race: str) -> str:
                return to_content(str(table.get_cell(race, "creator"))).plain

            await until(pilot, lambda: {bot_race.race.race, impostor_race.race.race} <= set(lobby.client.lobby), what="both races listed")
            await pilot.pause()
            assert creator(bot_race.race.race) == f"{bot_handle} (bot)"
            assert creator(impostor_race.race.race) == f"{handle} (guest)"
            save_screenshot(app, "lobby-labels")
    finally:
        for client in (account, bot, impostor):
            await client.close()


async def test_the_line_mode_races_logged_in_resumes_the_seat_and_prints_the_rating_change(race_server: RaceServer, tmp_path: Path) -> None:
    url = race_server.url
    ann_handle, bob_handle = new_handle("Ann"), new_handle("Bob")
    await (await registered(url, ann_handle)).close()
    bob = await registered(url, bob_handle)
    environment = {"XDG_CONFIG_HOME": str(tmp_path)}
    ann = flowergarden("race", "--plain", "--server", url, "--login", ann_handle, "--rated", env=environment)
    resumed = None
    try:
        assert ann.stdin is not None
        ann.stdin.write(PASSWORD + "\n")  # no $FLOWERGARDEN_PASSWORD and no terminal: the password is stdin's first line
        ann.stdin.flush()
        created = await read_until(ann, "seat 1 of race")
        found = re.search(rf"You are {ann_handle}, seat 1 of race (\S+)\.", created)
        assert found, created
        race_id = found.group(1)
        await bob.join(race_id)
        await read_until(ann, "Go!")
        ann.kill()  # the terminal is closed mid-race
        ann.wait(10)
        resumed = flowergarden("race", "--plain", "--resume", race_id, env=environment)
        assert resumed.stdin is not None
        assert f"Resumed race {race_id} as {ann_handle} (seat 1)." in await read_until(resumed, "Resumed race")  # still logged in
        await bob.resign(race_id)
        resumed.stdin.write("resign\n")
        resumed.stdin.flush()
        result = await bob.wait_for(RaceResult, timeout=15)
        output = await read_until(resumed, "Your rating", timeout=15)
        output += await read_until(resumed, bob_handle)  # the standings: Ann's line and rating, then Bob's
        output += await read_until(resumed, "rating")
        # Off the event loop: the server runs in this process and must answer the CLI's closing handshake (a blocking
        # wait here held the CLI in its 10 s close timeout, failing about one run in five).
        await asyncio.to_thread(resumed.wait, 10)
        own, other = result.players
        assert own.rating is not None and other.rating is not None
        assert f"Your rating: {rating_text(own.rating)}." in output, output
        assert re.search(rf"\n  {ann_handle} \(you\) .*\n    rating {re.escape(rating_text(own.rating))}\n", output), output
        assert re.search(rf"\n  {bob_handle} .*\n    rating {re.escape(rating_text(other.rating))}\n", output), output
        assert resumed.returncode == 4  # both resigned with 0/52: a draw's exit code
    finally:
        for process in (ann, resumed):
            if process is not None and process.poll() is None:
                process.kill()
        await bob.close()


async def test_a_rated_quick_match_pairing_moves_the_session_into_the_partners_race(redis_url: str, tmp_path: Path) -> None:
    window = RatingWindow(base=100, step_points=100, step_seconds=0.5, anyone_after_seconds=30)
    async with RaceServer(server_config(redis_url, rating_window=window, quick_match_retry_seconds=0.1)) as server:
        low, high = await registered(server.url, new_handle("Low")), await registered(server.url, new_handle("High"))
        await set_rating(server, low, 1300)
        await set_rating(server, high, 1650)  # 350 apart: both wait, then the widening window pairs them
        settings = RaceSettings(rated=True, time_limit=4325)
        store = SessionStore(tmp_path / "sessions.json")
        sessions = [RaceSession(client, store) for client in (low, high)]
        for session in sessions:
            lines = await session.open(SeatRequest(settings=settings, quick=True))
            assert session.queued and "Waiting for a player asking for the same settings ..." in lines
        queued = {session: session.race_id for session in sessions}
        said: dict[RaceSession, list[str]] = {session: [] for session in sessions}

        async def follow(session: RaceSession) -> None:
            async for item in session.client.follow():
                line = await session.handle(item)
                if line:
                    said[session].append(line)
                if session.view is not None and session.view.status is RaceStatus.RUNNING:
                    return

        async with asyncio.timeout(20):
            await asyncio.gather(*(follow(session) for session in sessions))
        moved = next(session for session in sessions if session.race_id != queued[session])
        stayed = next(session for session in sessions if session is not moved)
        assert moved.race_id == stayed.race_id == queued[stayed]
        assert f"Paired by rated quick match: race {queued[stayed]}." in said[moved]
        assert moved.view is not None and moved.view.slot == 1 and moved.view.board is not None and not moved.queued
        assert store.find(queued[moved]) is None and store.find(queued[stayed]) is not None
        for client in (low, high):
            await client.close()


async def test_the_lobby_logs_in_with_login(race_server: RaceServer) -> None:
    handle = new_handle("Ann")
    await (await registered(race_server.url, handle)).close()
    process = flowergarden("lobby", "--server", race_server.url, "--login", handle, "--once", env={"FLOWERGARDEN_PASSWORD": PASSWORD})
    output, _ = await asyncio.to_thread(process.communicate, timeout=30)
    assert process.returncode == 0, output
    assert f"(you are {handle})" in output.splitlines()[0]
    process = flowergarden("lobby", "--server", race_server.url, "--login", handle, "--once", env={"FLOWERGARDEN_PASSWORD": "wrong password"})
    output, _ = await asyncio.to_thread(process.communicate, timeout=30)
    assert process.returncode == 1 and "flowergarden: error [bad_credentials]" in output
