"""What each durability level costs: closed-loop moves on a local Redis Cluster at primary, replica and fsync.

    python3 benchmarks/durability_levels.py [--races 10] [--actions 300] [--rounds 2]

Starts a local cluster (3 primaries + 3 replicas, server/embedded_cluster.py) and, for each round, one race server
per level in turn (the same cluster; ``appendfsync always`` is set with CONFIG SET on every node for the fsync
runs and set back to ``everysec`` after), each driving the closed loop of benchmarks/race_moves.py (every player
alternates a legal move and ``undo`` as fast as replies come back). The machine is shared, so the levels are
interleaved round by round and the figures that matter are the ratios to ``primary`` measured in the same run.
The table in docs/BENCHMARKS.md comes from here.
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

from benchmarks.race_moves import run_race
from server.app import RaceServer, ServerConfig
from server.embedded_cluster import LocalCluster
from server.services.sessions import SessionLimits
from server.store.durability import Durability
from server.transport import TransportLimits


def set_appendfsync(cluster: LocalCluster, value: str) -> None:
    for index in range(len(cluster.nodes)):
        with cluster.client(index) as client:
            client.config_set("appendfsync", value)


async def measure(cluster: LocalCluster, durability: Durability, races: int, actions: int) -> tuple[float, list[float]]:
    # Every client comes from 127.0.0.1: no per-address limits (as benchmarks/race_moves.py).
    limits = TransportLimits(
        rate_per_second=1e6, burst=1_000_000, max_connections_per_address=0, max_unidentified_per_address=0, max_handshakes_per_address=0
    )
    config = ServerConfig(
        redis_url="", redis_cluster_url=cluster.url, durability=durability, port=0, countdown_seconds=0.05, limits=limits,
        seed_pool_target=0, sessions=SessionLimits(max_new_per_address=0),
    )  # fmt: skip
    async with RaceServer(config) as server:
        latencies: list[float] = []
        started = time.perf_counter()
        await asyncio.gather(*(run_race(server.url, index, actions, latencies) for index in range(races)))
        elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, sorted(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--races", type=int, default=10)
    parser.add_argument("--actions", type=int, default=300, help="actions per player (at most 1000)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    results: dict[Durability, list[tuple[float, list[float]]]] = {level: [] for level in Durability}
    with tempfile.TemporaryDirectory() as folder, LocalCluster(Path(folder)) as cluster:
        for round_number in range(args.rounds):
            for level in Durability:
                set_appendfsync(cluster, "always" if level is Durability.FSYNC else "everysec")
                rate, latencies = asyncio.run(measure(cluster, level, args.races, args.actions))
                results[level].append((rate, latencies))
                print(f"round {round_number + 1} {level}: {rate:,.0f} moves/s", flush=True)
    print(f"\n{args.races} races, {2 * args.races} connections, {args.actions} actions per player, {args.rounds} rounds")
    print("| durability | moves/s | vs primary | p50 ms | p90 ms | p99 ms | p50 vs primary |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    base_rate = statistics.mean(rate for rate, _ in results[Durability.PRIMARY])
    base_p50 = statistics.median(value for _, latencies in results[Durability.PRIMARY] for value in latencies)
    for level in Durability:
        rate = statistics.mean(value for value, _ in results[level])
        latencies = sorted(value for _, run in results[level] for value in run)
        quantiles = statistics.quantiles(latencies, n=100)
        print(
            f"| {level} | {rate:,.0f} | {rate / base_rate:.2f} | {quantiles[49] * 1000:.2f} | {quantiles[89] * 1000:.2f} | "
            f"{quantiles[98] * 1000:.2f} | {quantiles[49] / base_p50:.2f} |"
        )


if __name__ == "__main__":
    main()
