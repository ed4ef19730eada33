"""A finished arena's page in a real headless Chromium: its races with their winners, the record the page downloads
(which verifies, signature included, though a browser writes whole ratings as integers), and a ghost of a race's
winner picked from the list.

Screenshots land in tmp/artifacts/web/ (arena-record-*.png).
"""

from __future__ import annotations

import json

from browser_helpers import first_visit, http_url, launched_browser, shot
from lobby_helpers import wait_until
from player_helpers import new_handle, registered
from playwright.async_api import ViewportSize, expect
from race_helpers import play
from test_arena_play import paired_players
from test_web_players import line_to_a_foundation

from cli.record_signature import check_signature
from server.app import RaceServer
from shared.arena_record import verify_arena_record
from shared.board import Board
from shared.moves import action_text
from shared.protocol import ArenaPaired, RaceResult, Started

DESKTOP = ViewportSize(width=1280, height=900)


async def test_a_finished_arenas_page_lists_its_races_downloads_a_record_that_verifies_and_races_a_winners_ghost(
    race_server: RaceServer,
) -> None:
    assert race_server.arenas is not None and race_server.operations is not None and race_server.operations.signer is not None
    ann_handle, bob_handle = new_handle("ann"), new_handle("bob")
    ann, bob = await registered(race_server.url, ann_handle), await registered(race_server.url, bob_handle)
    try:
        arena = await race_server.arenas.create("short arena", await race_server.arenas.now_ms(), 3_000, time_limit=60)
        for client in (ann, bob):
            await client.arena_join(arena)
        (race,) = set((await paired_players(race_server, arena, 2)).values())
        for client in (ann, bob):
            assert (await client.wait_for(ArenaPaired, timeout=20)).race == race
            await client.sync(race)
            await client.arena_pause(arena)
            await client.wait_for(Started)
        record = await race_server.races.record(race)
        await play(ann, race, [action_text(move) for move in line_to_a_foundation(Board.deal(record.deal.seed))])
        for client in (ann, bob):
            await client.resign(race)
        for client in (ann, bob):
            await client.wait_for(RaceResult)

        async def final() -> bool:
            return (await ann.arena_record(arena)).final

        await wait_until(final, timeout=30, what="the arena's final table")
        site = http_url(race_server.url)
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=DESKTOP, accept_downloads=True)).new_page()
            await first_visit(page, site + f"/arena/{arena}", "Gus")
            row = page.locator(f'.arena-race-list tr[data-race="{race}"]')
            await expect(row).to_contain_text(f"{ann_handle} won")
            await expect(row.locator("[data-action=replay]")).to_have_attribute("href", f"/replay/{race}")
            await shot(page, "arena-record-races")
            async with page.expect_download() as waiting:
                await page.click("[data-action=arena-record]")
            download = await waiting.value
            document = json.loads((await download.path()).read_text())
            verdict = verify_arena_record(document)
            assert (verdict.arena, verdict.players, verdict.races, verdict.final, verdict.winner) == (arena, 2, 1, True, ann_handle)
            check_signature(document, race_server.operations.signer.public_key)  # as the browser wrote it

            await row.locator("[data-action=arena-ghost]").click()
            await expect(page.locator(".race-settings")).to_contain_text(f"ghost race: race {race} {ann_handle}")
            await expect(page.locator('.player[data-slot="1"] .kind-tag.ghost')).to_be_visible()
    finally:
        await ann.close()
        await bob.close()
