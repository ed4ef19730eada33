"""Page weight and first-load time of the web client in headless Chromium (Debian's chromium via playwright).

    python3 benchmarks/web_page_weight.py [--loads 5] [--rtt-ms 150]

Starts an embedded redis-server and a race server in this process, starts a race between two Python clients (the
page loads as the first player, with its token), then loads ``/`` and ``/race/<id>`` ``--loads`` times each in a fresh browser context (empty cache):
bytes transferred (every response's encoded size, headers included, as Chromium counts them), requests, and the
time from navigation start until the page is usable (the lobby's lists, or the race's table, drawn), plus the
same with a warm cache (a second load in the same context). ``--rtt-ms`` adds that round-trip time to every request
(Chromium's network emulation: half each way), as a player far from the server sees it. Prints a table;
docs/BENCHMARKS.md has the figures. Not covered: bandwidth limits, TLS handshakes, the WebSocket's own round trips
after the page is drawn.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser_helpers import LAUNCH_FLAGS, chromium_path, http_url
from playwright.async_api import Browser, async_playwright

from client import RaceClient
from server.app import RaceServer, ServerConfig
from server.embedded_redis import EmbeddedRedis
from shared.protocol import RaceSettings

READY = {"/": "#open-races .empty, #open-races .race-row", "race": ".race-page .table [data-card]"}


async def load(browser: Browser, url: str, ready: str, warm: bool, token: str, rtt_ms: int) -> tuple[int, int, float]:
    """Bytes, requests and ms until ``ready`` shows, for one load (the second one of the context when ``warm``)."""
    context = await browser.new_context()
    await context.add_init_script(f"localStorage.setItem('fg.name', 'Host'); localStorage.setItem('fg.token', '{token}')")
    page = await context.new_page()
    if warm:
        await page.goto(url)
        await page.wait_for_selector(ready)
    session = await context.new_cdp_session(page)
    await session.send("Network.enable")
    if rtt_ms:
        await session.send("Network.emulateNetworkConditions", {"offline": False, "latency": rtt_ms, "downloadThroughput": -1, "uploadThroughput": -1})
    sizes: list[int] = []
    session.on("Network.loadingFinished", lambda event: sizes.append(int(event["encodedDataLength"])))
    started = time.perf_counter()
    await page.goto(url)
    await page.wait_for_selector(ready)
    elapsed = (time.perf_counter() - started) * 1000
    await asyncio.sleep(0.2)  # let the last loadingFinished events arrive
    await context.close()
    return sum(sizes), len(sizes), elapsed


async def measure(loads: int, redis_url: str, rtt_ms: int) -> list[dict[str, Any]]:
    config = ServerConfig(redis_url=redis_url, port=0, seed_pool_target=0)
    async with RaceServer(config) as server:
        host = await RaceClient.connect(server.url)
        await host.hello("Host")
        race = (await host.create(RaceSettings(seed=15))).race.race
        guest = await RaceClient.connect(server.url)
        await guest.hello("Guest")
        await guest.join(race)  # a running race: the page loads the host's seat (its token) and draws the table
        rows = []
        async with async_playwright() as driver:
            browser = await driver.chromium.launch(executable_path=chromium_path(), headless=True, args=LAUNCH_FLAGS)
            for label, path, ready in [("/ (lobby)", "/", READY["/"]), ("/race/<id>", f"/race/{race}", READY["race"])]:
                for warm in (False, True):
                    samples = [await load(browser, http_url(server.url) + path, ready, warm, host.token, rtt_ms) for _ in range(loads)]
                    rows.append({
                        "page": label,
                        "cache": "warm" if warm else "cold",
                        "bytes": statistics.median(s[0] for s in samples),
                        "requests": statistics.median(s[1] for s in samples),
                        "ms_median": statistics.median(s[2] for s in samples),
                        "ms_max": max(s[2] for s in samples),
                    })
            await browser.close()
        await host.close()
        await guest.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=5, help="loads per page and cache state (default 5)")
    parser.add_argument("--rtt-ms", type=int, default=0, help="round-trip time added to every request, in ms (default 0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), persistent=False) as redis_server:
        rows = asyncio.run(measure(args.loads, redis_server.url, args.rtt_ms))
    print(f"{'page':<14} {'cache':<6} {'bytes':>9} {'requests':>9} {'ms median':>10} {'ms max':>8}")
    for row in rows:
        print(f"{row['page']:<14} {row['cache']:<6} {row['bytes']:>9,.0f} {row['requests']:>9.0f} {row['ms_median']:>10.0f} {row['ms_max']:>8.0f}")


if __name__ == "__main__":
    main()
