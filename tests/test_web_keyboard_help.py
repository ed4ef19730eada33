"""? opens a keyboard help on every page (not while typing in a field), Esc closes it, and the race page's card typing
is not disturbed by it."""

from __future__ import annotations

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import ViewportSize, expect

from server.app import RaceServer

DESKTOP = ViewportSize(width=1280, height=800)


async def test_question_mark_opens_the_keyboard_help_and_escape_closes_it(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await page.goto(site + "/")
        await page.locator("input[name=name]").press_sequentially("Ann?")
        await expect(page.locator("dialog.keyboard-help[open]")).to_have_count(0)
        await expect(page.locator("input[name=name]")).to_have_value("Ann?")
        await page.fill("input[name=name]", "")
        await first_visit(page, site + "/", "Ann")
        await page.keyboard.press("?")
        help_dialog = page.locator("dialog.keyboard-help[open]")
        await expect(help_dialog).to_be_visible()
        await expect(help_dialog).to_contain_text("send it to that column")
        await shot(page, "keyboard-help")
        await page.keyboard.press("Escape")
        await expect(help_dialog).to_have_count(0)

        await create_race(page)
        await page.keyboard.press("?")
        await expect(help_dialog).to_be_visible()
        await page.click("[data-action=close-help]")
        await expect(help_dialog).to_have_count(0)
        await expect(page.locator(".keyboard-hint")).not_to_contain_text("typed:")
