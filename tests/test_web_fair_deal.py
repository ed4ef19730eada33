"""The page checks a race's deal at its result like ``flowergarden verify-deal``: its SHA-256 commitment (WebCrypto,
the byte layout of docs/PROTOCOL.md "Fair deals") equals the Python one for 64-bit seeds, both profiles and a
proving line; a tampered seed, salt or layout is refused; and a finished race's page says the deal is verified."""

from __future__ import annotations

import secrets

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import expect
from race_helpers import player
from winning_lines import winning_deal

from server.app import RaceServer
from shared import Profile
from shared.commitment import deal_commitment, line_digest
from shared.protocol import RaceResult, Started

SEEDS = [0, 15, 2**53 + 1, 2**64 - 1]


async def test_the_pages_commitment_check_agrees_with_the_server_and_refuses_tampering(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    cases = []
    for index, value in enumerate(SEEDS):
        profile = Profile.CLASSIC if index % 2 == 0 else Profile.FOUNDATION_ONLY
        salt = secrets.token_bytes(16)
        proving = list(line) if value == seed else None
        digest = line_digest(proving) if proving else bytes(32)
        cases.append([str(value), profile.value, salt.hex(), proving, deal_commitment(value, profile, salt, digest)])
    async with launched_browser() as browser:
        page = await browser.new_page()
        await page.goto(http_url(race_server.url) + "/")
        build = await page.evaluate("document.documentElement.dataset.static.split('/')[2]")
        checked = await page.evaluate(
            """async ([build, cases]) => {
                const { dealCommitment, verifyReveal } = await import(`/static/${build}/js/fair_deal.js`);
                const { deal } = await import(`/static/${build}/js/engine.js`);
                const out = [];
                for (const [seed, profile, salt, line, commitment] of cases) {
                    const computed = await dealCommitment(BigInt(seed), profile, salt, line);
                    const layout = deal(BigInt(seed));
                    const check = (changes) => verifyReveal({ commitment, seed: BigInt(seed), salt, profile, provingLine: line, layout, ...changes });
                    const other = deal(BigInt(seed) ^ 1n);
                    out.push([computed, (await check({})).status, (await check({ seed: BigInt(seed) ^ 1n })).status,
                              (await check({ salt: salt.replace(/^./, (c) => (c === "0" ? "1" : "0")) })).status,
                              (await check({ layout: other })).status]);
                }
                return out;
            }""",
            [build, cases],
        )
    assert [row[0] for row in checked] == [case[4] for case in cases]
    assert all(row[1:] == ["verified", "mismatch", "mismatch", "mismatch"] for row in checked), checked


async def test_a_finished_race_page_shows_its_deal_verified(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        page = await browser.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        await first_visit(page, http_url(race_server.url) + "/", "Ann")
        race = await create_race(page)
        bob = await player(race_server.url, "Bob")
        try:
            await bob.join(race)
            await expect(page.locator(".race-settings .commitment")).to_contain_text("deal committed")
            await bob.wait_for(Started)
            await bob.resign(race)
            await page.click("button[data-action=resign]")
            await bob.wait_for(RaceResult)
        finally:
            await bob.close()
        await expect(page.locator(".deal-check")).to_have_attribute("data-check", "verified")
        await shot(page, "fair-01-result-verified")
