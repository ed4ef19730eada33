"""The practice bot: ``flowergarden bot`` registers a bot account, races a person through the ordinary protocol to a
result, and is labelled as a bot in the race, the lobby and the result."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from conftest import SpawnServers
from lobby_helpers import wait_until
from race_helpers import player
from server_processes import flowergarden
from winning_lines import winning_deal

from client.practice_bot import LEVELS, BotBrain
from server.app import RaceServer
from server.store import RaceStore, connect_redis
from shared import Board
from shared.protocol import PlayerJoined, RaceResult, RaceSettings, Started


async def test_a_bot_joins_a_race_plays_it_to_a_result_and_is_labelled_a_bot(race_server: RaceServer) -> None:
    seed, _line = winning_deal()
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=seed))
    race_id = seated.race.race
    bot = flowergarden("bot", "--server", race_server.url, "--level", "5", "--join", race_id, "--pace", "0")
    try:
        joined = await ann.wait_for(PlayerJoined, timeout=30)
        while joined.slot != 1:
            joined = await ann.wait_for(PlayerJoined, timeout=30)
        assert joined.bot and joined.account is not None and joined.account.startswith("Bot5_")
        await ann.wait_for(Started)
        await ann.resign(race_id)  # the bot wins as soon as it puts a card on a foundation
        result = await ann.wait_for(RaceResult, timeout=60)
        output, _ = await asyncio.to_thread(bot.communicate, timeout=60)
    finally:
        if bot.poll() is None:
            bot.kill()
        await ann.close()
    assert bot.returncode == 0, output
    assert result.players[1].bot and result.players[1].account == joined.account
    assert (result.winner, result.players[0].bot) == (1, False)
    assert f"race {race_id} over" in output


async def test_a_bot_waiting_in_the_lobby_is_listed_as_a_bot(race_server: RaceServer) -> None:
    watcher = await player(race_server.url, "watcher")
    await watcher.watch_lobby()
    bot = flowergarden("bot", "--server", race_server.url, "--level", "1", "--pace", "0")
    try:
        async def listed() -> bool:
            return any(entry.creator_bot for entry in watcher.lobby.values())

        await wait_until(listed, timeout=30, what="the bot's race in the lobby")
        entry = next(entry for entry in watcher.lobby.values() if entry.creator_bot)
        assert entry.creator_account is not None and entry.creator == entry.creator_account
    finally:
        bot.kill()
        bot.communicate()
        await watcher.close()


async def test_a_bot_mid_race_reconnects_after_its_server_restarts_and_plays_on_to_the_result(
    redis_url: str, spawn_servers: SpawnServers, tmp_path: Path
) -> None:
    """Issue 27.10: ``flowergarden bot`` used to end (or hang) when its server restarted. The server is stopped
    (SIGTERM, no drain: every client told to reconnect) while the bot is mid-race and started again on the same port;
    the bot resumes its session and moves on from the position the store has, and the race reaches its result."""
    seed, _line = winning_deal()
    # The bot registers a bot account, and the suite's logins and registrations from 127.0.0.1 all count in its one
    # Redis: after the account tests the address budgets refused the bot before it ever joined (seen in a full run).
    unlimited = tmp_path / "registrations.toml"
    unlimited.write_text("[login]\nregistrations_per_address = 0\nper_address = 0\noverall = 0\n")
    (first,) = await spawn_servers(1, "--sigterm-drain", "0", "--config", str(unlimited))
    ann = await player(first.url, "Ann")
    race_id = (await ann.create(RaceSettings(seed=seed))).race.race
    bot = flowergarden("bot", "--server", first.url, "--level", "1", "--join", race_id, "--pace", "0.3")
    store = RaceStore(connect_redis(redis_url, max_connections=2))
    try:
        await ann.wait_for(Started, timeout=60)

        async def bot_moves() -> int:
            return len(await store.actions(race_id, 1))

        await wait_until(lambda: _more_than(bot_moves, 0), timeout=60, what="the bot's first move")
        first.signal(signal.SIGTERM)
        assert await first.exited(timeout=30) == 0
        (second,) = await spawn_servers(1, "--port", str(first.port), "--config", str(unlimited))
        before_restart = await bot_moves()
        await wait_until(lambda: _more_than(bot_moves, before_restart), timeout=120, what="a bot move after the restart")
        await ann.reconnect(second.url)
        await ann.resign(race_id)  # the bot wins once it has a card on a foundation, else the race is drawn
        result = await ann.wait_for(RaceResult, timeout=120)
        output, _ = await asyncio.to_thread(bot.communicate, timeout=60)
    finally:
        if bot.poll() is None:
            bot.kill()
        await ann.close()
        await store.close()
        await store.redis.aclose()
    assert bot.returncode == 0, output
    assert f"race {race_id} over" in output, output
    assert result.players[1].bot


async def _more_than(count: Callable[[], Awaitable[int]], floor: int) -> bool:
    return await count() > floor


def test_the_strongest_level_follows_the_solvers_winning_line_to_a_clear() -> None:
    seed, _line = winning_deal()
    board = Board.deal(seed)
    brain = BotBrain(LEVELS[5])
    for _ in range(400):
        move = brain.choose(board)
        if move is None:
            break
        board.play(move)
    assert board.is_won()
