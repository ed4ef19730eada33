"""A Redis Cluster primary down stops only its own races (issue 24 item 6).

With Redis' default ``cluster-require-full-coverage yes`` every node refuses every slot while one slot is unserved:
in the campaign a dead primary stopped every race for 1.4-1.7 s (until its replica was promoted), although
docs/STORAGE.md says the other primaries' races carry on. The embedded cluster runs with ``no``. Here a primary
with no replica is killed and the cluster marks it failed, so its slots stay unserved for good: a race on another
primary must go on being played.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import redis
from race_helpers import Race, play, seated_race, server_config
from server_processes import ClusterUrl
from winning_lines import winning_deal

from server.app import RaceServer
from server.embedded_cluster import LocalCluster
from shared.protocol import RaceSettings


def _marked_failed(cluster: LocalCluster, victim: int, witness: int) -> bool:
    """Whether node ``witness`` holds node ``victim`` as failed (FAIL, not only suspected): from then on, with full
    coverage required, it would refuse every slot."""
    with cluster.client(witness) as client:
        nodes = client.execute_command("CLUSTER", "NODES")
    text = nodes.decode() if isinstance(nodes, bytes) else str(nodes)
    port = f":{cluster.nodes[victim].port}@"
    return any(port in line and "fail" in line.split()[2].split(",") for line in text.splitlines())


async def _primary_of(server: RaceServer, cluster: LocalCluster, race_id: str) -> int:
    assert server.redis is not None
    slot = await server.redis.cluster_keyslot(f"fgr:{{race:{race_id}}}:state")  # type: ignore[union-attr]
    return await asyncio.to_thread(cluster.primary_of_slot, slot)


async def test_a_race_on_another_primary_keeps_moving_while_one_primary_is_down(tmp_path: Path) -> None:
    cluster = LocalCluster(tmp_path / "cluster", primaries=3, replicas_per_primary=0, node_timeout_ms=1000)
    cluster.start()
    races: list[Race] = []
    try:
        seed, line = winning_deal()
        async with RaceServer(server_config(ClusterUrl(cluster.url))) as server:
            primaries: dict[int, Race] = {}
            while len(primaries) < 2:  # two races on two different primaries (the race id decides the slot)
                race = await seated_race(server.url, RaceSettings(seed=seed))
                races.append(race)
                primaries.setdefault(await _primary_of(server, cluster, race.race_id), race)
            (victim, _doomed), (survivor, going_on) = primaries.items()
            await play(going_on.ann, going_on.race_id, line[:2])
            witness = next(index for index in range(cluster.primaries) if index not in (victim, survivor))
            node = cluster.nodes[victim]
            assert node.process is not None
            node.process.kill()
            node.process.wait()
            async with asyncio.timeout(30):
                while not await asyncio.to_thread(_marked_failed, cluster, victim, witness):
                    await asyncio.sleep(0.1)
            await play(going_on.ann, going_on.race_id, line[2:6])  # was: CLUSTERDOWN, answered unavailable
            await play(going_on.bob, going_on.race_id, line[:3])
            with cluster.client(survivor) as client:  # its slots are served although another primary's are not
                assert b"cluster_state:ok" in client.execute_command("CLUSTER", "INFO")
    finally:
        for race in races:
            try:
                await race.close()
            except (OSError, redis.RedisError):
                pass
        cluster.stop()
