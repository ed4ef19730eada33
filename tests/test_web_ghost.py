"""A ghost race in a real headless Chromium: a registered player picks a friend's best race on /ghost and races it;
the ghost plays the recorded moves no faster than they were recorded (a pause of the recording included), and its
seat is labelled a ghost on the race page, on a spectator's page, in the result and in the player's history.

Screenshots land in tmp/artifacts/web/ (ghost-*.png).
"""

from __future__ import annotations

import asyncio

from browser_helpers import first_visit, http_url, launched_browser, shot
from player_helpers import booked, event_of, new_handle, registered
from playwright.async_api import ViewportSize, expect
from race_helpers import player, server_config
from test_web_arena import register
from winning_lines import winning_deal

from client import RaceClient
from server.app import RaceServer
from shared.protocol import MoveMade, RaceResult, RaceSettings, Started

DESKTOP = ViewportSize(width=1280, height=900)
PAUSE_S = 1.5
"""The recorded attempt's pause half-way: the ghost waits as long there."""


async def move_times(client: RaceClient, race: str, slot: int) -> list[int]:
    """When each of a seat's moves came in a finished race, in ms after its start."""
    start, times = 0, []
    async for event in client.replay(race):
        if isinstance(event, Started):
            start = event.at
        elif isinstance(event, MoveMade) and event.slot == slot:
            times.append(event.at - start)
    return times


async def test_a_picked_ghost_replays_a_friends_race_at_its_pace_labelled_a_ghost_everywhere(single_redis_url: str) -> None:
    seed, line = winning_deal()
    ann_handle, gus_handle = new_handle("ann"), new_handle("gus")
    async with RaceServer(server_config(single_redis_url, spectator_delay_seconds=0.5)) as server:
        ann, bob = await registered(server.url, ann_handle), await player(server.url, "Bob")
        try:
            recorded = (await ann.create(RaceSettings(seed=seed))).race.race
            await bob.join(recorded)
            await event_of(ann, recorded, Started)
            half = len(line) // 2
            for number, move in enumerate(line):
                if number == half:
                    await asyncio.sleep(PAUSE_S)
                await ann.move(recorded, move)
            await event_of(ann, recorded, RaceResult)
            await booked(server, recorded)
            recorded_times = await move_times(ann, recorded, 0)
        finally:
            await bob.close()

        site = http_url(server.url)
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await register(page, site + "/", gus_handle)
            await page.goto(site + "/ghost")
            await page.fill("form[data-form=ghost] input[name=handle]", ann_handle)
            await page.click("form[data-form=ghost] button[type=submit]")
            row = page.locator(f'.ghost-row[data-race="{recorded}"]')
            await expect(row.locator(".tag.best")).to_be_visible()
            await shot(page, "ghost-picker")
            await row.locator("[data-action=ghost-race]").click()
            await expect(page.locator(".race-settings")).to_contain_text(f"ghost race: race {recorded} {ann_handle}")
            ghost_race = page.url.rsplit("/", 1)[1]
            await expect(page.locator('.player[data-slot="1"] .kind-tag.ghost')).to_have_text("ghost")

            spectator = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await first_visit(spectator, site + f"/watch/{ghost_race}", "Vic")
            await expect(spectator.locator('.player[data-slot="1"] .kind-tag.ghost')).to_be_visible(timeout=30_000)

            await expect(page.locator(".result .headline")).to_contain_text(f"Ghost of {ann_handle} (ghost) wins", timeout=60_000)
            await expect(page.locator('.result-table tr[data-slot="1"] .kind-tag.ghost')).to_be_visible()
            await shot(page, "ghost-result")
            ghost_times = await move_times(ann, ghost_race, 1)
            assert len(ghost_times) == len(recorded_times)
            # each move no earlier after the start than recorded, the recorded pause included (a late move may shorten
            # the gap after it: the ghost keeps to the recording's clock, not to its gaps)
            assert all(ghost >= was for ghost, was in zip(ghost_times, recorded_times, strict=True))
            assert ghost_times[half] >= recorded_times[half] >= PAUSE_S * 1000

            await booked(server, ghost_race)
            await page.goto(site + f"/player/{gus_handle}")
            history = page.locator(f'.history-row[data-race="{ghost_race}"]')
            await expect(history.locator(".kind-tag.ghost")).to_be_visible()
            await expect(history).to_contain_text(f"ghost race: race {recorded} {ann_handle}")
            await shot(page, "ghost-history")
        await ann.close()
