"""The web page in four languages: the word tables it is served are the terminal's (shared/words), the language comes
from the browser or from the picker (remembered), and no page state shows a key or English in another language."""

from __future__ import annotations

from browser_helpers import http_url, launched_browser, shot
from playwright.async_api import Browser, BrowserContext, Page, ViewportSize, expect

from server.app import RaceServer
from server.web.static_site import StaticSite, language_of
from shared.words import LANGUAGES, TABLES

DESKTOP = ViewportSize(width=1366, height=768)
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

KEY = r"\b(?:web|refusal|place|status|reason|attempt|closed|setting|difficulty|watched|term)\.[a-z_]+(?:\.[a-z_]+)*\b"
ENGLISH = (
    r"\b(?:the|your|you|and|with|waiting|opponent|players?|moves?|cards?|play|watch|resign|stuck|leave|lobby|create|join|"
    r"rated|guest|log in|log out|how to|name|start|try again|online|connecting|foundations?|column|bouquet|time limit)\b"
)
"""English words that none of the other three languages writes (the brand and proper names are taken out first)."""


def readable(text: str) -> str:
    """A page's text without what every language writes alike: the brand, the game's name."""
    return text.replace("Flower Garden Race", "").replace("Flower Garden", "")


async def page_in(browser: Browser, language: str, viewport: ViewportSize = DESKTOP) -> tuple[BrowserContext, Page]:
    """A fresh browser profile whose browser speaks ``language`` (navigator.languages and Accept-Language)."""
    context = await browser.new_context(viewport=viewport, locale=BROWSER_LOCALES[language])
    return context, await context.new_page()


async def assert_spoken(page: Page, language: str, state: str) -> None:
    """The page state shows no untranslated key and, in another language than English, no English."""
    import re

    text = readable(await page.locator("body").evaluate(LEFTOVERS))
    keys = re.findall(KEY, text)
    assert not keys, f"{language} {state}: untranslated keys {keys}"
    if language != "en":
        english = sorted({match.lower() for match in re.findall(ENGLISH, text, flags=re.IGNORECASE)})
        assert not english, f"{language} {state}: English left: {english} in {text!r}"


def test_the_page_is_served_each_table_of_the_terminal_as_a_module() -> None:
    site = StaticSite()
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


def test_each_shell_says_its_language_and_preloads_only_its_table() -> None:
    site = StaticSite()
    for language in LANGUAGES:
        shell = site.shells[language].body.decode()
        assert f'<html lang="{language}">' in shell
        assert f"js/words/{language}.js" in shell
        assert [other for other in LANGUAGES if other != language and f"js/words/{other}.js" in shell] == []
        assert TABLES[language]["web.noscript"] in shell and "{{" not in shell


async def test_the_browser_language_chooses_and_the_picker_is_remembered(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    async with launched_browser() as browser:
        for language in LANGUAGES:
            context, page = await page_in(browser, language)
            await page.goto(site)
            await expect(page.locator("form.name-form h1")).to_have_text(TABLES[language]["web.entry.welcome"])
            assert await page.evaluate("() => document.documentElement.lang") == language
            await assert_spoken(page, language, "name form")
            await shot(page, f"languages-name-form-{language}")
            await context.close()

        context, page = await page_in(browser, "en")
        await page.goto(site)
        await page.select_option("select.language-picker", "fr")
        await expect(page.locator("form.name-form h1")).to_have_text(TABLES["fr"]["web.entry.welcome"])
        await page.goto(site + "/rules")  # another page, then a reload: still French
        await page.reload()
        await expect(page.locator("select.language-picker")).to_have_value("fr")
        assert await page.evaluate("() => document.documentElement.lang") == "fr"
        await context.close()
