"""Figures behind docs/FAIRPLAY.md: how long a solver's winning line is, how fast a script copies one through the
server, and what the post-race analysis of a race costs.

    python3 benchmarks/fairplay_pace.py [--seeds 1..200] [--budget 1.0]

For each seed of the range: one solve from the start (the line a player could be fed), then the post-race
analysis of a race in which one player followed that line for its first half and then played the first legal
move each time (the analysis worker's work: the bisection and the signals). Then a script copies one full line
move by move through a real server (embedded Redis, default limits: the frame rate limit of 30/s after a burst
of 100 applies) and the seconds per move are printed: as the script's clock saw them, and as the server stored
them (each move event's time, the statistics the analysis keeps per attempt: ``move_times``, docs/FAIRPLAY.md).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client import RaceClient, ServerError
from server.app import RaceServer, ServerConfig
from server.embedded_redis import EmbeddedRedis
from server.services.analysis import move_time_stats
from shared import Board, Rules, action_text, parse_action
from shared.protocol import MoveMade, RaceResult, RaceSettings, Started
from shared.solver import Budget, Verdict, solve
from shared.solver.analysis import analyse_line, line_signals


def diverging_line(seed: int, line: list[str]) -> list[str]:
    """The first half of ``line``, then the first legal move each time until none is left."""
    board = Board.deal(seed)
    played = line[: len(line) // 2]
    for move in played:
        board.play(parse_action(move))
    while len(played) < 300:
        legal = board.legal_moves()
        if not legal:
            break
        board.push(legal[0])
        played.append(action_text(legal[0]))
    return played


async def copy_pace(line: list[str], seed: int) -> tuple[float, dict[str, float | int]]:
    """Seconds per move of a script that plays ``line`` through a real server, each move acknowledged; and the
    move-time statistics of that attempt from the times the server stored with its moves."""
    with tempfile.TemporaryDirectory() as folder:
        redis = EmbeddedRedis(Path(folder), persistent=False)
        redis.start()
        try:
            config = ServerConfig(redis_url=redis.url, port=0, countdown_seconds=0.05, seed_pool_target=0, analysis=False)
            async with RaceServer(config) as server:
                ann, bob = await RaceClient.connect(server.url), await RaceClient.connect(server.url)
                await ann.hello("Ann")
                await bob.hello("Bob")
                seated = await ann.create(RaceSettings(seed=seed))
                await bob.join(seated.race.race)
                await ann.wait_for(Started)
                started = time.perf_counter()
                for move in line:  # within the server's frame rate limit (30/s after a burst of 100): refused frames are retried
                    while True:
                        try:
                            await ann.move(seated.race.race, move)
                            break
                        except ServerError as error:
                            if error.code != "rate_limited":
                                raise
                            await asyncio.sleep(1 / 30)
                elapsed = time.perf_counter() - started
                await ann.wait_for(RaceResult)  # the line clears the board: the race is over
                # Read back by Bob, whose connection has its frame budget left (the copier spent Ann's).
                start_at = (await bob.replay_page(seated.race.race, limit=1)).race.start_at
                stored = [event.at async for event in bob.replay(seated.race.race) if isinstance(event, MoveMade) and event.slot == 0]
                await ann.close()
                await bob.close()
        finally:
            redis.stop()
    return elapsed / len(line), move_time_stats(start_at, stored)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1..200", metavar="A..B")
    parser.add_argument("--budget", type=float, default=1.0, metavar="SECONDS")
    args = parser.parse_args()
    first, last = (int(part) for part in args.seeds.split(".."))
    lengths: list[int] = []
    solve_seconds: list[float] = []
    analysis_seconds: list[float] = []
    lines: dict[int, list[str]] = {}
    for seed in range(first, last + 1):
        started = time.perf_counter()
        result = solve(Board.deal(seed), Budget(seconds=args.budget))
        solve_seconds.append(time.perf_counter() - started)
        if result.verdict is not Verdict.SOLVED:
            continue
        line = [action_text(move) for move in result.moves]
        lines[seed] = line
        lengths.append(len(line))
        started = time.perf_counter()
        played = diverging_line(seed, line)
        analyse_line(seed, Rules(), played, Budget(seconds=2.0))
        line_signals(seed, Rules(), played, Budget(seconds=0.25), 40)
        analysis_seconds.append(time.perf_counter() - started)
        print(f"\r{seed - first + 1}/{last - first + 1} seeds", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seed, line = max(lines.items(), key=lambda item: len(item[1]))
    pace, stored = asyncio.run(copy_pace(line, seed))

    def q(values: Sequence[float], p: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    print(f"seeds {args.seeds}, budget {args.budget} s: {len(lengths)} winnable")
    print(f"winning line length (moves): median {statistics.median(lengths)}, p10 {q(lengths, 0.1)}, p90 {q(lengths, 0.9)}, max {max(lengths)}")
    print(f"solve time to a winning line (s): median {statistics.median(solve_seconds):.4f}, p90 {q(solve_seconds, 0.9):.3f}")
    print(f"post-race analysis of one line (s): median {statistics.median(analysis_seconds):.2f}, p90 {q(analysis_seconds, 0.9):.2f}, max {max(analysis_seconds):.2f}")
    print(f"scripted copy through the server: {pace * 1000:.2f} ms per move ({len(line)} moves in {pace * len(line):.2f} s)")
    print(f"the copier's attempt as the server stored it (move_times): {stored}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
