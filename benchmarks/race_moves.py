"""Closed-loop move throughput and round-trip latency of the race server (server, Redis and clients on this machine).

    python3 benchmarks/race_moves.py [--races 10] [--actions 400] [--redis URL]

Starts an embedded redis-server (unless --redis) and a server in this process, then lets every player of
``--races`` races alternate a legal move and ``undo`` (undo races) as fast as the replies come back.
Prints moves/s and latency percentiles; the table in docs/BENCHMARKS.md comes from here.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client import RaceClient
from server.app import RaceServer, ServerConfig
from server.embedded_redis import EmbeddedRedis
from server.services.lobby import LobbyLimits
from server.services.sessions import SessionLimits
from server.transport import TransportLimits
from shared import Board, action_text
from shared.protocol import Countdown, RaceSettings, Started


async def player(url: str, name: str) -> RaceClient:
    client = await RaceClient.connect(url)
    await client.hello(name)
    return client


async def run_race(url: str, index: int, actions: int, latencies: list[float]) -> None:
    seed = 1000 + index
    ann, bob = await player(url, "Ann"), await player(url, "Bob")
    seated = await ann.create(RaceSettings(seed=seed, undo=True))
    race_id = seated.race.race
    await bob.join(race_id)
    for client in (ann, bob):
        await client.wait_for(Countdown)
        await client.wait_for(Started)
    move = action_text(Board.deal(seed).legal_moves()[0])

    async def play(client: RaceClient) -> None:
        for number in range(actions):
            started = time.perf_counter()
            await client.move(race_id, move if number % 2 == 0 else "undo")
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(play(ann), play(bob))
    await ann.close()
    await bob.close()


async def measure(redis_url: str, races: int, actions: int) -> None:
    # Every client comes from 127.0.0.1: no per-address limits.
    limits = TransportLimits(
        rate_per_second=1e6, burst=1_000_000, max_connections_per_address=0, max_unidentified_per_address=0, max_handshakes_per_address=0
    )
    # No seed-pool filler: its solver worker would take a core from the measured server and clients.
    config = ServerConfig(
        redis_url=redis_url,
        port=0,
        countdown_seconds=0.05,
        limits=limits,
        seed_pool_target=0,
        sessions=SessionLimits(max_new_per_address=0),
        lobby=LobbyLimits(max_open_per_address=0),
    )
    async with RaceServer(config) as server:
        latencies: list[float] = []
        started = time.perf_counter()
        await asyncio.gather(*(run_race(server.url, index, actions, latencies) for index in range(races)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    quantiles = statistics.quantiles(latencies, n=100)
    print(f"races {races}, connections {2 * races}, moves {len(latencies)} in {elapsed:.2f} s (including setup)")
    print(f"throughput {len(latencies) / elapsed:,.0f} moves/s")
    print(f"round trip ms: p50 {quantiles[49] * 1000:.2f}  p90 {quantiles[89] * 1000:.2f}  p99 {quantiles[98] * 1000:.2f}  max {latencies[-1] * 1000:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--races", type=int, default=10)
    parser.add_argument("--actions", type=int, default=400, help="actions per player (at most 1000)")
    parser.add_argument("--redis", help="use this Redis instead of an embedded one")
    args = parser.parse_args()
    if args.redis:
        asyncio.run(measure(args.redis, args.races, args.actions))
        return
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), persistent=False) as redis_server:
        asyncio.run(measure(redis_server.url, args.races, args.actions))


if __name__ == "__main__":
    main()
