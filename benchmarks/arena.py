"""An arena of many players at human pace (issue 31): how soon a free player is paired, and how far the pushed
standings trail a result.

    python3 benchmarks/arena.py [--players 1000] [--seconds 120] [--race-seconds 40] [--move-every 3]
                                [--workers 4] [--processes 1] [--json]

Starts an embedded Redis and ``--processes`` ``flowergarden serve`` processes (post-race analysis off, the per-address
limits lifted: every player comes from 127.0.0.1), writes ``--players`` bot accounts, each logged in to a session, and
one arena that pairs for ``--seconds`` through the server's store (registering would cost two scrypt hashes a player,
seconds each on a busy machine; ``arena_create`` counts whole minutes). Each player (spread over ``--workers`` client processes, round robin over the server processes)
joins it and, every time it is paired, takes its seat, plays a random legal move every ``--move-every`` seconds
(jittered) and resigns after about ``--race-seconds`` (0.5 to 1.5 times), then is free again; so about half the
players are in a race at any time. It measures, on its own clock:

- **pairing**: from the moment a player is free (its join answered, or its race's result received) to its
  ``arena_paired``;
- **standings**: from a player's race result to the first pushed ``arena_standings`` that counts that race.

and prints their p50/p99/max, the races played and booked, the load average before and after, and checks that no
player was paired while it raced and that every race played was booked once. Figures on a busy machine: say so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.load.command import wait_listening
from client import RaceClient
from client.race_client import ServerError
from shared import Board, Rules, move_text
from shared.protocol import ArenaPaired, ArenaStandings, AttemptEnded, Countdown, RaceResult, Started
from shared.race import board_from_layout

SERVER_CONFIG = """
analysis = false
seed_pool_target = 0
[limits]
max_connections_per_address = 100000
max_unidentified_per_address = 100000
max_handshakes_per_address = 100000
[sessions]
max_new_per_address = 0
[login]
per_address = 0
overall = 0
registrations_per_address = 0
free_failures_per_address = 0
"""
"""Every player of the benchmark comes from 127.0.0.1: no per-address budget (and no solver work besides the races)."""


REQUEST_TIMEOUT = 120.0
"""How long a player waits for a reply: an overloaded server answers late rather than never (the figures say how late)."""


@dataclass
class PlayerFigures:
    """What one worker's players saw."""

    pairing_ms: list[float] = field(default_factory=list)
    standings_ms: list[float] = field(default_factory=list)
    races: list[str] = field(default_factory=list)
    """Every race a player of this worker was paired into (each race twice over the whole run: one per side)."""
    still_free_ms: list[float] = field(default_factory=list)
    """How long each player free when the clock ran out had waited (a pairing that never came is no figure above)."""
    moves: int = 0
    paired_while_racing: int = 0
    errors: list[str] = field(default_factory=list)


class Player:
    """One bot account in the arena: paired, plays, resigns, free again, until the arena's clock ran out."""

    def __init__(self, client: RaceClient, arena: str, end_at: float, pace: float, race_seconds: float, figures: PlayerFigures) -> None:
        self.client = client
        self.arena = arena
        self.end_at = end_at
        self.pace = pace
        self.race_seconds = race_seconds
        self.figures = figures
        self.rng = random.Random()
        self.race: str | None = None
        self.slot = 0
        self.board: Board | None = None
        self.next_move = math.inf
        self.resign_at = math.inf
        self.free_since = time.monotonic()
        self.games = 0
        self.result_at: float | None = None

    async def play(self) -> None:
        """Race until the arena is over and this player is free (and its last result shows in the standings)."""
        handle = self.client.session.account if self.client.session else None
        end = time.monotonic() + self.end_at - time.time()
        try:
            await self._until_over(handle)
        finally:
            if self.race is None and self.free_since < end:
                self.figures.still_free_ms.append((end - self.free_since) * 1000)

    async def _until_over(self, handle: str | None) -> None:
        while self.race is not None or time.time() < self.end_at or self.result_at is not None:
            due = min(self.next_move, self.resign_at) - time.monotonic()
            try:
                event = await self.client.next_event(max(0.01, min(due, 5.0)))
            except TimeoutError:
                if time.time() > self.end_at + 30:
                    return  # the last standings never came: counted as missing, not waited for forever
                await self._act()
                continue
            if isinstance(event, ArenaStandings):
                self._standings(event, handle)
            elif isinstance(event, ArenaPaired):
                await self._paired(event)
            elif getattr(event, "race", None) == self.race:
                self._race_event(event)
            await self._act()

    def _standings(self, event: ArenaStandings, handle: str | None) -> None:
        if self.result_at is None:
            return
        mine = next((line for line in event.standings if line.handle == handle), None)
        if mine is not None and mine.games >= self.games:
            self.figures.standings_ms.append((time.monotonic() - self.result_at) * 1000)
            self.result_at = None

    async def _paired(self, event: ArenaPaired) -> None:
        if self.race is not None:
            self.figures.paired_while_racing += 1
        self.figures.pairing_ms.append((time.monotonic() - self.free_since) * 1000)
        self.figures.races.append(event.race)
        self.race, self.slot = event.race, event.slot
        synced = await self.client.sync(event.race)  # its countdown and start may be past: they come in the reply
        if synced.deal is not None:
            self.board = board_from_layout(synced.deal.columns, synced.deal.bouquet, Rules())
        if synced.race.start_at is not None:
            self._started(time.monotonic() + max(0.0, synced.race.start_at / 1000 - time.time()))

    def _started(self, at: float) -> None:
        """The race starts (started) at monotonic time ``at``: the first move and the resignation are due from then."""
        self.next_move = at + self.rng.uniform(0.5, 1.5) * self.pace
        self.resign_at = at + self.rng.uniform(0.5, 1.5) * self.race_seconds

    def _race_event(self, event: Any) -> None:
        now = time.monotonic()
        if isinstance(event, Countdown) and self.board is None:
            self.board = board_from_layout(event.columns, event.bouquet, Rules())
        elif isinstance(event, Started) and self.resign_at == math.inf:
            self._started(now)
        elif isinstance(event, AttemptEnded) and event.slot == self.slot:
            self.next_move = self.resign_at = math.inf
        elif isinstance(event, RaceResult):
            self.race, self.board = None, None
            self.next_move = self.resign_at = math.inf
            self.games += 1
            self.result_at = self.free_since = now

    async def _act(self) -> None:
        """Move or resign when due (a refusal: the race ended meanwhile)."""
        now = time.monotonic()
        if self.race is None:
            return
        try:
            if now >= self.resign_at:
                self.next_move = self.resign_at = math.inf
                await self.client.resign(self.race)
            elif now >= self.next_move and self.board is not None:
                legal = self.board.legal_moves()
                if not legal:
                    self.next_move = math.inf
                    return
                move = self.rng.choice(legal)
                await self.client.move(self.race, move_text(move))
                self.board.play(move)
                self.figures.moves += 1
                self.next_move = now + self.rng.uniform(0.5, 1.5) * self.pace
        except ServerError:
            self.next_move = math.inf


async def run_worker(order: dict[str, Any]) -> PlayerFigures:
    """One client process: connect its players (resuming their sessions), say ``ready``, wait for the arena (a line
    on stdin), join them to it, play until the arena is over."""
    figures = PlayerFigures()
    urls = order["urls"]

    async def connected(index: int, handle: str, token: str) -> RaceClient:
        client = await RaceClient.connect(urls[index % len(urls)], open_timeout=60, request_timeout=REQUEST_TIMEOUT)
        await client.hello(handle, token)  # the session the benchmark logged in (see accounts)
        return client

    accounts = order["accounts"]
    clients: list[RaceClient] = []
    for start in range(0, len(accounts), 25):  # 25 handshakes at a time
        clients += await asyncio.gather(*(connected(start + offset, *account) for offset, account in enumerate(accounts[start : start + 25])))
    print("ready", flush=True)
    arena = json.loads(await asyncio.to_thread(sys.stdin.readline))
    players = [Player(client, arena["arena"], arena["end_at"], order["pace"], order["race_seconds"], figures) for client in clients]

    async def join(player: Player) -> None:
        await player.client.arena_join(arena["arena"])
        player.free_since = time.monotonic() + max(0.0, arena["start_at"] - time.time())  # free from the arena's start on

    for start in range(0, len(players), 10):  # each join computes the standings (a read per player): a few at a time
        await asyncio.gather(*(join(player) for player in players[start : start + 10]))
    results = await asyncio.gather(*(player.play() for player in players), return_exceptions=True)
    figures.errors = [repr(result) for result in results if isinstance(result, BaseException)][:5]
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    return figures


def percentile(values: list[float], share: float) -> float | None:
    """The ``share`` quantile (nearest rank) of ``values``; None without any."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


async def accounts(redis_url: str, count: int, prefix: str) -> list[tuple[str, str]]:
    """``count`` new bot accounts, each logged in to a session: (handle, session token). Written through the server's
    own store and session service rather than ``register``: each registration and login costs a slow scrypt hash
    (about 4 s each at load 12 here), which would be the benchmark's whole time; the players resume the sessions
    with ``hello`` as any reconnecting client does."""
    from server.services.sessions import SessionLimits, SessionService
    from server.store import AccountRecord, PlayerStore, RedisSessionStore, connect_redis

    redis = connect_redis(redis_url, max_connections=8)
    try:
        players, sessions = PlayerStore(redis), SessionService(RedisSessionStore(redis), SessionLimits(max_new_per_address=0))
        made = []
        for index in range(count):
            handle, player = f"{prefix}{index}", secrets.token_urlsafe(9)
            account = AccountRecord(handle, player, bot=True, secret_hash="00" * 32, salt="00" * 16, kdf="scrypt:n=2,r=1,p=1,len=32", created_at=0)
            assert await players.register(account), f"the handle {handle} is taken"
            guest = await sessions.hello(handle, None, "127.0.0.1")
            made.append((handle, (await sessions.log_in(guest, player=player, handle=handle, bot=True)).token))
    finally:
        await redis.aclose()
    return made


async def open_arena(redis_url: str, lead: float, seconds: float, race_seconds: float) -> tuple[str, float, float]:
    """A new arena pairing for ``seconds`` from ``lead`` seconds from now (time for the players to join), written
    through the server's store (``arena_create`` starts at once and counts whole minutes); its id, its start and its
    end (s, this machine's clock, which is Redis')."""
    from server.services.race import new_race_id
    from server.store import ArenaMeta, ArenaStore, connect_redis

    redis = connect_redis(redis_url, max_connections=2)
    try:
        seconds_now, micros = await redis.time()
        start = seconds_now * 1000 + micros // 1000 + round(lead * 1000)
        arena = new_race_id()
        await ArenaStore(redis).create(arena, ArenaMeta("benchmark arena", start, start + round(seconds * 1000), max(10, round(race_seconds * 3))))
    finally:
        await redis.aclose()
    return arena, start / 1000, (start + seconds * 1000) / 1000


def start_servers(redis_url: str, count: int, folder: Path) -> list[tuple[subprocess.Popen[str], int]]:
    """``count`` server processes on one Redis; each with the port it listens on."""
    config = folder / "arena-bench.toml"
    config.write_text(SERVER_CONFIG)
    servers = []
    for _ in range(count):
        process = subprocess.Popen(
            [sys.executable, "-m", "cli", "serve", "--redis", redis_url, "--port", "0", "--countdown", "1", "--config", str(config),
             "--log-level", "WARNING"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        servers.append((process, wait_listening(process, "race server")))
    return servers


def launch_workers(orders: list[dict[str, Any]]) -> list[subprocess.Popen[str]]:
    """One client process per order (its first line on stdin); returns once every one has connected its players."""
    workers = []
    for order in orders:
        process = subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert process.stdin is not None
        process.stdin.write(json.dumps(order) + "\n")
        process.stdin.flush()
        workers.append(process)
    for process in workers:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"a client process did not start: {line!r}")
    return workers


def go(workers: list[subprocess.Popen[str]], arena: str, start_at: float, end_at: float) -> None:
    """Tell every client process the arena to join."""
    for process in workers:
        assert process.stdin is not None
        process.stdin.write(json.dumps({"arena": arena, "start_at": start_at, "end_at": end_at}) + "\n")
        process.stdin.close()


def report(args: argparse.Namespace, figures: list[PlayerFigures], booked: int, load: tuple[tuple[float, ...], tuple[float, ...]], wall: float) -> dict[str, Any]:
    """The run's figures and checks as one map."""
    pairing = [value for part in figures for value in part.pairing_ms]
    standings = [value for part in figures for value in part.standings_ms]
    sides = [race for part in figures for race in part.races]
    races = set(sides)

    def summary(values: list[float]) -> dict[str, Any]:
        found = {"p50_ms": percentile(values, 0.5), "p99_ms": percentile(values, 0.99), "max_ms": max(values, default=None)}
        return {"count": len(values)} | {name: None if value is None else round(value) for name, value in found.items()}

    return {
        "players": args.players, "seconds": args.seconds, "race_seconds": args.race_seconds, "move_every": args.move_every,
        "server_processes": args.processes, "client_workers": args.workers, "wall_seconds": round(wall, 1),
        "pairing": summary(pairing), "standings": summary(standings),
        "still_free_at_the_end": summary([value for part in figures for value in part.still_free_ms]),
        "races_played": len(races), "races_booked": booked, "races_at_a_time": round(len(races) * args.race_seconds / max(1.0, args.seconds), 1),
        "moves": sum(part.moves for part in figures), "paired_while_racing": sum(part.paired_while_racing for part in figures),
        "one_sided_races": sum(1 for race in races if sides.count(race) != 2) if len(sides) < 200_000 else None,
        "load_before": load[0], "load_after": load[1], "cpus": os.cpu_count(), "errors": [error for part in figures for error in part.errors][:5],
    }  # fmt: skip


def print_report(result: dict[str, Any]) -> None:
    """The figures as lines."""
    for name in ("pairing", "standings"):
        part = result[name]
        print(f"{name:>9}: {part['count']} measured, p50 {part['p50_ms']} ms, p99 {part['p99_ms']} ms, max {part['max_ms']} ms")
    print(f"{result['players']} players, {result['races_played']} races played (about {result['races_at_a_time']} at a time), "
          f"{result['races_booked']} booked, {result['moves']} moves in {result['wall_seconds']} s")  # fmt: skip
    free = result["still_free_at_the_end"]
    print(f"still free when the clock ran out: {free['count']} players, the longest waiting {free['max_ms']} ms")
    print(f"checks: {result['paired_while_racing']} pairings while racing, {result['one_sided_races']} races seen by one side only")
    print(f"load average before {result['load_before']}, after {result['load_after']} on {result['cpus']} CPUs")
    if result["errors"]:
        print("errors:", *result["errors"], sep="\n  ")


async def booked_races(url: str, arena: str) -> int:
    """How many races the arena's record holds (each once)."""
    reader = await RaceClient.connect(url)
    try:
        await reader.hello("bench reader")
        record = await reader.arena_record(arena)
    finally:
        await reader.close()
    return len({game.race for player in record.players for game in player.games})


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole benchmark: Redis, servers, accounts, arena, workers, figures."""
    from server.embedded_redis import EmbeddedRedis

    load_before = os.getloadavg()
    started = time.time()
    with tempfile.TemporaryDirectory() as folder:
        store = EmbeddedRedis(Path(folder), persistent=False)
        store.start()
        servers = start_servers(store.url, args.processes, Path(folder))
        try:
            urls = [f"ws://127.0.0.1:{port}" for _, port in servers]
            prefix = f"Ab{random.randrange(36**4):04x}"
            made = asyncio.run(accounts(store.url, args.players, prefix))
            orders = [
                {"accounts": made[index :: args.workers], "urls": urls, "pace": args.move_every, "race_seconds": args.race_seconds}
                for index in range(args.workers)
            ]  # fmt: skip
            workers = launch_workers(orders)
            lead = 2 + args.players / 100  # the players join meanwhile
            arena, start_at, end_at = asyncio.run(open_arena(store.url, lead, args.seconds, args.race_seconds))
            go(workers, arena, start_at, end_at)
            figures = []
            for worker in workers:
                assert worker.stdout is not None
                output = worker.stdout.read()  # it ends by itself after the arena's clock
                worker.wait(60)
                figures.append(PlayerFigures(**json.loads(output)))
            time.sleep(2)  # the last round books the last races
            booked = asyncio.run(booked_races(urls[0], arena))
        finally:
            for process, _ in servers:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
            store.stop()
    return report(args, figures, booked, (load_before, os.getloadavg()), time.time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=1000, help="players in the arena (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the players are paired (default %(default)s)")
    parser.add_argument("--race-seconds", type=float, default=40.0, help="mean race length before a resignation (default %(default)s)")
    parser.add_argument("--move-every", type=float, default=3.0, help="mean seconds between a player's moves (default %(default)s)")
    parser.add_argument("--workers", type=int, default=4, help="client processes (default %(default)s)")
    parser.add_argument("--processes", type=int, default=1, help="server processes on the one Redis (default %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(asdict(asyncio.run(run_worker(json.loads(sys.stdin.readline()))))))
        return
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        print_report(result)


if __name__ == "__main__":
    main()
