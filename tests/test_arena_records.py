"""An arena's results kept and exported on a real server: after its clock ran out the record is final, with the
table and each player's races; ``flowergarden export --arena`` writes it and ``flowergarden verify`` checks it, with
the server's signature; a forged standing is refused, and a forgery consistent with the rules is refused by the
signature."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lobby_helpers import wait_until
from player_helpers import new_handle, registered
from test_arena_play import paired_players

from cli.main import main
from server.app import RaceServer
from shared.protocol import ArenaPaired, Outcome, RaceResult, Started

ARENA_MS = 3_000
"""The arena's clock: long enough to pair once on a busy machine, short enough to run out within the test."""


async def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``flowergarden ARGS`` in this process (on a thread: it runs a loop of its own and may ask this test's server);
    its exit code and what it printed."""
    code = await asyncio.to_thread(main, list(args))
    printed = capsys.readouterr()
    return code, printed.out + printed.err


async def test_a_finished_arenas_record_is_kept_exported_verified_and_forgeries_are_refused(race_server: RaceServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert race_server.arenas is not None
    handles = [new_handle("ann"), new_handle("bob")]
    clients = [await registered(race_server.url, handle) for handle in handles]
    try:
        arena = await race_server.arenas.create("short arena", await race_server.arenas.now_ms(), ARENA_MS, time_limit=60)
        for client in clients:
            await client.arena_join(arena)
        (race,) = set((await paired_players(race_server, arena, 2)).values())
        for client in clients:  # paused while racing: the race still counts, no new pairing after it
            assert (await client.wait_for(ArenaPaired, timeout=20)).race == race
            await client.sync(race)
            await client.arena_pause(arena)
        for client in clients:
            await client.wait_for(Started)
            await client.resign(race)
        for client in clients:
            await client.wait_for(RaceResult)

        async def final() -> bool:
            return (await clients[0].arena_record(arena)).final

        await wait_until(final, timeout=30, what="the arena's final table")
        reply = await clients[1].arena_record(arena)
        assert [(line.handle in handles, line.score, line.games) for line in reply.standings] == [(True, 1, 1), (True, 1, 1)]
        assert sorted(player.handle for player in reply.players) == sorted(handles)
        assert all([(g.race, g.outcome, g.points) for g in player.games] == [(race, Outcome.DRAW, 1)] for player in reply.players)
        assert reply.signature is not None

        target = tmp_path / "arena.json"
        code, output = await run_cli(capsys, "export", "--server", race_server.url, "--arena", arena, "--output", str(target))
        assert code == 0, output
        code, output = await run_cli(capsys, "verify", str(target), "--key-url", race_server.url)
        assert code == 0 and "2 players, 1 races" in output and "final table" in output and "signed by the server" in output, output
        document: dict[str, Any] = json.loads(target.read_text())

        forged = json.loads(json.dumps(document))
        forged["standings"][0]["score"] = 3  # a forged standing: the races give 1
        target.write_text(json.dumps(forged))
        code, output = await run_cli(capsys, "verify", str(target))
        assert code == 1 and "record_invalid" in output and "standing 1" in output, output

        forged = json.loads(json.dumps(document))  # the draw made a win, consistently on both sides and in the table
        winner, loser = forged["players"]
        winner["games"][0] |= {"outcome": "won", "points": 2}
        loser["games"][0] |= {"outcome": "lost", "points": 0}
        forged["standings"] = [
            {"rank": 1, "handle": winner["handle"], "score": 2, "performance": round(loser["rating"]), "fire": False, "games": 1},
            {"rank": 2, "handle": loser["handle"], "score": 0, "performance": 0, "fire": False, "games": 1},
        ]
        target.write_text(json.dumps(forged))
        code, output = await run_cli(capsys, "verify", str(target))
        assert code == 0, output  # the rules alone cannot tell: the races' own records can, and the signature does
        code, output = await run_cli(capsys, "verify", str(target), "--key-url", race_server.url)
        assert code == 1 and "signature does not match" in output, output
    finally:
        for client in clients:
            await client.close()
