"""``flowergarden daily`` against a server whose daily clock the test sets: play the counted attempt in line mode,
then, once the day is over, the leaderboard and the replay."""

from __future__ import annotations

import asyncio

from daily_helpers import TestClock, daily_server
from player_helpers import PASSWORD, new_handle, registered
from server_processes import flowergarden
from winning_lines import winning_deal

from server.app import RaceServer
from shared.daily import DAY_MS, day_of, day_start

__all__ = ["daily_server"]  # the fixture


async def run(*args: str, stdin: str = "") -> tuple[int, str]:
    process = flowergarden(*args, env={"FLOWERGARDEN_PASSWORD": PASSWORD})
    output, _ = await asyncio.to_thread(process.communicate, stdin, 60)
    return process.returncode, output


async def test_daily_play_clears_the_counted_attempt_and_the_board_shows_it_after_the_day(daily_server: tuple[RaceServer, TestClock]) -> None:
    server, clock = daily_server
    _, line = winning_deal()
    handle = new_handle("dee")
    await (await registered(server.url, handle)).close()
    day = day_of(clock.now)
    code, output = await run("daily", "play", "--server", server.url, "--login", handle, stdin="\n".join(["board", "QZ", *line]) + "\n")
    assert code == 0, output
    assert f"Daily deal of {day}: your counted attempt" in output and "refused:" in output  # QZ is no card
    assert "Attempt over: cleared: 52/52" in output
    code, output = await run("daily", "--server", server.url, "--login", handle)
    assert code == 0 and "Your attempt: cleared" in output and "open when the day ends" in output, output
    code, output = await run("daily", "board", "--day", day, "--server", server.url)
    assert code == 1 and "daily_not_over" in output, output
    clock.now = day_start(day) + DAY_MS
    code, output = await run("daily", "board", "--day", day, "--server", server.url)
    assert code == 0 and f"   1. {handle}" in output and "1 played, 1 cleared (100%)" in output, output
    code, output = await run("daily", "replay", handle, "--day", day, "--server", server.url)
    assert code == 0 and output.count(" s  ") == len(line), output
