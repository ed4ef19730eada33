"""A real headless Chromium for the web client's tests: Debian's ``chromium`` driven by the ``playwright`` package.

Nothing is downloaded (``playwright install`` is never used): the browser is ``$FLOWERGARDEN_CHROMIUM``, else
``chromium`` on PATH. When it or the package is missing the test fails with what to install, never skips.
Screenshots go to ``tmp/artifacts/web/`` in the repository (kept after the run, to look at).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

ARTIFACTS = Path(__file__).resolve().parent.parent / "tmp" / "artifacts" / "web"
LAUNCH_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags that keep Chromium from stalling on a closed network (and let it run as root)."""
INSTALL_HINT = (
    "the browser tests need Debian's chromium and the playwright package: `apt-get install -y chromium` "
    "(as root; `python3 dev.py test` does it when it can) and `pip install -e .[test]`; or set FLOWERGARDEN_CHROMIUM "
    "to a Chromium binary. Never `playwright install` (it downloads)."
)


def chromium_path() -> str:
    """The Chromium binary to drive; fails the test with install instructions when there is none."""
    configured = os.environ.get("FLOWERGARDEN_CHROMIUM")
    found = configured if configured and Path(configured).exists() else shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(f"no Chromium found: {INSTALL_HINT}")
    return found


@asynccontextmanager
async def launched_browser() -> AsyncIterator[Browser]:
    """A headless Chromium with a fresh profile, closed afterwards."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.fail(f"the playwright package is missing: {INSTALL_HINT}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=chromium_path(), headless=True, args=LAUNCH_FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


def http_url(ws_url: str) -> str:
    """``ws://host:port`` → ``http://host:port``."""
    return "http" + ws_url.removeprefix("ws")


async def until(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    """Wait until ``check()`` is true (the page's CSP forbids the string evaluation of ``wait_for_function``)."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


async def shot(page: Page, name: str) -> None:
    """A full-page screenshot in the artifacts folder, to look at."""
    await page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


async def first_visit(page: Page, url: str, name: str) -> None:
    """Open ``url`` and answer the name prompt of a first visit."""
    from playwright.async_api import expect

    await page.goto(url)
    await page.fill("input[name=name]", name)
    await page.click("form.name-form button[type=submit]")
    await expect(page.locator("#who .me-name")).to_have_text(name)


async def create_race(page: Page, seed: int | None = None) -> str:
    """Create a race from the lobby page (with ``seed`` under "More settings", if given); its id once the page waits
    for an opponent."""
    from playwright.async_api import expect

    if seed is not None:
        await page.click("details.more summary")
        await page.fill("input[name=seed]", str(seed))
    await page.click("button[data-action=create]")
    await expect(page.locator(".overlay.waiting")).to_be_visible()
    return page.url.rsplit("/", 1)[1]


def destination(board: str, move: str) -> str:
    """Where the card of ``move`` shows once the server accepted it."""
    card, places = move.split()
    target = places.split(">")[1]
    pile = "f" if target == "f" else target
    return f'{board} [data-pile="{pile}"] [data-card="{card}"]'


async def click_move(page: Page, board: str, move: str) -> None:
    """Play ``move`` by clicking its card, then its destination pile; wait until the server acknowledged it."""
    from playwright.async_api import expect

    card, places = move.split()
    await page.click(f'{board} [data-card="{card}"]')
    await page.click(f'{board} [data-pile="{places.split(">")[1]}"]')
    await expect(page.locator(destination(board, move))).to_be_visible()
    await expect(page.locator(f"{board} .card.pending")).to_have_count(0)


async def pixels(browser: Browser, png: bytes, points: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The RGB colours of a PNG screenshot at ``points`` (CSS pixels of a scale-1 shot), decoded by the browser itself
    in a blank page (no image library needed)."""
    import base64

    page = await browser.new_page()
    try:
        colours = await page.evaluate(
            """async ([data, points]) => {
                const image = new Image();
                image.src = `data:image/png;base64,${data}`;
                await image.decode();
                const canvas = document.createElement("canvas");
                canvas.width = image.width;
                canvas.height = image.height;
                const context = canvas.getContext("2d");
                context.drawImage(image, 0, 0);
                return points.map(([x, y]) => Array.from(context.getImageData(x, y, 1, 1).data.slice(0, 3)));
            }""",
            [base64.b64encode(png).decode(), [list(point) for point in points]],
        )
    finally:
        await page.close()
    return [(red, green, blue) for red, green, blue in colours]
