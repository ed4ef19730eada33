"""The positions a server process keeps for the races played on it (issue 24 item 5).

Each move is checked against the process's copy of the player's position. The copies of finished races used to stay
until a 10,000-game bound pushed them out (~56 KB a race: +1.4 MB a minute in a soak, a few hundred MB a process at
the plateau). A race's positions now go when it ends — at once when this process stored the result, after the next
timer tick when a time limit (or another process) ended it — and ``flowergarden_cached_positions`` shows the count.
"""

from __future__ import annotations

import asyncio

from ops_helpers import http_base, scrape, value
from race_helpers import play, seated_race
from winning_lines import winning_deal

from server.app import RaceServer
from shared.protocol import RaceResult, RaceSettings


async def _cached(server: RaceServer) -> float:
    return value(await scrape(http_base(server.url)), "flowergarden_cached_positions")


async def test_the_positions_of_a_race_go_when_its_result_is_stored_here_and_metrics_show_them(race_server: RaceServer) -> None:
    assert race_server.races is not None
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed))
    try:
        await play(race.ann, race.race_id, line[:2])
        await play(race.bob, race.race_id, line[:1])
        assert race_server.races.cached_positions == 2
        assert await _cached(race_server) == 2
        await race.ann.resign(race.race_id)
        await race.bob.resign(race.race_id)
        await race.ann.wait_for(RaceResult)
        assert race_server.races.cached_positions == 0
        assert await _cached(race_server) == 0
    finally:
        await race.close()


async def test_the_positions_of_a_race_its_time_limit_ended_go_after_the_tick(race_server: RaceServer) -> None:
    assert race_server.races is not None
    seed, line = winning_deal()
    race = await seated_race(race_server.url, RaceSettings(seed=seed, time_limit=1))
    try:
        await play(race.ann, race.race_id, line[:2])
        assert race_server.races.cached_positions == 2  # both seats were dealt when the race started here
        await race.bob.wait_for(RaceResult, timeout=10)
        async with asyncio.timeout(10):  # the sweep that ended it hands it over after its tick
            while race_server.races.cached_positions:
                await asyncio.sleep(0.02)
        assert await _cached(race_server) == 0
    finally:
        await race.close()
