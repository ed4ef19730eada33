"""Every limit of docs/RELIABILITY.md's table holds under concurrency: a limit is taken in the same step as its check,
before the work it guards, so many requests at once on a real ``flowergarden serve`` process never pass it together."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from collections.abc import Awaitable, Sequence
from pathlib import Path

from conftest import SpawnServers
from lobby_helpers import wait_until
from player_helpers import PASSWORD, from_address, new_handle, registered
from race_helpers import player
from server_processes import ServerProcess
from test_fairplay_solve_from import finished_race

from client import RaceClient, ServerError
from shared.protocol import RaceSettings


def config_file(folder: Path, text: str) -> str:
    """A TOML config file for a spawned server, and the flag that reads it."""
    path = folder / "limits.toml"
    path.write_text(text)
    return str(path)


async def outcomes(requests: Sequence[Awaitable[object]]) -> Counter[str]:
    """Run ``requests`` at once; how many succeeded (``ok``) and how many were refused with each code."""
    counted: Counter[str] = Counter()
    for result in await asyncio.gather(*requests, return_exceptions=True):
        if isinstance(result, ServerError):
            counted[result.code] += 1
        elif isinstance(result, BaseException):
            raise result
        else:
            counted["ok"] += 1
    return counted


async def refusals(asked: Sequence[asyncio.Future[object]], code: str, *, at_least: int) -> bool:
    """Whether at least ``at_least`` of the requests ``asked`` were refused with ``code``."""
    errors = [future.exception() for future in asked if future.done() and not future.cancelled()]
    return sum(isinstance(error, ServerError) and error.code == code for error in errors) >= at_least


async def closing(clients: Sequence[RaceClient]) -> None:
    await asyncio.gather(*(client.close() for client in clients))


async def test_a_hundred_concurrent_wrong_logins_to_one_handle_check_at_most_ten_passwords(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    text = "[login]\nper_address = 0\noverall = 0\nregistrations_per_address = 0\nfree_failures_per_address = 0\nqueued_hashes = 200\n"
    (server,) = await spawn_servers(1, "--config", config_file(tmp_path, text), "--max-connections-per-address", "200")
    handle = new_handle("Tgt")
    await (await registered(server.url, handle)).close()
    guessers = [await from_address(server.url, "127.0.0.2", f"guesser{index}") for index in range(100)]
    try:
        counted = await outcomes([guesser.login(handle, f"guess {index}") for index, guesser in enumerate(guessers)])
        assert counted == {"bad_credentials": 10, "rate_limited": 90}  # 10 failures per handle and address
    finally:
        await closing(guessers)


async def test_concurrent_logins_from_one_address_stop_at_its_budget(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    text = "[login]\nper_address = 8\noverall = 0\nfree_failures_per_address = 0\nqueued_hashes = 200\n"
    (server,) = await spawn_servers(1, "--config", config_file(tmp_path, text))
    guessers = [await from_address(server.url, "127.0.0.3", f"guesser{index}") for index in range(40)]
    try:
        counted = await outcomes([guesser.login(new_handle("Who"), "wrong password") for guesser in guessers])
        assert counted == {"bad_credentials": 8, "rate_limited": 32}
        other = await from_address(server.url, "127.0.0.4", "elsewhere")  # another address has its own budget
        guessers.append(other)
        await other.register(new_handle("Own"), PASSWORD)
    finally:
        await closing(guessers)


async def test_concurrent_registrations_from_one_address_stop_at_its_limit(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    text = "[login]\nper_address = 0\nregistrations_per_address = 5\nqueued_hashes = 200\n"
    (server,) = await spawn_servers(1, "--config", config_file(tmp_path, text))
    clients = [await from_address(server.url, "127.0.0.5", f"new{index}") for index in range(30)]
    try:
        counted = await outcomes([client.register(new_handle("Reg"), PASSWORD) for client in clients])
        assert counted == {"ok": 5, "rate_limited": 25}
    finally:
        await closing(clients)


async def test_password_hashes_past_the_bounded_queue_are_refused_server_busy(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    text = "[login]\nper_address = 0\noverall = 0\nregistrations_per_address = 0\nfree_failures_per_address = 0\nconcurrent_hashes = 1\nqueued_hashes = 2\n"
    (server,) = await spawn_servers(1, "--config", config_file(tmp_path, text))
    guessers = [await from_address(server.url, "127.0.0.8", f"guesser{index}") for index in range(12)]
    try:
        counted = await outcomes([guesser.login(new_handle("Who"), "wrong password") for guesser in guessers])
        assert counted["server_busy"] >= 1 and counted["bad_credentials"] >= 3
        assert counted["bad_credentials"] + counted["server_busy"] == 12
        # A refused one was not counted as a failed login: the queue is free again and the right password works.
        handle = new_handle("Busy")
        await (await registered(server.url, handle)).close()
        await guessers[0].login(handle, PASSWORD)
    finally:
        await closing(guessers)


async def test_concurrent_creates_of_one_player_on_many_connections_open_three_races(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    (server,) = await spawn_servers(1)
    first = await player(server.url, "Many")
    assert first.session is not None
    clients = [first]
    try:
        for _ in range(19):  # the same player on 20 connections
            clients.append(await RaceClient.connect(server.url))
            await clients[-1].hello("Many", token=first.session.token)
        counted = await outcomes([client.create(RaceSettings()) for client in clients for _ in range(3)])
        assert counted == {"ok": 3, "too_many_open_races": 57}  # 3 open races per player
    finally:
        await closing(clients)


async def test_concurrent_creates_from_one_address_open_at_most_its_limit(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    (server,) = await spawn_servers(1, "--max-open-races-per-address", "10")
    clients = [await from_address(server.url, "127.0.0.6", f"Flood{index}") for index in range(30)]
    try:
        counted = await outcomes([client.create(RaceSettings()) for client in clients for _ in range(2)])
        assert counted == {"ok": 10, "too_many_open_races": 50}
        elsewhere = await from_address(server.url, "127.0.0.7", "Other")
        clients.append(elsewhere)
        await elsewhere.create(RaceSettings())
    finally:
        await closing(clients)


def solver_workers(server: ServerProcess) -> list[int]:
    """The process ids of a server's solver workers (``python -m server.services.race_analyst`` children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == server.process.pid and b"server.services.race_analyst" in command:
            found.append(int(entry.name))
    return found


async def test_a_solve_from_flood_of_one_address_never_refuses_another_address(spawn_servers: SpawnServers, tmp_path: Path) -> None:
    text = "[solve_from]\nseconds = 30.0\nper_session = 0\nper_address = 0\nmax_waiting = 4\nmax_waiting_per_address = 2\n"
    (server,) = await spawn_servers(1, "--config", config_file(tmp_path, text))
    race = await finished_race(server.url)
    flood = [await from_address(server.url, "127.0.0.31", f"Solver{index}") for index in range(6)]
    other = await from_address(server.url, "127.0.0.32", "Other")
    try:
        await other.solve_from(race.race_id, 0, 0)  # starts the process's solver worker
        (worker,) = solver_workers(server)
        os.kill(worker, signal.SIGSTOP)  # the worker holds every admitted request until it is continued
        try:
            asked = [asyncio.ensure_future(client.solve_from(race.race_id, 0, 1 + index)) for index, client in enumerate(flood)]
            # At least 2 of the 6 are refused whatever the shares (4 places in all); wait for them to be answered.
            await wait_until(lambda: refusals(asked, "rate_limited", at_least=2), timeout=30, what="the flood's first refusals")
            legitimate = asyncio.ensure_future(other.solve_from(race.race_id, 0, 7))  # the flood's address holds 2 places at most
        finally:
            os.kill(worker, signal.SIGCONT)
        assert (await legitimate).verdict == "solved"
        counted = await outcomes(asked)
        assert counted == {"ok": 2, "rate_limited": 4}  # 2 places per address
    finally:
        await closing([*flood, other, race.ann, race.bob])
