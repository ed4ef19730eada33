"""At start the server raises its soft descriptor limit to the hard one (a flood of half-sent handshakes ran a
1,024-descriptor process out of them, issue 24.3) and shows the limit in force in /metrics."""

from __future__ import annotations

import asyncio
import resource
import urllib.request

from race_helpers import server_config

from server.app import RaceServer


def metrics_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


async def test_the_soft_descriptor_limit_is_raised_to_the_hard_one_and_shown_in_metrics(redis_url: str) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard > 512, "the test needs a hard limit above 512"
    resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
    try:
        async with RaceServer(server_config(redis_url)) as server:
            in_force = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            assert in_force == (512 if hard == resource.RLIM_INFINITY else hard)
            port = server.url.rsplit(":", 1)[1]
            text = await asyncio.to_thread(metrics_text, f"http://127.0.0.1:{port}/metrics")
            assert f"flowergarden_open_files_limit {float(in_force)}" in text
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
