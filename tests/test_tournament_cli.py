"""``flowergarden tournament`` on a real server: a terminal player joins an arena, is paired with a player of the
protocol's client, plays the race in line mode, sees the standings pushed, and is paused at end of input; ``watch``
prints the standings."""

from __future__ import annotations

import asyncio
import subprocess

from player_helpers import PASSWORD, new_handle, registered
from server_processes import flowergarden, read_until

from server.app import RaceServer
from shared.protocol import ArenaPaired, RaceResult, Started


async def until_standing(process: subprocess.Popen[str], handle: str, text: str) -> None:
    """Read the printed standings until ``handle``'s line says ``text`` (earlier pushes may show the table before)."""
    seen = ""
    for _ in range(20):
        seen += await read_until(process, f". {handle} ", timeout=30)
        if text in seen.rsplit(f". {handle} ", 1)[1]:
            return
    raise AssertionError(f"{handle}'s standing never said {text!r}: {seen}")


async def test_a_terminal_player_joins_an_arena_is_paired_plays_and_is_paused_at_end_of_input(race_server: RaceServer) -> None:
    ann_handle, bob_handle = new_handle("ann"), new_handle("bob")
    ann = await registered(race_server.url, ann_handle)
    await (await registered(race_server.url, bob_handle)).close()
    arena = (await ann.arena_create("terminal arena", minutes=10, time_limit=120)).arena.arena
    env = {"FLOWERGARDEN_PASSWORD": PASSWORD}
    bob = flowergarden("tournament", "join", arena, "--server", race_server.url, "--login", bob_handle, env=env)
    try:
        joined = await read_until(bob, "Waiting for a pairing", timeout=30)
        assert f"Arena {arena} \"terminal arena\"" in joined and "races of 120 s" in joined, joined
        await ann.arena_join(arena)
        paired = await ann.wait_for(ArenaPaired, timeout=30)
        await ann.sync(paired.race)
        await read_until(bob, f"Paired: race {paired.race}", timeout=30)
        await ann.wait_for(Started, timeout=30)
        assert bob.stdin is not None
        bob.stdin.write("resign\n")
        bob.stdin.flush()
        await read_until(bob, "resigned", timeout=30)
        await ann.resign(paired.race)
        result = await ann.wait_for(RaceResult, timeout=30)
        assert result.winner is None  # both resigned with nothing on the foundations: a draw, a point each
        await read_until(bob, "Waiting for a pairing", timeout=30)  # back in the arena for the next race
        await until_standing(bob, ann_handle, "1 pt ")  # pushed: the draw booked
        watched = flowergarden("tournament", "watch", arena, "--once", "--server", race_server.url)
        listing, _ = await asyncio.to_thread(watched.communicate, None, 30)
        assert watched.returncode == 0 and ann_handle in listing and bob_handle in listing, listing
        output, _ = await asyncio.to_thread(bob.communicate, "", 30)  # end of input while waiting: paused
        assert f"Paused in arena {arena}" in output and bob.returncode == 5, output
    finally:
        if bob.poll() is None:
            bob.kill()
        await ann.close()
