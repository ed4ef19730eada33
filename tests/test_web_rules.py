"""A first-time visitor is told what Flower Garden is: the name form links to /rules, which has the rules of both
profiles and a real deal with its parts named."""

from __future__ import annotations

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import ViewportSize, expect

from server.app import RaceServer

DESKTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)


async def test_a_first_visit_offers_the_rules_page_with_a_deal_whose_parts_are_named(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        for viewport in (DESKTOP, PHONE):
            page = await (await browser.new_context(viewport=viewport)).new_page()
            await page.goto(site + "/")
            link = page.locator("form.name-form a[data-action=rules]")
            await expect(link).to_have_attribute("href", "/rules")
            await first_visit(page, site + "/rules", "Ann")
            await expect(page.locator(".rules-page h1")).to_have_text("How to play Flower Garden")
            figure = page.locator(".rules-figure")
            await expect(figure.locator(".column .card")).to_have_count(36)
            await expect(figure.locator("[data-pile=b] .card")).to_have_count(16)
            await expect(figure.locator(".foundation")).to_have_count(4)
            await expect(figure.locator("figcaption")).to_contain_text("bouquet")
            text = await page.locator(".rules-page").inner_text()
            for fact in ("Foundation only", "Classic", "exactly one rank higher", "empty column", "redeal", "draw", "time limit"):
                assert fact.lower() in text.lower(), f"the rules do not say {fact!r}"
            assert await figure.locator(".card.available").count() == 0, "the picture's cards look playable"
            width = await page.evaluate("() => document.scrollingElement.scrollWidth")
            assert width <= viewport["width"], f"the rules page scrolls sideways ({width} px)"
            await expect(page.locator("#who a[href='/rules']")).to_be_visible()
            await shot(page, f"rules-{viewport['width']}")
