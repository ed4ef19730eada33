"""The local Redis Cluster the cluster tests run on: 3 primaries with a replica each, failing over when one dies."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.cluster import RedisCluster
from redis.crc import key_slot

from server.embedded_cluster import SLOTS, LocalCluster, slot_ranges
from server.embedded_redis import RedisUnavailable


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(Path(tmp_path_factory.mktemp("cluster"))) as running:
        yield running


def test_the_slots_are_split_over_the_primaries_without_gaps() -> None:
    ranges = slot_ranges(3)
    assert [len(r) for r in ranges] == [5461, 5461, 5462]
    assert sorted(slot for r in ranges for slot in r) == list(range(SLOTS))


def test_a_cluster_client_reaches_every_primary_from_any_one_node(cluster: LocalCluster) -> None:
    client = RedisCluster.from_url(cluster.urls[-1])
    try:
        primaries = {cluster.primary_of_slot(key_slot(f"fgr:{{race:{n}}}:state".encode())) for n in range(60)}
        assert len(primaries) == 3
        client.set("fgr:{race:a}:state", "x")
        assert client.get("fgr:{race:a}:state") == b"x"
    finally:
        client.close()


def test_a_killed_primary_is_replaced_by_its_replica(cluster: LocalCluster) -> None:
    slot = key_slot(b"fgr:{race:abc}:state")
    before = cluster.primary_of_slot(slot)
    victim = cluster.nodes[before]
    assert victim.process is not None
    victim.process.kill()
    victim.stop()
    deadline = time.monotonic() + 30
    after = before
    while after == before and time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            after = cluster.primary_of_slot(slot)
        except RedisUnavailable:
            after = before
    assert after != before
    assert cluster.nodes[after].process is not None  # a live replica took over
