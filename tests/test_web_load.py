"""The lobby's first load at a distance (docs/WEB.md "Loading"): one HTTP request for the whole client, and the
lobby's open races asked right behind the hello on a socket the shell opened before the script was read.

At 150 ms round-trip time the lobby took 2.7 s to be usable, file by file (49 requests, each on a new connection,
six at a time), then hello, then watch_lobby. Its figures are benchmarks/web_page_weight.py's (docs/BENCHMARKS.md);
this test proves the shape that makes them, which a slower or faster machine does not change.
"""

from __future__ import annotations

import msgpack
from browser_helpers import http_url, launched_browser
from playwright.async_api import Page, ViewportSize, WebSocket

from client import RaceClient
from server.app import RaceServer

LOBBY_READY = "#open-races .empty, #open-races .race-row"


def frame_type(payload: str | bytes) -> str:
    """The ``type`` of a msgpack frame of the protocol (``?`` for anything else)."""
    if isinstance(payload, str):
        return "?"
    decoded = msgpack.unpackb(payload, raw=False)
    return str(decoded.get("type", "?")) if isinstance(decoded, dict) else "?"


async def test_a_returning_visitors_lobby_fetches_no_code_and_asks_its_races_behind_the_hello(race_server: RaceServer) -> None:
    guest = await RaceClient.connect(race_server.url)
    await guest.hello("Returning")
    token = guest.token
    await guest.close()
    async with launched_browser() as browser:
        context = await browser.new_context(viewport=ViewportSize(width=1280, height=800))
        await context.add_init_script(f"localStorage.setItem('fg.name', 'Returning'); localStorage.setItem('fg.token', {token!r})")
        page: Page = await context.new_page()
        fetched: list[str] = []
        page.on("request", lambda request: fetched.append(request.url))
        frames: list[str] = []
        sockets: list[WebSocket] = []

        def watch(socket: WebSocket) -> None:
            sockets.append(socket)
            socket.on("framesent", lambda payload: frames.append("sent " + frame_type(payload)))
            socket.on("framereceived", lambda payload: frames.append("received " + frame_type(payload)))

        page.on("websocket", watch)
        site = http_url(race_server.url)
        await page.goto(site + "/")
        await page.wait_for_selector(LOBBY_READY)
        code = [url for url in fetched if url.endswith((".js", ".mjs", ".css"))]
        assert code == [], f"the lobby fetched its code file by file: {code}"
        assert len(sockets) == 1, "the page opened a second socket instead of the shell's"
        first_reply = next(index for index, frame in enumerate(frames) if frame.startswith("received"))
        assert frames[:first_reply] == ["sent hello", "sent watch_lobby"], frames
        await context.close()
