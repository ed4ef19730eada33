"""The web page in four languages: the word tables it is served are the terminal's (shared/words), the language comes
from the browser or from the picker (remembered), and no page state shows a key or English in another language."""

from __future__ import annotations

import re

import pytest
from browser_helpers import create_race, http_url, launched_browser, shot
from playwright.async_api import Browser, BrowserContext, Page, ViewportSize, expect
from race_helpers import player

from server.app import RaceServer
from server.web.static_site import StaticSite, language_of
from shared.words import LANGUAGES, TABLES

DESKTOP = ViewportSize(width=1366, height=768)
VIEWPORTS = [DESKTOP, ViewportSize(width=1280, height=720), ViewportSize(width=390, height=844)]
"""The screens every state is looked at on: the commonest laptop, a small one, a phone."""
BROWSER_LOCALES = {"en": "en-US", "pt": "pt-PT", "fr": "fr-FR", "es": "es-ES"}

LEFTOVERS = r"""(root) => {
    // Every text a person can read or hear on the page: the visible text, and the labels and titles of elements.
    const texts = [root.innerText];
    for (const element of root.querySelectorAll("[aria-label], [title], [placeholder], [alt]")) {
        for (const name of ["aria-label", "title", "placeholder", "alt"]) if (element.hasAttribute(name)) texts.push(element.getAttribute(name));
    }
    return texts.join("\n");
}"""
"""A page's readable text, labels included."""

KEY = r"\b(?:web|refusal|place|status|reason|attempt|closed|setting|difficulty|watched|verdict|outcome|profile|player|aborted|daily|term|race)\.[a-z_-]+(?:\.[a-z_-]+)*\b"
ENGLISH = (
    r"\b(?:the|your|you|and|with|waiting|opponent|players?|moves?|cards?|play|watch|resign|stuck|leave|lobby|create|join|"
    r"rated|guest|log in|log out|how to|name|start|try again|online|connecting|foundations?|column|time limit|"
    r"of (?:clubs|diamonds|hearts|spades)|ace|jack|queen|king|seed|deal|replay|undo|redeal|left|ago|wins?|draw)\b"
)
"""English words that none of the other three languages writes (the brand and proper names are taken out first;
"bouquet" is French and Portuguese too)."""


def readable(text: str) -> str:
    """A page's text without what every language writes alike: the brand, the game's name, the paths of URLs."""
    return re.sub(r"\S*/\S*", "", text.replace("Flower Garden Race", "").replace("Flower Garden", ""))


async def page_in(browser: Browser, language: str, viewport: ViewportSize = DESKTOP) -> tuple[BrowserContext, Page]:
    """A fresh browser profile whose browser speaks ``language`` (navigator.languages and Accept-Language)."""
    context = await browser.new_context(viewport=viewport, locale=BROWSER_LOCALES[language])
    return context, await context.new_page()


async def assert_spoken(page: Page, language: str, state: str) -> None:
    """The page state shows no untranslated key and, in another language than English, no English."""
    text = readable(await page.locator("body").evaluate(LEFTOVERS)) + "\n" + readable(await page.title())
    keys = re.findall(KEY, text)
    assert not keys, f"{language} {state}: untranslated keys {keys}"
    if language != "en":
        english = sorted({match.lower() for match in re.findall(ENGLISH, text, flags=re.IGNORECASE)})
        assert not english, f"{language} {state}: English left: {english} in {text!r}"


def test_the_page_is_served_each_table_of_the_terminal_as_a_module() -> None:
    site = StaticSite.default()
    for language in LANGUAGES:
        body = site.assets[f"js/words/{language}.js"].body.decode()
        assert body.startswith("// Made by server/web/static_site.py"), body[:80]
        assert '"refusal.card_covered": ' + f'"{TABLES[language]["refusal.card_covered"]}"' in body


def test_accept_language_picks_the_first_language_the_page_speaks() -> None:
    assert language_of("pt-BR,pt;q=0.9,en;q=0.8") == "pt"
    assert language_of("de-DE,fr;q=0.7,es;q=0.9") == "es"
    assert language_of("de, ja") == "en"
    assert language_of("") == "en"
    assert language_of("fr;q=0, es;q=bad, en-GB") == "en"


def test_each_shell_says_its_language_and_carries_only_its_table() -> None:
    site = StaticSite.default()
    for language in LANGUAGES:
        shell = site.shells[language].asset.body.decode()
        assert f'<html lang="{language}" ' in shell
        assert f"js/words/{language}.js" in shell
        assert [other for other in LANGUAGES if other != language and f"js/words/{other}.js" in shell] == []
        assert TABLES[language]["web.noscript"] in shell and "{{" not in shell


async def test_the_browser_language_chooses_and_the_picker_is_remembered(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        for language in LANGUAGES:
            context, page = await page_in(browser, language)
            await page.goto(site)
            await expect(page.locator("form.name-form h1")).to_have_text(TABLES[language]["web.entry.welcome"], timeout=20000)
            assert await page.evaluate("() => document.documentElement.lang") == language
            await assert_spoken(page, language, "name form")
            await shot(page, f"languages-name-form-{language}")
            await context.close()

        context, page = await page_in(browser, "en")
        await page.goto(site)
        await page.select_option("select.language-picker", "fr")
        await expect(page.locator("form.name-form h1")).to_have_text(TABLES["fr"]["web.entry.welcome"])
        await page.goto(site + "/rules")  # another page, then a reload: still French
        fetched: list[str] = []
        page.on("request", lambda request: fetched.append(request.url))
        await page.reload()
        await expect(page.locator("select.language-picker")).to_have_value("fr")
        assert await page.evaluate("() => document.documentElement.lang") == "fr"
        assert [url for url in fetched if "/js/words/" in url] == [], "the shell was not in the chosen language"
        await page.evaluate("() => { document.cookie = 'fg.lang=; path=/; max-age=0'; }")  # chosen before the cookie
        await page.reload()
        await expect(page.locator("select.language-picker")).to_have_value("fr")
        assert [url for url in fetched if "/js/words/" in url][-1:] == [url for url in fetched if url.endswith("/js/words/fr.js")][-1:] != []
        await context.close()


OVERFLOW = r"""() => {
    // What sticks out: the page wider than the screen, or a control whose words do not fit inside it.
    const wide = document.scrollingElement.scrollWidth > window.innerWidth + 1 ? [`page ${document.scrollingElement.scrollWidth}px`,
        ...[...document.querySelectorAll("main *, header *")].filter((element) => element.getBoundingClientRect().right > window.innerWidth + 1 && element.offsetParent !== null)
            .slice(0, 3).map((element) => `${element.tagName.toLowerCase()}.${element.className} "${element.textContent.trim().slice(0, 30)}"`)] : [];
    const clipped = [...document.querySelectorAll("button, a.button, select, .status, .connection, .kind-tag, summary, .result")]
        .filter((element) => element.offsetParent !== null && element.scrollWidth > element.clientWidth + 1)
        .map((element) => `${element.tagName.toLowerCase()} "${element.textContent.trim().slice(0, 40)}" ${element.scrollWidth}>${element.clientWidth}`);
    return [...wide, ...clipped];
}"""
"""Overflow in the current page state, in words (empty when everything fits)."""


async def look(page: Page, language: str, state: str, *, every_screen: bool = False) -> None:
    """Check the state in ``language`` (no key, no English, nothing sticking out) and keep screenshots of it: at
    1366×768, or on ``every_screen`` at each of :data:`VIEWPORTS`."""
    await assert_spoken(page, language, state)
    for viewport in VIEWPORTS if every_screen else [DESKTOP]:
        await page.set_viewport_size(viewport)
        await shot(page, f"languages-{language}-{state}-{viewport['width']}x{viewport['height']}")
        overflow = await page.evaluate(OVERFLOW)
        assert not overflow, f"{language} {state} at {viewport['width']}x{viewport['height']}: {overflow}"
    await page.set_viewport_size(DESKTOP)


@pytest.mark.parametrize("language", LANGUAGES)
async def test_every_page_state_speaks_the_language_and_fits_every_screen(race_server: RaceServer, language: str) -> None:
    """In each language: the name form, the lobby, a race waiting, running, with the keyboard help, its result, the
    watch and replay pages of it, the rules, the account, leaderboard, an unknown player, the daily deal and a page
    that does not exist; none shows a key or English, and the main ones fit 1366×768, 1280×720 and 390×844."""
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        context, page = await page_in(browser, language)
        page.on("dialog", lambda dialog: dialog.accept())
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        bob = await player(race_server.url, "Bob")
        try:
            await page.goto(site + "/")
            await expect(page.locator("form.name-form")).to_be_visible()
            await look(page, language, "name-form", every_screen=True)
            await page.fill("input[name=name]", "Ann")
            await page.click("form.name-form button[type=submit]")
            await expect(page.locator("#who .me-name")).to_have_text("Ann")
            await expect(page.locator("#connection[data-status=connected]")).to_be_visible()
            await look(page, language, "lobby", every_screen=True)

            race = await create_race(page, seed=15)
            await look(page, language, "race-waiting", every_screen=True)
            await bob.join(race)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible(timeout=20000)
            await look(page, language, "race-running", every_screen=True)
            await page.keyboard.press("?")
            await expect(page.locator("dialog.keyboard-help")).to_be_visible()
            await look(page, language, "keyboard-help")
            await page.keyboard.press("Escape")

            await page.click("button[data-action=resign]")
            await bob.resign(race)
            await expect(page.locator(".result-overlay")).to_be_visible()
            await expect(page.locator(".result-overlay .analysis").first).to_be_visible()
            await look(page, language, "race-result", every_screen=True)

            for state, path, ready in (
                ("watch", f"/watch/{race}", ".watch-page .result"),
                ("replay", f"/replay/{race}", ".replay-page .analysis-panel h2, .replay-page .analysis-panel .analysis"),
                ("rules", "/rules", ".rules-page .rules-figure .card"),
                ("account", "/account", ".account-page form"),
                ("leaderboard", "/leaderboard", ".leaderboard-page"),
                ("player-unknown", "/player/Nobody_here", ".panel.entry h1"),
                ("daily", "/daily", ".daily-page, .panel.entry h1"),  # without a deal ready: "No daily deal" and why
                ("not-found", "/no/such/page", ".not-found"),
            ):
                await page.goto(site + path)
                await expect(page.locator(ready).first).to_be_visible(timeout=20000)
                assert not errors, f"{language} {state}: {errors}"
                await look(page, language, state, every_screen=state in ("rules", "replay"))
            assert not errors, f"{language}: {errors}"
        finally:
            await bob.close()
            await context.close()
