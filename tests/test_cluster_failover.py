"""A Redis Cluster primary killed (SIGKILL) during live races: its replica takes over, the players see documented
errors or delays and then play on; at durability ``replica`` every acknowledged move is stored after the failover,
at ``primary`` the moves lost are counted (docs/STORAGE.md "Durability levels" reports them)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import redis7_server
from race_helpers import player
from server_processes import ClusterUrl, start_servers
from winning_lines import winning_deal

from client import RaceClient, ServerError
from server.embedded_cluster import LocalCluster
from server.store import RaceStore
from server.store.connection import connect_cluster
from shared.protocol import RaceSettings, Started

RACES = 4
PAUSE = 0.015
"""Between a player's moves: the races are still being played when the primary dies and after it is replaced."""
OUTCOME_UNKNOWN = {"unavailable", "internal_error"}
"""The codes that mean "resend the move with the same move_id" (docs/PROTOCOL.md)."""


@dataclass
class Outage:
    """Where the test is in the outage, as the players' tasks see it when they send and when they get an ack."""

    killed: bool = False
    """Set in the same step as the primary's SIGKILL: a move sent later cannot be on the dead primary already."""
    restarting: bool = False
    """Set just before the dead node is restarted (until then the promoted replica has no replica of its own)."""


@dataclass
class Seat:
    """One player's side of the test: what the server acknowledged, the errors seen, the longest wait for an ack."""

    client: RaceClient
    race: str
    slot: int
    acknowledged: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    longest_ack_wait: float = 0.0
    refused_at: str | None = None
    """The refusal that stopped this player (``out_of_sequence``: the store lost a move it had acknowledged)."""
    outage: Outage = field(default_factory=Outage)
    acked_during_restart: list[bool] = field(default_factory=list)
    """Per move sent after the kill: whether its ack came only once the dead node was being restarted."""


async def play_through(seat: Seat, moves: tuple[str, ...]) -> None:
    """Play ``moves``; a move answered with an outcome-unknown error is resent with the same move_id and seq."""
    for seq, move in enumerate(moves):
        move_id, sent = uuid.uuid4().hex, time.monotonic()
        sent_after_kill = seat.outage.killed
        while True:
            try:
                await seat.client.move(seat.race, move, seq=seq, move_id=move_id)
            except ServerError as error:
                seat.errors.append(error.code)
                if error.code not in OUTCOME_UNKNOWN:
                    seat.refused_at = error.code
                    return
                await asyncio.sleep(0.2)
                continue
            except TimeoutError:
                seat.errors.append("no reply")
                continue
            break
        seat.acknowledged.append(move)
        if sent_after_kill:
            seat.acked_during_restart.append(seat.outage.restarting)
        seat.longest_ack_wait = max(seat.longest_ack_wait, time.monotonic() - sent)
        await asyncio.sleep(PAUSE)


async def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def until_moved(cluster: LocalCluster, slot: int, victim: int, timeout: float = 30.0) -> None:
    """Until another node than ``victim`` serves ``slot``. Asked in a thread: a blocking client's connection retries
    to the dead node would stall this loop, and with it the players, who would then sleep through the outage."""
    async with asyncio.timeout(timeout):
        while await asyncio.to_thread(cluster.primary_of_slot, slot) == victim:
            await asyncio.sleep(0.05)


def lost_moves(acknowledged: list[str], stored: list[str]) -> int:
    """How many acknowledged moves are not in the store (it holds a prefix of what was acknowledged, plus perhaps a
    move whose ack never came)."""
    kept = 0
    while kept < min(len(acknowledged), len(stored)) and acknowledged[kept] == stored[kept]:
        kept += 1
    assert stored[:kept] == acknowledged[:kept] and len(stored) <= kept + 1, (acknowledged, stored)
    return len(acknowledged) - kept


@pytest.mark.parametrize(
    ("durability", "redis_version"), [("replica", "6.2"), ("primary", "6.2"), ("replica", "7")], ids=["replica", "primary", "replica-redis7"]
)
async def test_a_killed_primary_fails_over_during_live_races(durability: str, redis_version: str, tmp_path: Path) -> None:
    """On Redis 7 the race channels are sharded: the subscriptions on the dead node are lost with it and taken again
    on the promoted replica, the events in between read from the streams."""
    seed, line = winning_deal()
    moves = line[:-4]  # nobody clears: every race is still live when the moves end
    binary = redis7_server() if redis_version == "7" else None
    if redis_version == "7" and binary is None:
        pytest.fail("this test needs redis-server >= 7 on PATH (Debian: apt-get install -y redis-server)")
    with LocalCluster(tmp_path / "cluster", binary=binary) as cluster:
        servers = await start_servers(ClusterUrl(cluster.url), tmp_path, 2, ("--durability", durability))
        seats: list[Seat] = []
        try:
            for _ in range(RACES):
                ann, bob = await player(servers[0].url, "Ann"), await player(servers[1].url, "Bob")
                for client in (ann, bob):
                    client.request_timeout = 30.0
                race = (await ann.create(RaceSettings(seed=seed, spectator_delay=0, grace=120))).race.race
                await bob.join(race)
                await ann.wait_for(Started)
                await bob.wait_for(Started)
                seats += [Seat(ann, race, 0), Seat(bob, race, 1)]
            store = RaceStore(connect_cluster(cluster.url))
            slot = await store.redis.cluster_keyslot(f"fgr:{{race:{seats[0].race}}}:state")  # type: ignore[union-attr]
            outage = Outage()
            for seat in seats:
                seat.outage = outage
            players = [asyncio.create_task(play_through(seat, moves)) for seat in seats]
            await until(lambda: len(seats[0].acknowledged) >= 20)
            acknowledged_at_kill = len(seats[0].acknowledged)
            victim = await asyncio.to_thread(cluster.primary_of_slot, slot)
            node = cluster.nodes[victim]
            assert node.process is not None
            node.process.kill()
            outage.killed = True
            killed_at = time.monotonic()
            await until_moved(cluster, slot, victim)
            promoted_at = time.monotonic()
            assert cluster.nodes[await asyncio.to_thread(cluster.primary_of_slot, slot)].process is not None  # its replica was promoted
            # The operator restarts the dead node: it rejoins as the new primary's replica (until then, at durability
            # replica, that primary has no replica to confirm its writes and its races' moves are answered unavailable).
            outage.restarting = True
            await asyncio.to_thread(node.stop)
            await asyncio.to_thread(node.start)
            await asyncio.gather(*players)
            ended_at = time.monotonic()
            lost = {(seat.race, seat.slot): lost_moves(seat.acknowledged, await store.actions(seat.race, seat.slot)) for seat in seats}
            codes = {code for seat in seats for code in seat.errors}
            print(
                f"\nfailover at durability {durability} (Redis {redis_version}): {sum(len(seat.acknowledged) for seat in seats)} moves acknowledged, "
                f"{sum(lost.values())} of them lost; errors seen {sorted(codes)}; longest wait for an ack "
                f"{max(seat.longest_ack_wait for seat in seats):.2f} s; replica promoted {promoted_at - killed_at:.2f} s and play "
                f"ended {ended_at - killed_at:.2f} s after the kill (the victim race's first player had {acknowledged_at_kill} moves "
                f"acknowledged at the kill, its longest wait {seats[0].longest_ack_wait:.2f} s)"
            )
            if durability == "replica":
                # The race on the dead primary waited for the failover and the restart: no move of it sent after the
                # kill was acknowledged before its new primary had a replica again (its first one was sent, and waited).
                assert seats[0].acked_during_restart and all(seats[0].acked_during_restart), seats[0].acked_during_restart
                assert sum(lost.values()) == 0
                assert all(seat.refused_at is None and len(seat.acknowledged) == len(moves) for seat in seats)  # all resumed
                assert codes <= OUTCOME_UNKNOWN | {"no reply"}
            else:
                assert codes <= OUTCOME_UNKNOWN | {"no reply", "out_of_sequence"}  # out_of_sequence: a move was lost
                assert all(seat.refused_at in (None, "out_of_sequence") for seat in seats)
            await store.redis.aclose()
        finally:
            for seat in seats:
                await seat.client.close()
            for server in servers:
                server.stop()
