"""What one abusive address costs everybody else: a reference race's move round trips, quiet and under each flood.

    python3 benchmarks/flood_phases.py [--seconds 20] [--phases quiet,logins,half_sent,silent,watch_churn] [--server-checkout DIR]

Starts an embedded Redis and a real ``flowergarden serve`` with its default limits (INFO logs to a file), seats a
reference race between two players on their own loopback addresses (127.0.0.2, 127.0.0.3), each making one move
(or its undo) every 50 ms, and runs the phases one after the other, each flood from one address of its own:

- ``quiet``: nothing else;
- ``logins``: 32 connections of 127.0.0.20 trying wrong passwords of one account as fast as they are answered
  (each check a password hash unless a limit refuses it first);
- ``half_sent``: 1,100 connections of 127.0.0.21 that send the start of a WebSocket handshake and no more, each
  opened again 1 s after the server closes it;
- ``silent``: 2,000 connections of 127.0.0.22 that complete the WebSocket handshake and then say nothing, each
  opened again 1 s after the server closes it;
- ``watch_churn``: 64 connections of 127.0.0.23 (said hello) that ``watch`` and ``unwatch`` the reference race
  in a loop, 30 requests a second each (the frame rate).

Prints, per phase, the reference race's p50/p99 round trip and the p99's ratio to the quiet one (the target: under
2), the server's CPU, its log lines, and how the flood was answered. Everything runs on this machine; each flood
runs in a process of its own at the lowest priority (an attacker's CPU is on its own machine), but it still competes
for the cores: run it on a quiet machine, or say that it was not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect

from benchmarks.load.command import LISTENING
from client import RaceClient, ServerError
from server.embedded_redis import EmbeddedRedis
from shared import Board, Rules, move_text
from shared.protocol import RaceSettings, Started

PHASES = ("quiet", "logins", "half_sent", "silent", "watch_churn")
SEED = 7
MOVE_EVERY = 0.05
"""Seconds between a reference player's moves (each player: 20 a second)."""
REOPEN_AFTER = 1.0
"""Seconds a flood connection waits, once the server closed it, before it is opened again."""
PASSWORD = "the reference password"


@dataclass(slots=True)
class Phase:
    """What one phase measured."""

    name: str
    round_trips: list[float] = field(default_factory=list)
    answers: Counter[str] = field(default_factory=Counter)
    """How the flood was answered (HTTP status, close, error code)."""
    cpu_seconds: float = 0.0
    seconds: float = 0.0
    log_lines: int = 0
    tracebacks: int = 0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def connect_from(url: str, source: str, name: str, token: str | None = None) -> RaceClient:
    """A client that said hello from loopback ``source`` (another client address to the server), with ``token``'s
    session if given."""
    connection = await connect(url, local_addr=(source, 0), compression=None, max_size=1 << 20, open_timeout=60)
    client = RaceClient(connection, url=url, request_timeout=60)
    await client.hello(name, token=token)
    return client


async def many_from(url: str, source: str, name: str, count: int) -> list[RaceClient]:
    """``count`` connections of one session from ``source`` (one address has 60 new sessions an hour)."""
    first = await connect_from(url, source, name)
    assert first.session is not None
    return [first, *[await connect_from(url, source, name, first.session.token) for _ in range(count - 1)]]


async def reference_race(url: str) -> tuple[RaceClient, RaceClient, str, str]:
    ann, bob = await connect_from(url, "127.0.0.2", "Ann"), await connect_from(url, "127.0.0.3", "Bob")
    seated = await ann.create(RaceSettings(seed=SEED, undo=True, spectator_delay=0))
    race = seated.race.race
    await bob.join(race)
    await ann.wait_for(Started)
    await bob.wait_for(Started)
    return ann, bob, race, move_text(Board.deal(SEED, Rules(undo=True)).legal_moves()[0])


async def play(client: RaceClient, race: str, move: str, until: float, round_trips: list[float]) -> None:
    """Move every :data:`MOVE_EVERY` s until ``until``; each round trip (request to reply) is recorded."""
    next_at = time.monotonic()
    while (now := time.monotonic()) < until:
        if next_at > now:
            await asyncio.sleep(next_at - now)
        next_at += MOVE_EVERY
        started = time.perf_counter()
        await client.move(race, move if client._next_seq.get(race, 0) % 2 == 0 else "undo")
        round_trips.append(time.perf_counter() - started)


def reset(writer: asyncio.StreamWriter) -> None:
    """Close a flood connection with a reset (no TIME_WAIT: its address's ports are not used up)."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()


STATUS = re.compile(rb"^HTTP/1\.1 (\d{3})")


async def raw_slot(port: int, source: str, request: bytes, answers: Counter[str]) -> None:
    """One flood connection, opened again :data:`REOPEN_AFTER` s after each close: send ``request``, then read (and
    count what the server answered) until the server closes."""
    while True:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        except OSError as error:
            answers[f"connect failed ({error.strerror})"] += 1
            await asyncio.sleep(REOPEN_AFTER)
            continue
        try:
            writer.write(request)
            first = await reader.read(4096)
            status = STATUS.match(first)
            answers[f"HTTP {status.group(1).decode()}" if status else ("closed" if not first else "other")] += 1
            while first and await reader.read(4096):
                pass
        except OSError:
            pass
        finally:
            reset(writer)
        await asyncio.sleep(REOPEN_AFTER)


def handshake(port: int, *, complete: bool) -> bytes:
    head = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    if not complete:
        return head.encode()
    return (head + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


async def login_flood(clients: list[RaceClient], handle: str, answers: Counter[str]) -> None:
    async def guess(client: RaceClient) -> None:
        attempt = 0
        while True:
            attempt += 1
            try:
                await client.login(handle, f"wrong guess {attempt}")
            except ServerError as error:
                answers[error.code] += 1
                if error.code != "bad_credentials":
                    await asyncio.sleep(0.05)  # refused: an attacker tries again at once (but not in a busy loop)

    await asyncio.gather(*(guess(client) for client in clients))


async def watch_churn(clients: list[RaceClient], race: str, answers: Counter[str]) -> None:
    async def churn(client: RaceClient) -> None:
        next_at = time.monotonic()
        while True:
            for request in (client.watch, client.unwatch):
                try:
                    await request(race)
                    answers["ok"] += 1
                except ServerError as error:
                    answers[error.code] += 1
                next_at += 1 / 30
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    await asyncio.gather(*(churn(client) for client in clients))


async def run_phases(url: str, port: int, pid: int, log: Path, names: list[str], seconds: float) -> list[Phase]:
    owner = await connect_from(url, "127.0.0.4", "Owner")
    handle = f"target{os.getpid()}"
    await owner.register(handle, PASSWORD)
    ann, bob, race, move = await reference_race(url)
    results = []
    try:
        for name in names:
            phase = Phase(name)
            flood = None
            if name != "quiet":  # in a process of its own, so that its CPU does not delay the reference players' replies
                flood = await asyncio.create_subprocess_exec(
                    sys.executable, __file__, "--flood", name, "--url", url, "--race", race, "--handle", handle, "--seconds", str(seconds + 1),
                    stdout=asyncio.subprocess.PIPE, cwd=ROOT,
                )  # fmt: skip
                assert flood.stdout is not None
                await flood.stdout.readline()  # "flooding": its connections are set up
                await asyncio.sleep(1.0)  # the flood builds up first
            started, cpu, lines = time.monotonic(), cpu_seconds(pid), log.read_text(errors="replace").splitlines()
            until = started + seconds
            await asyncio.gather(play(ann, race, move, until, phase.round_trips), play(bob, race, move, until, phase.round_trips))
            phase.seconds, phase.cpu_seconds = time.monotonic() - started, cpu_seconds(pid) - cpu
            new_lines = log.read_text(errors="replace").splitlines()[len(lines) :]
            phase.log_lines, phase.tracebacks = len(new_lines), sum(line.startswith("Traceback") for line in new_lines)
            if flood is not None:
                assert flood.stdout is not None
                phase.answers.update(json.loads(await flood.stdout.readline() or b"{}"))
                await flood.wait()
            results.append(phase)
            print(report_line(phase, results[0]), flush=True)
            if flood is not None:
                await asyncio.sleep(11)  # the flood's last connections time out before the next phase
    finally:
        for client in (ann, bob, owner):
            await client.close()
    return results


async def flood_process(name: str, url: str, race: str, handle: str, seconds: float) -> None:
    """The body of ``--flood NAME``: set up, print ``flooding``, flood for ``seconds``, print the answers as JSON.
    At the lowest priority: an attacker's own CPU is on its own machine, not the server's."""
    os.nice(19)
    port = int(url.rsplit(":", 1)[1])
    answers: Counter[str] = Counter()
    attack: Awaitable[object]
    if name == "logins":
        clients = await many_from(url, "127.0.0.20", "Guess", 32)
        attack = login_flood(clients, handle, answers)
    elif name == "watch_churn":
        clients = await many_from(url, "127.0.0.23", "Churn", 64)
        attack = watch_churn(clients, race, answers)
    else:
        clients = []
        complete = name == "silent"
        request, source, count = handshake(port, complete=complete), "127.0.0.22" if complete else "127.0.0.21", 2000 if complete else 1100
        attack = asyncio.gather(*(raw_slot(port, source, request, answers) for _ in range(count)))
    print("flooding", flush=True)
    task = asyncio.ensure_future(attack)
    await asyncio.sleep(seconds)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    print(json.dumps(answers), flush=True)


def report_line(phase: Phase, quiet: Phase) -> str:
    p50, p99 = percentile(phase.round_trips, 0.5) * 1000, percentile(phase.round_trips, 0.99) * 1000
    ratio = p99 / (percentile(quiet.round_trips, 0.99) * 1000)
    answers = ", ".join(f"{key} {count:,}" for key, count in phase.answers.most_common(4)) or "-"
    return (
        f"| {phase.name} | {len(phase.round_trips):,} | {p50:.1f} | {p99:.1f} | {ratio:.2f} | "
        f"{phase.cpu_seconds / phase.seconds * 100:.0f} % | {phase.log_lines:,} ({phase.tracebacks} tracebacks) | {answers} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase (default 20)")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated, from {', '.join(PHASES)} (quiet first)")
    parser.add_argument("--server-checkout", type=Path, default=ROOT, help="run the server of this checkout (default: this one)")
    parser.add_argument("--flood", choices=PHASES[1:], help=argparse.SUPPRESS)  # the flood process of a phase
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--race", help=argparse.SUPPRESS)
    parser.add_argument("--handle", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        asyncio.run(flood_process(args.flood, args.url, args.race, args.handle, args.seconds))
        return
    names = [name.strip() for name in args.phases.split(",") if name.strip()]
    if not names or names[0] != "quiet" or not set(names) <= set(PHASES):
        parser.error(f"--phases: quiet first, then any of {', '.join(PHASES[1:])}")
    with tempfile.TemporaryDirectory() as folder:
        store = EmbeddedRedis(Path(folder), persistent=False)
        store.start()
        log = Path(folder) / "server.log"
        with log.open("w") as output:
            server = subprocess.Popen(
                [sys.executable, "-m", "cli", "serve", "--redis", store.url, "--port", "0", "--countdown", "0.2", "--seed-pool-target", "0"],
                stdout=output, stderr=subprocess.STDOUT, text=True, cwd=args.server_checkout,
                env={**os.environ, "PYTHONPATH": str(args.server_checkout.resolve()), "FLOWERGARDEN_MAX_ACTIONS": "1000000"},
            )  # fmt: skip
        try:
            port = listening_port(log, server)
            print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.seconds:g} s per phase")
            print("| phase | moves | p50 ms | p99 ms | p99 / quiet | server CPU | log lines | flood answered |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- |")
            asyncio.run(run_phases(f"ws://127.0.0.1:{port}", port, server.pid, log, names, args.seconds))
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            server.terminate()
            server.wait(10)
            store.stop()


def listening_port(log: Path, server: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (found := LISTENING.search(log.read_text(errors="replace"))) is not None:
            return int(found.group(1))
        if server.poll() is not None:
            raise SystemExit(f"the server exited:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    raise SystemExit("the server did not start listening within 60 s")


if __name__ == "__main__":
    main()
