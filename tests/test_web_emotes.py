"""Quick emotes on the race page, in a real headless Chromium against a real server: the opponent's phrase shows on
its panel in the reader's own language (here French, while the opponent's client speaks English), the page's menu
sends a phrase, past the budget the refusal is said, and a mute of the opponent is remembered across a reload and
hides what it sends. Screenshots land in tmp/artifacts/web/ (emotes-*.png)."""

from __future__ import annotations

from browser_helpers import create_race, first_visit, http_url, launched_browser, shot
from playwright.async_api import ViewportSize, expect
from race_helpers import player, server_config

from server.app import RaceServer
from server.dispatch import EMOTE_BURST
from shared.protocol import Emote, EmoteSent, Started
from shared.words.fr import WORDS as FRENCH

DESKTOP = ViewportSize(width=1366, height=768)
OPPONENT = ".players .player:not(.me)"


async def test_emotes_are_said_in_the_readers_language_sent_from_the_menu_limited_and_muted(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        context = await browser.new_context(viewport=DESKTOP, locale="fr-FR")
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await first_visit(page, http_url(server.url) + "/", "Ann")
        race = await create_race(page)
        bob = await player(server.url, "Bob")
        try:
            await bob.join(race)
            await bob.wait_for(Started)

            await bob.emote(race, Emote.GOOD_LUCK)
            bubble = page.locator(f"{OPPONENT} .emote-bubble")
            await expect(bubble).to_have_attribute("data-phrase", "good_luck")
            await expect(bubble).to_have_text("Bonne chance !")
            await shot(page, "emotes-received-fr")

            await page.click(".emote-picker summary")
            await page.click(".emote-menu button[data-phrase=well_played]")
            sent = await bob.wait_for(EmoteSent)
            while sent.slot != 0:  # Bob's own good_luck comes back to him first
                sent = await bob.wait_for(EmoteSent)
            assert sent.phrase == Emote.WELL_PLAYED
            await expect(page.locator(".players .player.me .emote-bubble")).to_have_text("Bien joué !")

            for _ in range(EMOTE_BURST):  # one was sent already: the budget runs out within these
                await page.click(".emote-picker summary")
                await page.click(".emote-menu button[data-phrase=wow]")
            await expect(page.locator(".notice .refusal[data-code=emote_limit]")).to_be_visible()

            await page.click(".emote-picker summary")
            await page.check(".emote-menu input[name=mute-emotes]")
            await page.reload()
            await expect(page.locator(".race-page")).to_be_visible()
            await page.click(".emote-picker summary")
            await expect(page.locator(".emote-menu input[name=mute-emotes]")).to_be_checked()  # remembered
            await bob.emote(race, Emote.OOPS)
            await bob.resign(race)  # stored after the emote: once the page shows it, the emote was handled
            await expect(page.locator(f"{OPPONENT} .state")).to_contain_text(FRENCH["attempt.resigned"])
            assert await bubble.count() == 0, "a muted opponent's emote was shown"
            await shot(page, "emotes-muted-fr")
            assert not errors, errors
        finally:
            await bob.close()
