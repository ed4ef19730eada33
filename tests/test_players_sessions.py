"""Sessions can be revoked (issue 25.4): a fresh token at login and register (no session fixation), ``logout``,
``change_password`` that ends every other session of the account, and an absolute lifetime no ``hello`` renews."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from lobby_helpers import refused
from player_helpers import PASSWORD, new_handle, registered
from race_helpers import player, server_config
from server_processes import ROOT

from client import RaceClient
from server.app import RaceServer
from shared.protocol import RaceSettings

NEW_PASSWORD = "a much longer passphrase"


async def resumed(url: str, token: str) -> RaceClient:
    """A new connection that says hello with ``token``."""
    client = await RaceClient.connect(url)
    await client.hello("Again", token)
    return client


async def test_login_and_register_give_the_session_a_fresh_token_and_end_the_old_one(race_server: RaceServer) -> None:
    handle = new_handle("Ann")
    guest = await player(race_server.url, "Ann")
    planted = guest.token  # e.g. a token an attacker made the victim use (session fixation)
    reply = await guest.register(handle, PASSWORD)
    assert reply.token != planted and guest.token == reply.token
    with refused("bad_token"):
        await resumed(race_server.url, planted)
    seated = await guest.create(RaceSettings())  # the connection goes on under the new token
    again = await resumed(race_server.url, reply.token)
    assert again.session is not None and again.session.account == handle
    second = await player(race_server.url, "Other")
    before = second.token
    login = await second.login(handle, PASSWORD)
    assert login.token not in (before, reply.token)
    with refused("bad_token"):
        await resumed(race_server.url, before)
    await guest.leave(seated.race.race)
    await asyncio.gather(guest.close(), again.close(), second.close())


async def test_logout_ends_the_session_on_the_server(race_server: RaceServer) -> None:
    ann = await registered(race_server.url, new_handle("Ann"))
    token = ann.token
    await ann.logout()
    with refused("bad_token"):
        await resumed(race_server.url, token)
    await ann.hello("Guest")  # the connection goes on with a new session
    assert ann.session is not None and ann.session.account is None and ann.token != token
    await ann.close()


async def test_change_password_ends_every_other_session_of_the_account(race_server: RaceServer) -> None:
    handle = new_handle("Ann")
    laptop = await registered(race_server.url, handle)
    stolen = await player(race_server.url, "Thief")
    await stolen.login(handle, PASSWORD)
    thief_token = stolen.token
    await stolen.close()
    with refused("bad_credentials"):
        await laptop.change_password("not the password", NEW_PASSWORD)
    with refused("bad_field"):
        await laptop.change_password(PASSWORD, "short")
    await laptop.change_password(PASSWORD, NEW_PASSWORD)
    with refused("bad_token"):
        await resumed(race_server.url, thief_token)
    still = await resumed(race_server.url, laptop.token)  # this session goes on
    assert still.session is not None and still.session.account == handle
    fresh = await player(race_server.url, "Ann")
    with refused("bad_credentials"):
        await fresh.login(handle, PASSWORD)
    await fresh.login(handle, NEW_PASSWORD)
    guest = await player(race_server.url, "Guest")
    with refused("account_required"):
        await guest.change_password(PASSWORD, NEW_PASSWORD)
    await asyncio.gather(laptop.close(), still.close(), fresh.close(), guest.close())


async def test_a_session_ends_at_its_absolute_lifetime_however_often_it_says_hello(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, session_max_age_seconds=2)) as server:
        ann = await registered(server.url, new_handle("Ann"))
        token = ann.token
        for _ in range(3):  # each hello would renew a sliding lifetime for ever
            await asyncio.sleep(0.5)
            await (await resumed(server.url, token)).close()
        await asyncio.sleep(1.0)
        with refused("bad_token"):
            await resumed(server.url, token)
        await ann.close()


async def test_flowergarden_password_changes_it_and_ends_the_other_sessions(race_server: RaceServer) -> None:
    handle = new_handle("Ann")
    other = await registered(race_server.url, handle)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "FLOWERGARDEN_PASSWORD": PASSWORD, "FLOWERGARDEN_NEW_PASSWORD": NEW_PASSWORD}
    command = [sys.executable, "-m", "cli", "password", handle, "--server", race_server.url]
    done = await asyncio.to_thread(subprocess.run, command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "changed" in done.stdout
    with refused("bad_token"):
        await resumed(race_server.url, other.token)
    fresh = await player(race_server.url, "Ann")
    await fresh.login(handle, NEW_PASSWORD)
    await asyncio.gather(other.close(), fresh.close())
