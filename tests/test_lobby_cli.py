"""The lobby from the command line: ``flowergarden lobby`` lists open races, ``flowergarden race --invite`` joins one."""

from __future__ import annotations

import asyncio
import re

import pytest
from race_helpers import player
from server_processes import cli_player, flowergarden, read_until, resign_and_read

from client import ServerError
from server.app import RaceServer
from shared.protocol import Countdown, RaceSettings, Spectators, Started


async def test_lobby_command_lists_the_open_races(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    try:
        seated = await ann.create(RaceSettings(undo=True, time_limit=60))
        private = await ann.create(RaceSettings(private=True))
        process = flowergarden("lobby", "--server", race_server.url, "--once")
        output, _ = await asyncio.to_thread(process.communicate, timeout=20)
    finally:
        await ann.close()
    assert process.returncode == 0, output
    assert private.race.race not in output
    line = next(line for line in output.splitlines() if line.startswith(seated.race.race))
    assert "Ann" in line and "1/2" in line and "classic, undo, time limit 1:00" in line
    assert re.match(rf"\d+ open races? on {re.escape(race_server.url)}$", output.splitlines()[0]) and "(s)" not in output


async def test_race_command_joins_a_private_race_by_invite_code(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(private=True, seed=15))
    assert seated.race.invite is not None
    async with cli_player(ann, "race", "--server", race_server.url, "--name", "Bob", "--invite", seated.race.invite.lower()) as bob:
        assert bob.stdin is not None
        await ann.wait_for(Countdown)
        await ann.wait_for(Started)
        bob.stdin.write("resign\n")
        bob.stdin.flush()
        result, output = await resign_and_read(ann, seated.race.race, bob)
    assert [standing.name for standing in result.players] == ["Ann", "Bob"]
    assert "The creator CHOSE" in output and "Draw: both have 0/52 on foundations." in output
    assert output.index("The deal was seed 15") > output.index("Draw:")  # the seed is told with the result, not before


async def test_race_command_creates_a_race_nobody_may_watch(race_server: RaceServer) -> None:
    host = await player(race_server.url, "Wes")
    async with cli_player(host, "race", "--server", race_server.url, "--name", "Ann", "--spectators", "nobody") as ann:
        created = await read_until(ann, "seat 1 of race")  # 'You are Ann, seat 1 of race <id>.'
        race_id = created.split("seat 1 of race ", 1)[1].split(".", 1)[0]
        with pytest.raises(ServerError) as refused:
            await host.watch(race_id)
        assert refused.value.code == "no_spectators"
        assert (await race_server.races.record(race_id)).settings.spectators is Spectators.NOBODY  # type: ignore[union-attr]
