"""Durability levels on one Redis with a replica: ``replica`` acknowledges a move once the replica has it and answers
``unavailable`` (outcome unknown: resend with the same move_id) while the replica lags; ``replica`` and ``fsync``
refuse a Redis that cannot give them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from race_helpers import seated_race, server_config
from server_processes import flowergarden

from client import ServerError
from server import metrics
from server.app import RaceServer
from server.embedded_redis import EmbeddedRedis
from server.store import connect_redis, keys
from server.store.durability import LAYOUT_VERSION, Durability, StoreNotReady, check_store
from shared.protocol import RaceSettings


@pytest.fixture
def primary_with_replica(tmp_path: Path) -> Iterator[tuple[EmbeddedRedis, EmbeddedRedis]]:
    primary = EmbeddedRedis(tmp_path / "primary", persistent=False)
    primary.start()
    replica = EmbeddedRedis(tmp_path / "replica", persistent=False, extra_args=("--replicaof", "127.0.0.1", str(primary.port)))
    try:
        replica.start()
        with redis.Redis(port=primary.port) as client:
            deadline = time.monotonic() + 20
            while client.info("replication").get("connected_slaves", 0) < 1:
                assert time.monotonic() < deadline, "the replica did not connect"
                time.sleep(0.05)
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()


async def test_a_move_is_acknowledged_once_the_replica_has_it_and_unavailable_while_it_lags(
    primary_with_replica: tuple[EmbeddedRedis, EmbeddedRedis],
) -> None:
    primary, replica = primary_with_replica
    config = server_config(primary.url, durability=Durability.REPLICA, durability_timeout_seconds=0.3)
    async with RaceServer(config) as server:
        race = await seated_race(server.url, RaceSettings(seed=15))
        try:
            assert (await race.ann.move(race.race_id, "AS b>f")).seq == 1
            assert replica.process is not None
            os.kill(replica.process.pid, signal.SIGSTOP)
            try:
                with pytest.raises(ServerError) as refused:
                    await race.ann.move(race.race_id, "2S b>f", seq=1, move_id="second")
                assert refused.value.code == "unavailable"
            finally:
                os.kill(replica.process.pid, signal.SIGCONT)
            # Resent with the same move id once the replica caught up: applied once, acknowledged now.
            assert (await race.ann.move(race.race_id, "2S b>f", seq=1, move_id="second")).seq == 2
            await asyncio.sleep(0.1)
            with redis.Redis(port=replica.port) as client:
                assert client.lrange(f"fgr:{{race:{race.race_id}}}:moves:0", 0, -1) == [b"AS b>f", b"2S b>f"]
        finally:
            await race.close()


async def test_the_degraded_mode_acknowledges_at_primary_only_while_no_replica_is_attached(
    primary_with_replica: tuple[EmbeddedRedis, EmbeddedRedis],
) -> None:
    """``durability_degraded``: a late replica still answers ``unavailable``; a primary left with none (a failover's
    promoted replica, until the old node rejoins) acknowledges at ``primary``, counted, instead of refusing every
    change (campaign: 10.6-12 s of ``unavailable`` per failover at ``replica``)."""
    primary, replica = primary_with_replica
    config = server_config(primary.url, durability=Durability.REPLICA, durability_timeout_seconds=0.3, durability_degraded=True)
    async with RaceServer(config) as server:
        race = await seated_race(server.url, RaceSettings(seed=15))
        try:
            assert (await race.ann.move(race.race_id, "AS b>f")).seq == 1
            assert replica.process is not None
            os.kill(replica.process.pid, signal.SIGSTOP)
            try:  # attached but silent: not degraded, the change is not known to be on a replica
                with pytest.raises(ServerError) as refused:
                    await race.ann.move(race.race_id, "2S b>f", seq=1, move_id="second")
                assert refused.value.code == "unavailable"
            finally:
                os.kill(replica.process.pid, signal.SIGCONT)
            replica.stop()
            with redis.Redis(port=primary.port) as client:
                while client.info("replication").get("connected_slaves", 0) > 0:
                    await asyncio.sleep(0.05)
            before = _degraded_acks()
            assert (await race.ann.move(race.race_id, "2S b>f", seq=1, move_id="second")).seq == 2
            assert (await race.bob.move(race.race_id, "AS b>f")).seq == 1
            assert _degraded_acks() == before + 2
        finally:
            await race.close()


def _degraded_acks() -> float:
    return metrics.REGISTRY.get_sample_value("flowergarden_degraded_acks_total") or 0.0


async def test_durability_degraded_lets_a_server_start_on_a_redis_without_a_replica(single_redis_url: str) -> None:
    client = connect_redis(single_redis_url)
    try:
        await check_store(client, Durability.REPLICA, degraded_ok=True)  # a warning, not a refusal
    finally:
        await client.aclose()


async def test_durability_replica_refuses_a_redis_without_a_replica(single_redis_url: str) -> None:
    client = connect_redis(single_redis_url)
    try:
        await check_store(client, Durability.PRIMARY)
        with pytest.raises(StoreNotReady, match="none connected"):
            await check_store(client, Durability.REPLICA)
    finally:
        await client.aclose()


async def test_durability_fsync_needs_appendfsync_always(single_redis_url: str, tmp_path: Path) -> None:
    client = connect_redis(single_redis_url)
    try:
        with pytest.raises(StoreNotReady, match="appendfsync always"):
            await check_store(client, Durability.FSYNC)  # the test Redis runs without an append-only file
    finally:
        await client.aclose()
    always = EmbeddedRedis(tmp_path / "fsync", persistent=True, extra_args=("--appendfsync", "always"))
    always.start()
    try:
        client = connect_redis(always.url)
        await check_store(client, Durability.FSYNC)
        await client.aclose()
    finally:
        always.stop()


async def test_a_store_written_by_a_newer_release_is_refused_at_start_and_the_current_one_is_recorded(redis_url: str) -> None:
    """Issue 27 "Upgrades": an older image rolled back (or started beside newer ones) on a store whose key layout a
    newer release changed must not serve it: it would misread the races. A database of the test's own."""
    url = redis_url.rsplit("/", 1)[0] + "/11"
    client = connect_redis(url, max_connections=2)
    try:
        await client.flushdb()
        async with RaceServer(server_config(url)):
            assert int(await client.get(keys.STORE_LAYOUT) or 0) == LAYOUT_VERSION  # the first process records it
        await client.set(keys.STORE_LAYOUT, LAYOUT_VERSION + 1)  # as a newer release leaves it
        serve = flowergarden("serve", "--redis", url, "--port", "0", "--seed-pool-target", "0")
        try:
            output, _ = await asyncio.to_thread(serve.communicate, timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.communicate()
            raise AssertionError("flowergarden serve served a store written by a newer release") from None
        assert serve.returncode == 1, output
        assert "store_not_ready" in output and f"key layout {LAYOUT_VERSION + 1}" in output, output
    finally:
        await client.flushdb()
        await client.aclose()
