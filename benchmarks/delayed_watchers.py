"""Server memory for many delayed spectators of one race (issue 17 §2): before, each held its own copies.

    python3 benchmarks/delayed_watchers.py [--watchers 200] [--actions 300] [--server-checkout DIR]

Starts an embedded Redis and ``flowergarden serve`` (spectator delay 60 s) from this checkout or DIR, plays
``--actions`` actions in one race, then opens ``--watchers`` connections that each watch it, then plays 100
more; prints the server's resident memory at each step (the watchers' events are all within the delay).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.load.command import rss_bytes, wait_listening
from client import RaceClient
from server.embedded_redis import EmbeddedRedis
from shared import Board, Rules, move_text
from shared.protocol import RaceSettings, Started


async def alternate(client: RaceClient, race: str, move: str, actions: int) -> None:
    for index in range(actions):
        await client.move(race, move if client._next_seq.get(race, 0) % 2 == 0 else "undo")
        if index % 25 == 24:
            await asyncio.sleep(0.9)  # stay under the frame rate (30/s, bursts of 100)


async def measure(url: str, pid: int, watchers: int, actions: int) -> None:
    ann, bob = await RaceClient.connect(url), await RaceClient.connect(url)
    await ann.hello("Ann")
    await bob.hello("Bob")
    seated = await ann.create(RaceSettings(seed=7, undo=True, spectator_delay=60))
    race = seated.race.race
    await bob.join(race)
    await ann.wait_for(Started)
    await bob.wait_for(Started)
    move = move_text(Board.deal(7, Rules(undo=True)).legal_moves()[0])
    await asyncio.gather(alternate(ann, race, move, actions // 2), alternate(bob, race, move, actions // 2))
    await asyncio.sleep(1)
    before = rss_bytes(pid)
    clients = []
    for index in range(watchers):
        client = await RaceClient.connect(url)
        await client.hello(f"W{index}")
        await client.watch(race)
        clients.append(client)
    await asyncio.sleep(3)
    watching = rss_bytes(pid)
    await asyncio.gather(alternate(ann, race, move, 50), alternate(bob, race, move, 50))
    await asyncio.sleep(2)
    after = rss_bytes(pid)
    mib = 1024 * 1024
    print(f"server RSS: {before / mib:.1f} MiB with the race ({actions} actions, delay 60 s); "
          f"+{(watching - before) / mib:.1f} MiB with {watchers} watchers; +{(after - before) / mib:.1f} MiB after 100 more actions "
          f"({(after - before) / watchers / 1024:.1f} KiB per watcher)")
    for client in [ann, bob, *clients]:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--actions", type=int, default=300)
    parser.add_argument("--server-checkout", type=Path, default=ROOT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = EmbeddedRedis(Path(folder), persistent=False)
        store.start()
        root = args.server_checkout.resolve()
        server = subprocess.Popen(
            [sys.executable, "-m", "cli", "serve", "--redis", store.url, "--port", "0", "--countdown", "0.2",
             "--seed-pool-target", "0", "--log-level", "WARNING"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root), "FLOWERGARDEN_LIMITS_WATCHES_PER_ADDRESS_BURST": "0"},
        )  # fmt: skip
        try:
            port = wait_listening(server, "race server")
            started = time.time()
            asyncio.run(measure(f"ws://127.0.0.1:{port}", server.pid, args.watchers, args.actions))
            print(f"({time.time() - started:.0f} s)")
        finally:
            server.terminate()
            server.wait(10)
            store.stop()


if __name__ == "__main__":
    main()
