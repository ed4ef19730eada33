"""``flowergarden tournament`` on a real server: ``list`` shows the listed arenas; a terminal player joins an arena,
is paired with a player of the protocol's client, plays the race in line mode, sees the standings pushed, and is
paused at end of input; ``watch`` prints the standings as they are pushed."""

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


async def test_list_shows_the_listed_arenas_by_status(race_server: RaceServer) -> None:
    assert race_server.races is not None and race_server.arenas is not None
    now = await race_server.races.now_ms()
    running = await race_server.arenas.create("hourly blitz", now, 600_000, private=False)
    upcoming = await race_server.arenas.create("tonight", now + 3_600_000, 600_000, 120, private=False)
    listing = flowergarden("tournament", "list", "--server", race_server.url)
    output, _ = await asyncio.to_thread(listing.communicate, None, 30)
    assert listing.returncode == 0, output
    upcoming_part, running_part = output.split("Running:")[0], output.split("Running:")[1].split("Finished:")[0]
    assert f'Arena {upcoming} "tonight": starts in ' in upcoming_part and "races of 120 s" in upcoming_part, output
    assert f'Arena {running} "hourly blitz": ' in running_part and " left, races of 300 s, 0 players" in running_part, output


async def test_a_terminal_player_joins_an_arena_is_paired_plays_and_is_paused_at_end_of_input(race_server: RaceServer) -> None:
    ann_handle, bob_handle = new_handle("ann"), new_handle("bob")
    ann = await registered(race_server.url, ann_handle)
    await (await registered(race_server.url, bob_handle)).close()
    arena = (await ann.arena_create("terminal arena", minutes=10, time_limit=120)).arena.arena
    env = {"FLOWERGARDEN_PASSWORD": PASSWORD}
    watching = flowergarden("tournament", "watch", arena, "--server", race_server.url)
    bob = flowergarden("tournament", "join", arena, "--server", race_server.url, "--login", bob_handle, env=env)
    try:
        joined = await read_until(bob, "Waiting for a pairing", timeout=90)  # a process start and a login: slow on a busy machine
        assert f"Arena {arena} \"terminal arena\"" in joined and "races of 120 s" in joined, joined
        await read_until(watching, f"Arena {arena}", timeout=30)
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
        await until_standing(watching, ann_handle, "1 pt ")  # the spectator's terminal got the push too
        watched = flowergarden("tournament", "watch", arena, "--once", "--server", race_server.url)
        listing, _ = await asyncio.to_thread(watched.communicate, None, 30)
        assert watched.returncode == 0 and ann_handle in listing and bob_handle in listing, listing
        output, _ = await asyncio.to_thread(bob.communicate, "", 30)  # end of input (maybe in a second race): paused
        assert f"Paused in arena {arena}" in output and bob.returncode == 5, output
    finally:
        for process in (bob, watching):
            if process.poll() is None:
                process.kill()
        await ann.close()
