"""The page's way in: a name the server refuses, and a visitor past the new-session limit, are told what happened in
words and can go on — never a page stuck on "Cannot reach the race server" that retries the same refused hello."""

from __future__ import annotations

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import server_config
from redis.asyncio import Redis

from server.app import RaceServer
from server.services.sessions import SessionLimits
from server.store import keys

DESKTOP = ViewportSize(width=1280, height=900)


async def saved_name(page: Page) -> str | None:
    """The name this browser keeps for its next visit."""
    value = await page.evaluate("() => localStorage.getItem('fg.name')")
    return value if isinstance(value, str) else None


async def test_a_name_the_server_refuses_brings_back_the_name_form_with_the_reason_and_is_never_kept(race_server: RaceServer) -> None:
    """A private-use character (a Mac's Apple logo) typed in the form, and a zero-width space kept from an older page,
    are refused by the server: the form comes back saying why, the refused name is not kept, and a good name gets in."""
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await page.goto(site)
        await page.fill("input[name=name]", "Ann\uf8ff")
        await page.click("form.name-form button[type=submit]")
        refused = page.locator("form.name-form .name-refused")
        await expect(refused).to_contain_text("cannot use this name")
        await shot(page, "entry-name-refused")
        assert await saved_name(page) is None
        await expect(page.locator("input[name=name]")).to_have_value("Ann\uf8ff")

        await page.evaluate("() => localStorage.setItem('fg.name', '\\u200b')")  # what an older page kept
        await page.reload()
        await expect(page.locator("form.name-form .name-refused")).to_contain_text("visible character")
        await expect(page.locator("text=Cannot reach the race server")).to_have_count(0)
        assert await saved_name(page) is None

        await page.fill("input[name=name]", "Ann")
        await page.click("form.name-form button[type=submit]")
        await expect(page.locator("#who .me-name")).to_have_text("Ann")
        assert await saved_name(page) == "Ann"


async def test_a_visitor_past_the_new_session_limit_is_told_in_words_and_a_returning_browser_keeps_its_session(
    redis_url: str, redis: Redis
) -> None:
    """Past the new sessions of one address (a school, a café), the next new visitor reads why in words — not the
    protocol's "say hello with your token" — while a browser that came before resumes its own session."""
    await redis.delete(keys.new_sessions_key("127.0.0.1"))
    async with RaceServer(server_config(redis_url, sessions=SessionLimits(max_new_per_address=1))) as server:
        site = http_url(server.url)
        async with launched_browser() as browser:
            ann = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await first_visit(ann, site, "Ann")
            player = await ann.evaluate("() => window.flowerGarden.conn.session.player")

            bob = await (await browser.new_context(viewport=DESKTOP)).new_page()
            await bob.goto(site)
            await bob.fill("input[name=name]", "Bob")
            await bob.click("form.name-form button[type=submit]")
            told = bob.locator(".not-let-in .error-text")
            await expect(told).to_contain_text("Too many new visitors")
            await expect(told).not_to_contain_text("hello")
            await expect(told).to_have_attribute("data-code", "rate_limited")
            await shot(bob, "entry-new-sessions-limit")

            await ann.reload()
            await expect(ann.locator("#who .me-name")).to_have_text("Ann")
            assert await ann.evaluate("() => window.flowerGarden.conn.session.player") == player
    await redis.delete(keys.new_sessions_key("127.0.0.1"))
