"""On a Redis Cluster of Redis >= 7 the race channels are sharded: each race's events are published in its own slot
(SPUBLISH) and every process subscribes on the node serving it (SSUBSCRIBE, one race per command), nothing on the
cluster-wide channels."""

from __future__ import annotations

import redis
from race_helpers import events_until, play, seated_race, server_config
from server_processes import ClusterUrl
from winning_lines import winning_deal

from server.app import RaceServer
from server.embedded_cluster import LocalCluster
from shared.protocol import Progress, RaceSettings


async def test_race_events_travel_on_the_sharded_channel_of_the_race_slot(redis7_cluster: LocalCluster) -> None:
    seed, line = winning_deal()
    async with RaceServer(server_config(ClusterUrl(redis7_cluster.url))) as server:
        race = await seated_race(server.url, RaceSettings(seed=seed, spectator_delay=0))
        try:
            await play(race.ann, race.race_id, line[:5])
            seen = await events_until(race.bob, lambda event: isinstance(event, Progress) and event.count == 5)
            assert [event.count for event in seen if isinstance(event, Progress)] == [1, 2, 3, 4, 5]
            channel = f"fgr:{{race:{race.race_id}}}:events"
            with redis.Redis(port=redis7_cluster.nodes[0].port) as any_node:
                slot = int(any_node.execute_command("CLUSTER", "KEYSLOT", channel))  # type: ignore[no-untyped-call]
            node = redis7_cluster.nodes[redis7_cluster.primary_of_slot(slot)]
            with redis.Redis(port=node.port) as owner:
                sharded = owner.execute_command("PUBSUB", "SHARDNUMSUB", channel)  # type: ignore[no-untyped-call]
                classic = owner.execute_command("PUBSUB", "NUMSUB", channel)  # type: ignore[no-untyped-call]
            assert int(sharded[1]) == 1 and int(classic[1]) == 0  # the server's one shard subscription, no classic one
        finally:
            await race.close()
