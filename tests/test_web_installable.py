"""The web client installs as an app: a manifest with icons, and a service worker that answers an offline page
saying the game needs its server when a page cannot be loaded — never the browser's own error page."""

from __future__ import annotations

import asyncio
import json
import struct
import urllib.request

from browser_helpers import first_visit, http_url, launched_browser, shot
from playwright.async_api import ViewportSize, expect
from race_helpers import server_config

from server.app import RaceServer
from server.web.static_site import StaticSite

DESKTOP = ViewportSize(width=1280, height=800)


def get(url: str) -> tuple[str, bytes]:
    """GET ``url``: its Content-Type and body (blocking: run in a thread)."""
    with urllib.request.urlopen(url) as answer:
        return str(answer.headers["Content-Type"]), answer.read()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def test_the_page_names_a_manifest_whose_icons_exist_at_their_sizes(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    build = StaticSite.default().build
    manifest = json.loads((await asyncio.to_thread(get, f"{site}/static/{build}/manifest.json"))[1])
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    for icon in manifest["icons"]:
        content_type, data = await asyncio.to_thread(get, f"{site}/static/{build}/{icon['src']}")
        assert content_type == "image/png"
        width, height = png_size(data)
        assert f"{width}x{height}" == icon["sizes"]
    shell = (await asyncio.to_thread(get, f"{site}/"))[1].decode()
    assert f'<link rel="manifest" href="/static/{build}/manifest.json">' in shell


async def test_with_the_server_gone_a_page_opens_the_offline_page_that_says_it_needs_the_server(redis_url: str) -> None:
    async with launched_browser() as browser:
        context = await browser.new_context(viewport=DESKTOP)
        page = await context.new_page()
        async with RaceServer(server_config(redis_url)) as server:
            site = http_url(server.url)
            await first_visit(page, site + "/", "Ann")
            scope = await page.evaluate(
                "async () => { const ready = await Promise.race([navigator.serviceWorker.ready, new Promise((r) => setTimeout(() => r(null), 10000))]);"
                " return ready ? ready.scope : (await navigator.serviceWorker.getRegistrations()).length + ' registrations, none ready'; }"
            )
            assert scope == site + "/", scope
            await page.goto(site + "/rules")  # a page load under the worker's control, while the server answers
            await expect(page.locator(".rules-page h1")).to_be_visible()
        await page.goto(site + "/")
        await expect(page.locator(".offline-page h1")).to_have_text("Flower Garden Race needs its server")
        await expect(page.locator(".offline-page a.button")).to_have_attribute("href", "/")
        await shot(page, "offline-page")
        await context.close()
