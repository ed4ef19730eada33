"""``flowergarden live``, ``watch`` and ``replay`` run as real processes against a real server."""

from __future__ import annotations

import asyncio

from race_helpers import play, seated_race
from server_processes import flowergarden
from winning_lines import winning_deal

from server.app import RaceServer
from server.services.race import new_race_id
from shared.protocol import RaceResult, RaceSettings, WatcherCount


async def run_to_end(*args: str) -> tuple[int, str]:
    process = flowergarden(*args)
    output, _ = await asyncio.to_thread(process.communicate, timeout=20)
    return process.returncode, output


def move_rows(output: str) -> list[tuple[str, str]]:
    """(player, move) of each printed move line, in order (``  Ann (guest)    AS b>f   1/52  playing``: a 24-wide name)."""
    rows = [row for row in output.splitlines() if row.startswith("  ") and row.rstrip().endswith(("playing", "won", "blocked"))]
    return [(row[2:26].strip(), " ".join(row[27:].split()[:2])) for row in rows]


async def test_live_watch_and_replay_commands_follow_a_race(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    url = race_server.url
    race = await seated_race(url, RaceSettings(seed=seed, spectator_delay=0))
    watcher = flowergarden("watch", race.race_id, "--server", url)
    try:
        await play(race.ann, race.race_id, line[:3])
        code, listing = await run_to_end("live", "--server", url)
        assert code == 0
        assert f"{race.race_id}  racing   Ann (guest) 3/52 (still playing)  vs  Bob (guest) 0/52 (still playing)" in listing

        await race.ann.wait_for(WatcherCount)  # the watch command is subscribed
        await play(race.bob, race.race_id, line[:2])
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        watched, _ = await asyncio.to_thread(watcher.communicate, timeout=20)
        assert watcher.returncode == 0, watched
        assert f"Watching race {race.race_id}" in watched
        assert [row for row in move_rows(watched) if row[0] == "Bob (guest)"] == [("Bob (guest)", move) for move in line[:2]]
        assert "Ann (guest) wins: more cards on foundations (3 to 2)." in watched
        assert "--- Ann (guest) (3/52) ---" in watched and "--- Bob (guest) (2/52) ---" in watched

        code, replayed = await run_to_end("replay", race.race_id, "--server", url)
        assert code == 0, replayed
        assert "The deal was seed 15" in replayed and "Go!" in replayed and "Ann (guest) wins: more cards on foundations (3 to 2)." in replayed
        assert move_rows(replayed) == [("Ann (guest)", move) for move in line[:3]] + [("Bob (guest)", move) for move in line[:2]]
    finally:
        if watcher.poll() is None:
            watcher.kill()
        await race.close()


async def test_replaying_a_race_still_running_is_refused(race_server: RaceServer) -> None:
    race = await seated_race(race_server.url, RaceSettings(seed=3))
    try:
        code, output = await run_to_end("replay", race.race_id, "--server", race_server.url)
        assert code == 1 and "[not_finished]" in output
    finally:
        await race.close()


def test_race_ids_are_letters_and_digits_so_a_command_line_takes_them_as_arguments() -> None:
    ids = {new_race_id() for _ in range(5000)}
    assert len(ids) == 5000
    assert all(len(race_id) == 11 and race_id.isascii() and race_id.isalnum() for race_id in ids)
