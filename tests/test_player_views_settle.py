"""PlayerViews' settling before a reading: readings asked together share one, and none uses one started before it."""

from __future__ import annotations

import asyncio

from server.services.player_views import PlayerViews


async def test_readings_asked_together_share_a_settling_that_starts_after_them() -> None:
    started: list[int] = []
    release = asyncio.Event()

    async def settle() -> None:
        started.append(len(started))
        await release.wait()

    views = PlayerViews(None, None, None, settle=settle)  # type: ignore[arg-type]
    first = [asyncio.ensure_future(views._settled()) for _ in range(5)]
    for _ in range(5):  # let the readings and their settling run
        await asyncio.sleep(0)
    assert started == [0]  # five readings, one settling
    later = [asyncio.ensure_future(views._settled()) for _ in range(5)]  # asked while it runs: they need a new one
    for _ in range(5):  # let the readings and their settling run
        await asyncio.sleep(0)
    assert started == [0]
    release.set()
    await asyncio.gather(*first, *later)
    assert started == [0, 1]


async def test_a_failed_settling_fails_its_readings_and_the_next_one_runs_afresh() -> None:
    calls = 0

    async def settle() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("store down")

    views = PlayerViews(None, None, None, settle=settle)  # type: ignore[arg-type]
    results = await asyncio.gather(views._settled(), views._settled(), return_exceptions=True)
    assert all(isinstance(result, ConnectionError) for result in results)
    await views._settled()
    assert calls == 2
