"""The settings menu (⚙ in the top bar of every page, docs/WEB.md "Settings"): a light, dark or high-contrast theme
instead of the green felt, and a card size, both remembered across a reload and said in each language. axe-core
checks every theme in every page state (tests/test_web_accessibility.py); the table's fit at the default size is
tests/test_web_fit.py's. Screenshots: tmp/artifacts/web/settings-*.png."""

from __future__ import annotations

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import Page, ViewportSize, expect
from race_helpers import player, server_config

from server.app import RaceServer
from shared.words import LANGUAGES, TABLES

DESKTOP = ViewportSize(width=1366, height=768)
THEMES = ("felt", "light", "dark", "contrast")


async def card_width(page: Page) -> float:
    """The fitted card width of the player's table, in px."""
    width: float = await page.evaluate("parseFloat(getComputedStyle(document.querySelector('.race-page .board')).getPropertyValue('--card-w'))")
    return width


async def background(page: Page) -> str:
    colour: str = await page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    return colour


async def test_every_page_offers_the_settings_and_the_theme_is_remembered(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        site = http_url(server.url)
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await first_visit(page, site + "/", "Ann")
        for path in ("/", "/rules", "/tutorial", "/leaderboard", "/daily", "/account", "/no/such/page"):
            await page.goto(site + path)
            await expect(page.locator("details.settings-menu summary")).to_have_attribute("aria-label", TABLES["en"]["web.settings.label"])
        await page.goto(site + "/")
        backgrounds = {}
        for theme in THEMES:
            await page.click("details.settings-menu summary")
            await page.select_option("details.settings-menu select[name=theme]", theme)
            await page.click("details.settings-menu summary")
            assert await page.evaluate("document.documentElement.dataset.theme") == theme
            backgrounds[theme] = await background(page)
            await shot(page, f"settings-lobby-{theme}")
        assert len(set(backgrounds.values())) == len(THEMES), f"themes that look alike: {backgrounds}"
        await page.reload()
        await expect(page.locator("details.settings-menu select[name=theme]")).to_have_value("contrast")
        assert await page.evaluate("document.documentElement.dataset.theme") == "contrast"
        assert await background(page) == backgrounds["contrast"]


async def test_the_card_size_is_remembered_and_resizes_the_players_table(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await first_visit(page, http_url(server.url) + "/", "Ann")
        race = await create_race(page)
        bob = await player(server.url, "Bob")
        try:
            await bob.join(race)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            fitted = await card_width(page)
            widths = {}
            for size in ("small", "large", "fit"):
                await page.click("details.settings-menu summary")
                await page.select_option("details.settings-menu select[name=cards]", size)
                await page.click("details.settings-menu summary")
                await expect(page.locator("html")).to_have_attribute("data-cards", size)
                widths[size] = await card_width(page)
                await shot(page, f"settings-race-cards-{size}")
            assert widths["small"] < fitted < widths["large"] and widths["fit"] == fitted, widths
            await page.click("details.settings-menu summary")
            await page.select_option("details.settings-menu select[name=cards]", "small")
            await page.reload()
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            assert await card_width(page) == widths["small"]
        finally:
            await bob.close()


async def test_the_settings_speak_each_language(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        for language in LANGUAGES:
            context = await browser.new_context(viewport=DESKTOP, locale=language)
            page = await context.new_page()
            await page.goto(http_url(server.url) + "/rules")
            await page.click("details.settings-menu summary")
            words = TABLES[language]
            assert await page.locator("details.settings-menu select[name=theme] option").all_text_contents() == [words[f"web.theme.{theme}"] for theme in THEMES]
            assert await page.locator("details.settings-menu select[name=cards] option").all_text_contents() == [words[f"web.cards.{size}"] for size in ("small", "fit", "large")]
            await expect(page.locator("details.settings-menu .settings-panel")).to_contain_text(words["web.settings.theme"])
            await shot(page, f"settings-menu-{language}")
            await context.close()
