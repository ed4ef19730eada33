"""The ``flowergarden serve`` and ``flowergarden race`` commands, run as real processes."""

from __future__ import annotations

import asyncio
import itertools
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import redis
from race_helpers import player
from server_processes import LISTENING, cli_player, flowergarden, read_until, resign_and_read

from server.app import RaceServer
from shared.protocol import RaceSettings


async def create_a_race(url: str) -> None:
    ann = await player(url, "Ann")
    await ann.create(RaceSettings(seed=3))
    await ann.close()


def test_serve_starts_an_embedded_redis_and_postgresql_keeps_data_and_stops_on_sigterm(tmp_path: Path, postgres_folder: Path) -> None:
    server = flowergarden(
        "serve", "--port", "0", "--data-dir", str(tmp_path / "redis"), "--postgres-data-dir", str(postgres_folder), cwd=tmp_path
    )
    try:
        assert server.stdout is not None
        started = server.stdout.readline()
        assert "embedded Redis 7." in started and "on unix://" in started  # the newest found, no TCP port
        database = next(line for line in server.stdout if "embedded PostgreSQL" in line)  # after a note, as root
        assert "embedded PostgreSQL 16 (pgserver)" in database and f"host={postgres_folder}" in database
        port = next(int(found.group(1)) for line in server.stdout if (found := LISTENING.search(line)))
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    assert response.status == 200
                    break
            except OSError:
                time.sleep(0.1)
        asyncio.run(create_a_race(f"ws://127.0.0.1:{port}"))
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=20)
    assert server.returncode == 0, output
    assert "stopping" in output
    # Redis 7 keeps its append-only file in parts (appendonlydir/), 6.2 as one appendonly.aof
    assert sum(part.stat().st_size for part in (tmp_path / "redis").rglob("appendonly.aof*") if part.is_file()) > 0
    assert (postgres_folder / "data" / "PG_VERSION").read_text().strip() == "16"


async def test_race_command_plays_a_race_from_typed_lines(race_server: RaceServer) -> None:
    ann = await player(race_server.url, "Ann")
    seated = await ann.create(RaceSettings(seed=15))
    async with cli_player(ann, "race", "--server", race_server.url, "--name", "Bob", "--join", seated.race.race) as bob:
        assert bob.stdin is not None
        started = await read_until(bob, "Go!")
        bob.stdin.write("moves\n3S b>5\nKS 9>f\nstuck\n")
        bob.stdin.flush()
        played = await read_until(bob, "Your attempt ended")  # after 'stuck'
        result, rest = await resign_and_read(ann, seated.race.race, bob)
        output = started + played + rest
    assert result.players[1].moves == 1
    assert "The deal was seed 15" in output and "Column 1" in output
    assert "3S b>5" in output  # listed by 'moves'
    assert "(bad_place)" in output  # a source that is no place, explained before anything is sent
    assert result.winner is None and "Draw: both have 0/52 on foundations." in output  # neither put a card on a foundation


async def test_race_command_answers_board_and_moves_before_the_deal_at_once(race_server: RaceServer) -> None:
    """Only what acts on the race waits for it to run (tests/test_cli_line_mode.py); the board and the moves list
    answer at once."""
    host = await player(race_server.url, "Ann")
    async with cli_player(host, "race", "--server", race_server.url, "--name", "Bob", "--seed", "15", "--private") as bob:
        assert bob.stdin is not None
        await read_until(bob, "Waiting for an opponent")
        bob.stdin.write("board\nmoves\n")
        bob.stdin.flush()
        await read_until(bob, "No deal yet.")
        assert "No legal move" in await read_until(bob, "No legal move")


def test_serve_says_when_its_default_spectator_delay_is_below_the_minimum(redis_url: str) -> None:
    """An operator who sets --spectator-delay 5 learns at once that public races lag the minimum anyway."""
    server = flowergarden("serve", "--redis", redis_url, "--port", "0", "--seed-pool-target", "0", "--spectator-delay", "5")
    try:
        assert server.stdout is not None
        before = list(itertools.takewhile(lambda line: not LISTENING.search(line), server.stdout))
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=20)
    said = " ".join(before)
    assert "default spectator delay 5 s is below the minimum 60 s" in said and "public races lag 60 s" in said


def test_serve_at_durability_fsync_starts_its_embedded_redis_to_fsync_every_write(tmp_path: Path, postgres_folder: Path) -> None:
    """The embedded Redis is the server's own: --durability fsync needs no Redis set up by hand."""
    server = flowergarden(
        "serve", "--port", "0", "--seed-pool-target", "0", "--durability", "fsync", "--data-dir", str(tmp_path / "redis"),
        "--postgres-data-dir", str(postgres_folder),
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = next(found.group(0) for line in server.stdout if (found := re.search(r"unix://\S+\?db=0", line)))
        assert any(LISTENING.search(line) for line in server.stdout)
        assert redis.Redis.from_url(url).config_get("appendfsync") == {"appendfsync": "always"}
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=20)


def test_an_unreachable_server_is_explained_not_only_given_as_an_errno() -> None:
    racer = flowergarden("race", "--server", "ws://127.0.0.1:1", "--plain", stdin=subprocess.DEVNULL)
    output, _ = racer.communicate(timeout=30)
    assert racer.returncode == 1
    assert "ws://127.0.0.1:1: nothing answers there (connection refused): is 'flowergarden serve' running there" in output
    assert "Traceback" not in output
