"""The line mode of ``flowergarden race`` through pipes, as scripts use it: moves piped in before the deal wait for it,
the exit code says the outcome, ``--json`` prints one object per line, and a closed stdout ends it quietly."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from race_helpers import player
from server_processes import flowergarden, read_until

from server.app import RaceServer
from shared.protocol import RaceSettings, Started


def send(process: subprocess.Popen[str], text: str) -> None:
    """Lines on the process's stdin."""
    assert process.stdin is not None
    process.stdin.write(text)
    process.stdin.flush()


async def ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit code and the rest of the output, once the process ended by itself."""
    if process.stdin is not None and process.stdin.closed:
        process.stdin = None  # closed by the test already: communicate would flush it
    output, _ = await asyncio.to_thread(process.communicate, timeout=20)
    return process.returncode, output or ""


async def test_moves_piped_before_the_deal_are_played_once_the_race_runs(race_server: RaceServer) -> None:
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--seed", "15")
    ann = await player(race_server.url, "Ann")
    try:
        waiting = await read_until(bob, "Waiting for an opponent")
        send(bob, "as f\n")  # the ace of spades to its foundation, typed before anyone joined
        race_id = waiting.split("--join ")[1].split()[0]
        await ann.join(race_id)
        output = await read_until(bob, "on foundations", timeout=20)
        assert "1/52 on foundations" in output and "No deal yet" not in output
        assert bob.stdin is not None
        bob.stdin.close()  # end of input mid-race: left early, the seat kept
        code, rest = await ended(bob)
        assert code == 5 and "takes it back" in rest
    finally:
        if bob.poll() is None:
            bob.kill()
        await ann.close()


@pytest.mark.parametrize(("outcome", "exit_code"), [("won", 0), ("lost", 3), ("draw", 4)])
async def test_the_exit_code_says_the_outcome(race_server: RaceServer, outcome: str, exit_code: int) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=15))
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--join", seated.race.race)
    try:
        await read_until(bob, "Go!", timeout=20)
        await ann.wait_for(Started)
        if outcome == "won":
            send(bob, "as f\n")
            await read_until(bob, "1/52 on foundations")
        elif outcome == "lost":
            await ann.move(seated.race.race, "AS b>f")
        await ann.resign(seated.race.race)
        send(bob, "resign\n")
        code, output = await ended(bob)
        assert code == exit_code, output
    finally:
        if bob.poll() is None:
            bob.kill()
        await ann.close()


async def test_json_prints_one_object_per_line_ending_with_the_outcome(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=15))
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--join", seated.race.race, "--json")
    try:
        await read_until(bob, '"type": "started"', timeout=20)
        send(bob, "as f\nzz\n")
        await read_until(bob, '"type": "refused"')
        await ann.resign(seated.race.race)
        send(bob, "resign\n")
        code, rest = await ended(bob)
        assert code == 0, rest
    finally:
        if bob.poll() is None:
            bob.kill()
        await ann.close()
    documents = [json.loads(line) for line in rest.splitlines()]
    types = [document["type"] for document in documents]
    assert "result" in types and types[-1] == "outcome"
    assert documents[-1] == {"type": "outcome", "outcome": "won", "exit_code": 0}
    result = documents[types.index("result")]
    assert result["winner"] == 1 and result["race"] == seated.race.race


async def test_json_moves_and_boards_are_objects(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=15))
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--join", seated.race.race, "--json")
    try:
        before = await read_until(bob, '"type": "started"', timeout=20)
        send(bob, "as f\n")
        after = await read_until(bob, '"type": "moved"')
    finally:
        bob.kill()
        await ann.close()
    documents = [json.loads(line) for line in (before + after).splitlines()]  # every line is one JSON object
    kinds = {document["type"] for document in documents}
    assert {"said", "countdown", "board", "started", "moved"} <= kinds
    moved = documents[-1]
    assert moved["move"] == "AS b>f" and moved["count"] == 1
    board = [document for document in documents if document["type"] == "board"][-1]["board"]
    assert board["foundation_count"] == 1


async def test_a_closed_stdout_ends_the_line_mode_quietly(race_server: RaceServer) -> None:
    """``flowergarden race ... | head -1``: the reader goes away; the race's next line ends the process, exit 141
    (as Unix tools do), no error about the server and no traceback."""
    bob = flowergarden("race", "--server", race_server.url, "--name", "Bob", "--seed", "15", stderr=subprocess.PIPE)
    ann = await player(race_server.url, "Ann")
    try:
        waiting = await read_until(bob, "Waiting for an opponent")
        assert bob.stdout is not None
        bob.stdout.close()  # head has read what it wanted
        await ann.join(waiting.split("--join ")[1].split()[0])  # the countdown and the board are printed next
        _, errors = await asyncio.to_thread(bob.communicate, timeout=20)
        assert bob.returncode == 141
        assert "connection_failed" not in errors and "Traceback" not in errors and not errors.strip(), errors
    finally:
        if bob.poll() is None:
            bob.kill()
        await ann.close()
