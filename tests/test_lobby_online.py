"""The lobby's "N online, M racing": each server process reports its own players and every process answers the same
total; a process that goes away stops counting."""

from __future__ import annotations

import asyncio

from conftest import SpawnServers
from race_helpers import player
from redis.asyncio import Redis

from client.race_client import RaceClient
from server.services.online import REPORT_SECONDS, STALE_MS
from server.store import keys
from shared.protocol import Countdown, RaceSettings

TIMEOUT = 4 * REPORT_SECONDS + STALE_MS / 1000 + 10
"""Long enough for every process to report twice and a dead one's line to go stale, on a busy machine."""


async def counted(client: RaceClient, online: int, racing: int) -> None:
    """Ask until ``client``'s server answers these totals (each process reports every few seconds)."""
    seen: tuple[int, int] | None = None
    try:
        async with asyncio.timeout(TIMEOUT):
            while seen != (online, racing):
                if seen is not None:
                    await asyncio.sleep(0.2)
                reply = await client.online()
                seen = (reply.online, reply.racing)
    except TimeoutError:
        raise AssertionError(f"expected {online} online and {racing} racing, the server said {seen}") from None


async def test_two_processes_count_everybody_online_and_racing_and_forget_a_dead_one(redis_url: str, spawn_servers: SpawnServers) -> None:
    first, second = await spawn_servers(2)
    redis = Redis.from_url(redis_url)
    ann = await player(first.url, "Ann")
    bob = await player(second.url, "Bob")
    cid = await player(second.url, "Cid")
    try:
        await redis.delete(keys.ONLINE)  # earlier tests' servers on this Redis stop counting; ours write again
        race = await ann.create(RaceSettings())
        for client in (ann, cid):  # a race waiting for its opponent is not racing yet
            await counted(client, online=3, racing=0)

        await bob.join(race.race.race)
        await ann.wait_for(Countdown)
        for client in (ann, cid):
            await counted(client, online=3, racing=2)

        await cid.close()
        await counted(ann, online=2, racing=2)

        second.stop()  # killed: its line is not taken out, it goes stale
        await counted(ann, online=1, racing=1)
    finally:
        for client in (ann, bob, cid):
            await client.close()
        await redis.aclose()
